//go:build cuda

package cuda

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// TestONNXAttentionFLOPS measures ONNX Attention prefill (12 query heads over 2 kv heads, head
// size 128, bfloat16, Qwen2.5-1.5B's shape) when CARVE_BENCH is set: the time per call is the
// wall time of replaying a captured CUDA graph of calls; the FLOPs are the two products' 4*D
// per (query, key) pair that the mask leaves (half of S x T, plus the diagonal, when causal;
// the padding mask's values are random and counted as keeping every key, and a float mask
// [S, S] as keeping all of them).
func TestONNXAttentionFLOPS(t *testing.T) {
	if os.Getenv("CARVE_BENCH") == "" {
		t.Skip("set CARVE_BENCH=1 to measure")
	}
	benchONNXAttention(t, "")
}

// a23Masking is how a benchmarked node masks its scores.
type a23Masking int

const (
	a23Full      a23Masking = iota // no mask
	a23IsCausal                    // is_causal
	a23FloatMask                   // a float mask [1, 1, S, S]
	a23CausalPad                   // is_causal and a float padding mask [B, 1, 1, S], as the fusion leaves them
)

func benchONNXAttention(t *testing.T, prefix string) {
	b := testBackend(t)
	s := testStream(t, b.dev)
	reg, err := Registry()
	require.NoError(t, err)
	bf := graph.BFloat16
	const nq, nkv, d = 12, 2, 128
	for _, sh := range [][2]int64{{1, 2048}, {8, 1024}, {1, 512}} {
		for _, m := range []a23Masking{a23IsCausal, a23CausalPad, a23Full, a23FloatMask} {
			bsz, seq := sh[0], sh[1]
			name := prefix + "ONNXAttention-bf16-b" + itoa(bsz) + "-s" + itoa(seq) +
				map[a23Masking]string{a23IsCausal: "-causal", a23CausalPad: "-causal-padding", a23Full: "", a23FloatMask: "-floatmask"}[m]
			t.Run(name, func(t *testing.T) {
				ins := []kernels.Value{v(bf, bsz, nq, seq, d), v(bf, bsz, nkv, seq, d), v(bf, bsz, nkv, seq, d)}
				causal := 0
				switch m {
				case a23IsCausal:
					causal = 1
				case a23FloatMask:
					ins = append(ins, v(bf, 1, 1, seq, seq))
				case a23CausalPad:
					causal = 1
					ins = append(ins, v(bf, bsz, 1, 1, seq))
				}
				c := kcase{name: name, node: nd("", "Attention", kernels.Attrs("is_causal", causal), ins, v(bf, bsz, nq, seq, d))}
				vals := caseInputs(c, 1)
				inst, err := reg.Select(&c.node, b.Target())
				require.NoError(t, err)
				in := make([]kernels.Tensor, len(ins))
				for i, vv := range c.node.Inputs {
					raw := encodeAny(vv.DType, vals[i])
					p := devBuf(t, b.dev, int64(len(raw)))
					require.NoError(t, b.CopyIn(p, raw, s))
					in[i] = kernels.Tensor{DType: vv.DType, Shape: vv.Shape}
					b.Bind(&in[i], p, int64(len(raw)))
				}
				out := []kernels.Tensor{outputTensor(t, b, s, bf, c.node.Outputs[0].Shape)}
				ws := workspace(t, b, inst)
				require.NoError(t, inst.Run(in, out, ws, s))
				require.NoError(t, b.dev.SynchronizeStream(s))
				const iters, reps = 10, 5
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
				per := time.Since(t0).Seconds() / (iters * reps)
				pairs := float64(seq * seq)
				if causal == 1 {
					pairs = float64(seq*(seq+1)) / 2
				}
				flops := 4 * d * float64(bsz*nq) * pairs
				t.Logf("BENCH %-40s tactic=%-9s %9.1f us %7.1f TFLOP/s", name, inst.Tactic(), per*1e6, flops/per/1e12)
			})
		}
	}
}
