//go:build cuda

package cuda

import (
	"testing"

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
	benchOnly(t)
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
				per, tactic, _ := timeNode(t, b, s, c, nil, false)
				pairs := float64(seq * seq)
				if causal == 1 {
					pairs = float64(seq*(seq+1)) / 2
				}
				flops := 4 * d * float64(bsz*nq) * pairs
				t.Logf("BENCH %-40s tactic=%-9s %9.1f us %7.1f TFLOP/s", name, tactic, per*1e6, flops/per/1e12)
			})
		}
	}
}

// TestONNXAttentionFLOPSFloat32 measures ONNX Attention in float32 when CARVE_BENCH is set, at
// ViT-B/16's shape (12 heads of 64 over 197 tokens, batches 32 and 128) and at causal prefill
// shapes of head sizes 64 and 128, as TestONNXAttentionFLOPS times them.
func TestONNXAttentionFLOPSFloat32(t *testing.T) {
	benchOnly(t)
	b := testBackend(t)
	s := testStream(t, b.dev)
	f := graph.Float32
	for _, sh := range []struct {
		b, h, s, d int64
		causal     int
	}{{32, 12, 197, 64, 0}, {128, 12, 197, 64, 0}, {8, 16, 1024, 64, 1}, {1, 12, 2048, 128, 1}, {8, 12, 256, 32, 0}} {
		name := "ONNXAttention-f32-b" + itoa(sh.b) + "-h" + itoa(sh.h) + "-s" + itoa(sh.s) + "-d" + itoa(sh.d) + map[int]string{0: "", 1: "-causal"}[sh.causal]
		t.Run(name, func(t *testing.T) {
			x := v(f, sh.b, sh.h, sh.s, sh.d)
			c := kcase{name: name, node: nd("", "Attention", kernels.Attrs("is_causal", sh.causal), []kernels.Value{x, x, x}, x)}
			per, tactic, _ := timeNode(t, b, s, c, nil, false)
			pairs := float64(sh.s * sh.s)
			if sh.causal == 1 {
				pairs = float64(sh.s*(sh.s+1)) / 2
			}
			flops := 4 * float64(sh.d*sh.b*sh.h) * pairs
			t.Logf("BENCH %-40s tactic=%-10s %9.1f us %7.1f TFLOP/s", name, tactic, per*1e6, flops/per/1e12)
		})
	}
}
