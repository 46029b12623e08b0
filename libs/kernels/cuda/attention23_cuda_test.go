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
