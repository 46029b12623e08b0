//go:build cuda

package cuda

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// TestBandwidth measures the hot kernels when CARVE_BENCH is set: the time per call is the
// wall time of replaying a captured CUDA graph of many calls, divided by the calls; the bytes
// are the ones each call must move at least (counted below), so bytes/time compares with the
// H200's memory bandwidth (about 4.1 TB/s measured by reading weights).
func TestBandwidth(t *testing.T) {
	benchOnly(t)
	b := testBackend(t)
	s := testStream(t, b.dev)
	bf := graph.BFloat16
	A := kernels.Attrs
	type bench struct {
		name  string
		c     kcase
		bytes int64
		share bool // GQA: past and present are one buffer
	}
	var benches []bench
	// the cost of one launch in a replayed graph, and a plain copy of 256 MiB for the achievable
	// bandwidth
	benches = append(benches, bench{name: "Launch-Add-1-element",
		c: kcase{node: nd("", "Add", A(), []kernels.Value{v(bf, 1), v(bf, 1)}, v(bf, 1))}, bytes: 6})
	benches = append(benches, bench{name: "Copy-bf16-128Mi-elements",
		c: kcase{node: nd("", "Identity", A(), []kernels.Value{v(bf, 128<<20)}, v(bf, 128<<20))}, bytes: 2 * 2 * 128 << 20})
	for _, sh := range [][2]int64{{8192, 1536}, {4096, 3584}} {
		rows, h := sh[0], sh[1]
		benches = append(benches, bench{name: "RMSNorm-bf16-" + itoa(rows) + "x" + itoa(h),
			c:     kcase{node: nd("", "SimplifiedLayerNormalization", A(), []kernels.Value{v(bf, rows, h), v(bf, h)}, v(bf, rows, h))},
			bytes: 2*rows*h*2 + h*2})
	}
	{
		const bb, ss, n, d, maxPos = 8, 2048, 12, 128, 4096
		benches = append(benches, bench{name: "Rotary-bf16-8x2048x12x128",
			c: kcase{node: nd(kernels.DomainMicrosoft, "RotaryEmbedding", A("num_heads", n),
				[]kernels.Value{v(bf, bb, ss, n*d), v(graph.Int64, bb, ss), v(bf, maxPos, d/2), v(bf, maxPos, d/2)}, v(bf, bb, ss, n*d)),
				gen: map[int]genFn{1: ints(0, maxPos)}},
			bytes: 2*bb*ss*n*d*2 + bb*ss*8})
	}
	for _, bsz := range []int64{1, 8, 32} {
		for _, ctx := range []int64{1024, 8192} {
			seq := make([]int, bsz)
			for i := range seq {
				seq[i] = int(ctx - 1)
			}
			c := gqaCase(gqaSpec{name: "decode", dt: bf, b: bsz, s: 1, p: ctx, tcap: ctx, nq: 12, nkv: 2, d: 128, seqlens: seq, present: true})
			benches = append(benches, bench{name: "GQA-decode-bf16-b" + itoa(bsz) + "-ctx" + itoa(ctx), c: c, share: true,
				bytes: 2*bsz*2*ctx*128*2 + 2*bsz*12*128*2})
		}
	}
	for _, kn := range [][2]int64{{1536, 8960}, {8960, 1536}} {
		k, n := kn[0], kn[1]
		c := nbitsCase(bf, 1, k, n, 4, 32, "", false)
		benches = append(benches, bench{name: "GEMV-q4-bf16-k" + itoa(k) + "-n" + itoa(n), c: c, bytes: n*k/2 + n*(k/32)*2 + k*2 + n*2})
	}
	// the prefill's small ops at (1, 2048) for a Qwen2.5-1.5B shape: the residual Add, the fused
	// attention's empty-row Where (carve_where_rows) and mean of V (the columns mode), the
	// positions' CumSum (carve_cumsum_scan); and a greedy step's ArgMax over the vocabulary
	// (carve_argmax_rows) at batch 1 and 8
	benches = append(benches,
		bench{name: "Add-bf16-2048x1536", c: kcase{node: nd("", "Add", A(), []kernels.Value{v(bf, 1, 2048, 1536), v(bf, 1, 2048, 1536)}, v(bf, 1, 2048, 1536))},
			bytes: 3 * 2048 * 1536 * 2},
		bench{name: "Where-rows-bf16-2x6x2048x128", c: kcase{node: nd("", "Where", A(),
			[]kernels.Value{v(graph.Bool, 1, 1, 1, 2048, 1), v(bf, 1, 2, 1, 1, 128), v(bf, 1, 2, 6, 2048, 128)}, v(bf, 1, 2, 6, 2048, 128))},
			bytes: 2 * 2 * 6 * 2048 * 128 * 2},
		bench{name: "ReduceMean-cols-bf16-2x2048x128", c: kcase{node: nd("", "ReduceMean", A("axes", []int64{2}),
			[]kernels.Value{v(bf, 1, 2, 2048, 128)}, v(bf, 1, 2, 1, 128))}, bytes: 2 * 2048 * 128 * 2},
		bench{name: "CumSum-scan-i64-1x2048", c: kcase{node: nd("", "CumSum", A(), []kernels.Value{v(graph.Int64, 1, 2048), constAxis(graph.Int64, 1)}, v(graph.Int64, 1, 2048)),
			gen: map[int]genFn{0: ints(0, 2), 1: vals(1)}}, bytes: 2 * 2048 * 8},
		bench{name: "ArgMax-bf16-1x151936", c: kcase{node: nd("", "ArgMax", A("axis", -1, "keepdims", 0), []kernels.Value{v(bf, 1, 1, 151936)}, v(graph.Int64, 1, 1))},
			bytes: 151936 * 2},
		bench{name: "ArgMax-bf16-8x151936", c: kcase{node: nd("", "ArgMax", A("axis", -1, "keepdims", 0), []kernels.Value{v(bf, 8, 1, 151936)}, v(graph.Int64, 8, 1))},
			bytes: 8 * 151936 * 2},
	)

	for _, bc := range benches {
		t.Run(bc.name, func(t *testing.T) {
			per, tactic, launches := timeNode(t, b, s, bc.c, nil, bc.share)
			t.Logf("BENCH %-36s tactic=%-9s launches=%d %9.1f us %8.3f MB %7.0f GB/s (%.0f%% of 4.1 TB/s)",
				bc.name, tactic, launches, per*1e6, float64(bc.bytes)/1e6, float64(bc.bytes)/per/1e9,
				100*float64(bc.bytes)/per/4.1e12)
		})
	}
}

// timeNode is the seconds per call of case c's node on inputs vals (caseInputs' when nil),
// replaying a captured CUDA graph of many calls, with its tactic and launches. share binds GQA's
// past inputs to its present outputs.
func timeNode(t *testing.T, b *Backend, s alloc.Stream, c kcase, vals [][]float64, share bool) (float64, string, int) {
	reg, err := Registry()
	require.NoError(t, err)
	if vals == nil {
		vals = caseInputs(c, 1)
	}
	inst, err := reg.Select(&c.node, b.Target())
	require.NoError(t, err)
	in, out := caseTensors(t, b, s, c, vals)
	if share {
		in[3].Addr, in[4].Addr = out[1].Addr, out[2].Addr
	}
	ws := workspace(t, b, inst)
	require.NoError(t, inst.Run(in, out, ws, s))
	require.NoError(t, b.dev.SynchronizeStream(s))
	const iters, reps = 50, 20
	require.NoError(t, b.dev.BeginCapture(s))
	for i := 0; i < iters; i++ {
		require.NoError(t, inst.Run(in, out, ws, s))
	}
	g, err := b.dev.EndCapture(s)
	require.NoError(t, err)
	defer b.dev.DestroyGraph(g)
	require.NoError(t, b.dev.LaunchGraph(g, s))
	require.NoError(t, b.dev.SynchronizeStream(s))
	t0 := time.Now()
	for r := 0; r < reps; r++ {
		require.NoError(t, b.dev.LaunchGraph(g, s))
	}
	require.NoError(t, b.dev.SynchronizeStream(s))
	return time.Since(t0).Seconds() / (iters * reps), inst.Tactic(), len(inst.(*instance).prog)
}

// TestDecodeLatency measures, when CARVE_BENCH is set, the decode step's attention node
// (GroupQueryAttention of Qwen2.5-1.5B's shape, bfloat16, past and present one buffer) and its
// norm rows at batch 1 and 8, context 1024 and 8192, as "BENCH GQA" and "BENCH NORM" lines in
// microseconds per node (all its launches). CARVE_BENCH_SWEEP=1 adds other chunk counts and
// block sizes of the attention core, the combine launched plainly, and the norms' row-walking
// kernel (carve_layer_norm).
func TestDecodeLatency(t *testing.T) {
	benchOnly(t)
	sweep := os.Getenv("CARVE_BENCH_SWEEP") != ""
	b := testBackend(t)
	s := testStream(t, b.dev)
	bf := graph.BFloat16
	A := kernels.Attrs
	type variant struct {
		name             string
		pdl              bool
		maxChunks, warps int64
	}
	variants := []variant{{name: "default", maxChunks: decodeMaxChunks, warps: decodeBlockWarps, pdl: decodePDL}}
	if sweep {
		variants = append(variants, variant{name: "no-pdl", maxChunks: decodeMaxChunks, warps: decodeBlockWarps})
		for _, c := range []int64{8, 16, 32, 64} {
			for _, w := range []int64{4, 8} {
				variants = append(variants, variant{name: "c" + itoa(c) + "-w" + itoa(w), maxChunks: c, warps: w, pdl: true})
			}
		}
	}
	defer func(p bool, m, w int64) {
		decodePDL, decodeMaxChunks, decodeBlockWarps = p, m, w
	}(decodePDL, decodeMaxChunks, decodeBlockWarps)
	for _, bsz := range []int64{1, 8} {
		for _, ctx := range []int64{1024, 8192} {
			seq := make([]int, bsz)
			for i := range seq {
				seq[i] = int(ctx - 1)
			}
			c := gqaCase(gqaSpec{name: "decode", dt: bf, b: bsz, s: 1, p: ctx, tcap: ctx, nq: 12, nkv: 2, d: 128, seqlens: seq,
				rotary: true, present: true})
			vals := caseInputs(c, 1)
			for _, vr := range variants {
				decodePDL, decodeMaxChunks, decodeBlockWarps = vr.pdl, vr.maxChunks, vr.warps
				per, tactic, launches := timeNode(t, b, s, c, vals, true)
				t.Logf("BENCH GQA decode b%d ctx%-5d %-12s tactic=%s launches=%d %7.2f us", bsz, ctx, vr.name, tactic, launches, per*1e6)
			}
		}
	}
	decodePDL, decodeMaxChunks, decodeBlockWarps = variants[0].pdl, variants[0].maxChunks, variants[0].warps
	const h = 1536
	norms := []struct {
		name string
		c    func(bsz int64) kcase
	}{
		{"SkipSimplifiedLayerNormalization", func(bsz int64) kcase {
			return kcase{node: nd(kernels.DomainMicrosoft, "SkipSimplifiedLayerNormalization", A("epsilon", float32(1e-6)),
				[]kernels.Value{v(bf, bsz, 1, h), v(bf, bsz, 1, h), v(bf, h)}, v(bf, bsz, 1, h), none, none, v(bf, bsz, 1, h))}
		}},
		{"SimplifiedLayerNormalization", func(bsz int64) kcase {
			return kcase{node: nd("", "SimplifiedLayerNormalization", A(), []kernels.Value{v(bf, bsz, 1, h), v(bf, h)}, v(bf, bsz, 1, h))}
		}},
		{"LayerNormalization", func(bsz int64) kcase {
			return kcase{node: nd("", "LayerNormalization", A(), []kernels.Value{v(bf, bsz, 1, h), v(bf, h), v(bf, h)}, v(bf, bsz, 1, h))}
		}},
		{"RMSNorm-prefill-8192", func(int64) kcase {
			return kcase{node: nd("", "SimplifiedLayerNormalization", A(), []kernels.Value{v(bf, 8192, h), v(bf, h)}, v(bf, 8192, h))}
		}},
	}
	defer func(o bool) { normRowsOff = o }(normRowsOff)
	for _, nm := range norms {
		for _, bsz := range []int64{1, 8} {
			if bsz > 1 && nm.name == "RMSNorm-prefill-8192" {
				continue
			}
			for _, off := range []bool{false, true} {
				if off && !sweep {
					continue
				}
				normRowsOff = off
				c := nm.c(bsz)
				per, _, _ := timeNode(t, b, s, c, nil, false)
				reg, err := Registry()
				require.NoError(t, err)
				inst, err := reg.Select(&c.node, b.Target())
				require.NoError(t, err)
				t.Logf("BENCH NORM %-34s b%d %-24s %7.2f us", nm.name, bsz, inst.(*instance).prog[0].kernel, per*1e6)
			}
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
