package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// attnRef is scaled dot-product attention in float64, written plainly: q(b, n, i, x),
// k(b, h, j, x) and v(b, h, j, x) read the operands (h = n / group), allowed excludes keys, and
// add returns what is added to a score. The result is [B, S, N, Dv].
type attnRef struct {
	b, s, n, nkv, t, d, dv int
	q, k, v                func(b, h, i, x int) float64
	allowed                func(b, i, j int) bool
	add                    func(b, n, i, j int) float64
	scale, softcap         float64
}

func (r attnRef) run() []float32 {
	out := make([]float32, r.b*r.s*r.n*r.dv)
	for b := 0; b < r.b; b++ {
		for n := 0; n < r.n; n++ {
			h := n / (r.n / r.nkv)
			for i := 0; i < r.s; i++ {
				sc := make([]float64, r.t)
				m := math.Inf(-1)
				for j := 0; j < r.t; j++ {
					if r.allowed != nil && !r.allowed(b, i, j) {
						sc[j] = math.Inf(-1)
						continue
					}
					var dot float64
					for x := 0; x < r.d; x++ {
						dot += r.q(b, n, i, x) * r.k(b, h, j, x)
					}
					s := dot * r.scale
					if r.softcap > 0 {
						s = r.softcap * math.Tanh(s/r.softcap)
					}
					if r.add != nil {
						s += r.add(b, n, i, j)
					}
					sc[j] = s
					m = math.Max(m, s)
				}
				var sum float64
				for j := range sc {
					if !math.IsInf(sc[j], -1) {
						sc[j] = math.Exp(sc[j] - m)
						sum += sc[j]
					} else {
						sc[j] = 0
					}
				}
				for x := 0; x < r.dv; x++ {
					var o float64
					for j := range sc {
						if sc[j] != 0 {
							o += sc[j] / sum * r.v(b, h, j, x)
						}
					}
					out[((b*r.s+i)*r.n+n)*r.dv+x] = float32(o)
				}
			}
		}
	}
	return out
}

// bshAt reads element (b, head h, pos i, x) of a [B, S, width] tensor whose heads of width d
// start at column off.
func bshAt(t kernels.Tensor, s, width, off, d int) func(b, h, i, x int) float64 {
	return func(b, h, i, x int) float64 { return float64(t.Float32s()[(b*s+i)*width+off+h*d+x]) }
}

func bnshAt(t kernels.Tensor, n, s, d int) func(b, h, i, x int) float64 {
	return func(b, h, i, x int) float64 { return float64(t.Float32s()[((b*n+h)*s+i)*d+x]) }
}

// concatAt reads positions [0, p) from past and [p, ...) from cur.
func concatAt(past, cur func(b, h, i, x int) float64, p int) func(b, h, i, x int) float64 {
	return func(b, h, i, x int) float64 {
		if i < p {
			return past(b, h, i, x)
		}
		return cur(b, h, i-p, x)
	}
}

func msNode(op string, attrs graph.Attributes, in []kernels.Tensor, out ...kernels.Value) *kernels.Node {
	n := node(op, attrs, in, out...)
	n.Domain = kernels.DomainMicrosoft
	return n
}

func TestMultiHeadAttention(t *testing.T) {
	r := rng(t, 9)
	const nh = 2
	for _, tc := range []struct {
		name              string
		b, s, l, p, d, dv int
		mask              string // "", "raw2", "lengths", "raw3"
		causal, bias, ab  bool
		tactic            string
	}{
		{name: "self", b: 2, s: 5, l: 5, d: 4, dv: 4, tactic: "full"},
		{name: "causal-mask-bias", b: 2, s: 5, l: 5, d: 4, dv: 3, mask: "raw2", causal: true, ab: true, tactic: "full"},
		{name: "cross-lengths", b: 3, s: 2, l: 7, d: 3, dv: 5, mask: "lengths", tactic: "full"},
		{name: "past", b: 2, s: 3, l: 3, p: 4, d: 4, dv: 4, causal: true, mask: "raw3", tactic: "full"},
		{name: "qkv-bias", b: 1, s: 4, l: 6, d: 2, dv: 2, bias: true, tactic: "full"},
		{name: "split-kv", b: 2, s: 2, l: 600, d: 4, dv: 4, mask: "raw2", ab: true, tactic: "split-kv"},
		{name: "split-kv-past", b: 1, s: 1, l: 1, p: 700, d: 8, dv: 8, causal: true, tactic: "split-kv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			T := tc.p + tc.l
			q, k, v := randF32(r, int64(tc.b), int64(tc.s), nh*int64(tc.d)), randF32(r, int64(tc.b), int64(tc.l), nh*int64(tc.d)), randF32(r, int64(tc.b), int64(tc.l), nh*int64(tc.dv))
			in := []kernels.Tensor{q, k, v, {}, {}, {}, {}, {}}
			var bias kernels.Tensor
			if tc.bias {
				bias = randF32(r, int64(nh*(2*tc.d+tc.dv)))
				in[3] = bias
			}
			var mask []int32
			switch tc.mask {
			case "raw2":
				mask = make([]int32, tc.b*T)
				for i := range mask {
					mask[i] = int32(r.IntN(4) % 3 % 2) // mostly ones
					if i%T == 0 {
						mask[i] = 1
					}
				}
				in[4] = i32([]int64{int64(tc.b), int64(T)}, mask)
			case "raw3":
				mask = make([]int32, tc.b*tc.s*T)
				for i := range mask {
					mask[i] = int32(r.IntN(2))
				}
				in[4] = i32([]int64{int64(tc.b), int64(tc.s), int64(T)}, mask)
			case "lengths":
				mask = make([]int32, tc.b)
				for i := range mask {
					mask[i] = int32(1 + r.IntN(T))
				}
				in[4] = i32([]int64{int64(tc.b)}, mask)
			}
			var ab kernels.Tensor
			if tc.ab {
				ab = randF32(r, 1, nh, int64(tc.s), int64(T))
				in[5] = ab
			}
			var pk, pv kernels.Tensor
			if tc.p > 0 {
				pk, pv = randF32(r, int64(tc.b), nh, int64(tc.p), int64(tc.d)), randF32(r, int64(tc.b), nh, int64(tc.p), int64(tc.dv))
				in[6], in[7] = pk, pv
			}
			for len(in) > 0 && in[len(in)-1].DType == graph.Undefined {
				in = in[:len(in)-1]
			}
			outs := []kernels.Value{{DType: graph.Float32, Shape: []int64{int64(tc.b), int64(tc.s), nh * int64(tc.dv)}}}
			if tc.p > 0 {
				outs = append(outs, kernels.Value{DType: graph.Float32, Shape: []int64{int64(tc.b), nh, int64(T), int64(tc.d)}},
					kernels.Value{DType: graph.Float32, Shape: []int64{int64(tc.b), nh, int64(T), int64(tc.dv)}})
			}
			causal := 0
			if tc.causal {
				causal = 1
			}
			n := msNode("MultiHeadAttention", kernels.Attrs("num_heads", nh, "unidirectional", causal), in, outs...)
			got, inst := run(t, n, in...)
			require.Equal(t, tc.tactic, inst.Tactic())

			qa := bshAt(q, tc.s, nh*tc.d, 0, tc.d)
			ka := bshAt(k, tc.l, nh*tc.d, 0, tc.d)
			va := bshAt(v, tc.l, nh*tc.dv, 0, tc.dv)
			if tc.bias {
				bq, bk, bv := qa, ka, va
				bb := bias.Float32s()
				qa = func(b, h, i, x int) float64 { return bq(b, h, i, x) + float64(bb[h*tc.d+x]) }
				ka = func(b, h, i, x int) float64 { return bk(b, h, i, x) + float64(bb[nh*tc.d+h*tc.d+x]) }
				va = func(b, h, i, x int) float64 { return bv(b, h, i, x) + float64(bb[2*nh*tc.d+h*tc.dv+x]) }
			}
			if tc.p > 0 {
				ka = concatAt(bnshAt(pk, nh, tc.p, tc.d), ka, tc.p)
				va = concatAt(bnshAt(pv, nh, tc.p, tc.dv), va, tc.p)
			}
			ref := attnRef{b: tc.b, s: tc.s, n: nh, nkv: nh, t: T, d: tc.d, dv: tc.dv, q: qa, k: ka, v: va, scale: 1 / math.Sqrt(float64(tc.d))}
			ref.add = func(b, n, i, j int) float64 {
				var a float64
				if tc.causal && j > tc.p+i {
					a -= 10000
				}
				switch tc.mask {
				case "raw2":
					if mask[b*T+j] == 0 {
						a -= 10000
					}
				case "raw3":
					if mask[(b*tc.s+i)*T+j] == 0 {
						a -= 10000
					}
				case "lengths":
					if j >= int(mask[b]) {
						a -= 10000
					}
				}
				if tc.ab {
					a += float64(ab.Float32s()[(n*tc.s+i)*T+j])
				}
				return a
			}
			closeTo(t, ref.run(), got[0].Float32s(), 1e-5)
			if tc.p > 0 {
				for b := 0; b < tc.b; b++ {
					for h := 0; h < nh; h++ {
						for j := 0; j < T; j++ {
							for x := 0; x < tc.d; x++ {
								require.InDelta(t, ka(b, h, j, x), got[1].Float32s()[((b*nh+h)*T+j)*tc.d+x], 1e-6)
							}
						}
					}
				}
			}
			requireRefusesSmallWorkspace(t, n, in...)
		})
	}
}

func TestMultiHeadAttentionLayouts(t *testing.T) {
	r := rng(t, 10)
	const nh, b, s, d = 2, 2, 3, 4
	q := randF32(r, b, s, nh*d)
	out := kernels.Value{DType: graph.Float32, Shape: []int64{b, s, nh * d}}
	scale := 1 / math.Sqrt(d)
	t.Run("packed-qkv", func(t *testing.T) {
		qkv := randF32(r, b, s, nh, 3, d)
		at := func(off int) func(bb, h, i, x int) float64 {
			return func(bb, h, i, x int) float64 { return float64(qkv.Float32s()[(((bb*s+i)*nh+h)*3+off)*d+x]) }
		}
		got := out1(t, msNode("MultiHeadAttention", kernels.Attrs("num_heads", nh), []kernels.Tensor{qkv}, out), qkv)
		ref := attnRef{b: b, s: s, n: nh, nkv: nh, t: s, d: d, dv: d, q: at(0), k: at(1), v: at(2), scale: scale}
		closeTo(t, ref.run(), got.Float32s(), 1e-5)
	})
	t.Run("packed-kv", func(t *testing.T) {
		kv := randF32(r, b, 5, nh, 2, d)
		at := func(off int) func(bb, h, i, x int) float64 {
			return func(bb, h, i, x int) float64 { return float64(kv.Float32s()[(((bb*5+i)*nh+h)*2+off)*d+x]) }
		}
		got := out1(t, msNode("MultiHeadAttention", kernels.Attrs("num_heads", nh), []kernels.Tensor{q, kv}, out), q, kv)
		ref := attnRef{b: b, s: s, n: nh, nkv: nh, t: 5, d: d, dv: d, q: bshAt(q, s, nh*d, 0, d), k: at(0), v: at(1), scale: scale}
		closeTo(t, ref.run(), got.Float32s(), 1e-5)
	})
	t.Run("bnsh-kv", func(t *testing.T) {
		k, v := randF32(r, b, nh, 6, d), randF32(r, b, nh, 6, d)
		got := out1(t, msNode("MultiHeadAttention", kernels.Attrs("num_heads", nh, "scale", float32(0.3)), []kernels.Tensor{q, k, v}, out), q, k, v)
		ref := attnRef{b: b, s: s, n: nh, nkv: nh, t: 6, d: d, dv: d, q: bshAt(q, s, nh*d, 0, d), k: bnshAt(k, nh, 6, d), v: bnshAt(v, nh, 6, d), scale: 0.3}
		closeTo(t, ref.run(), got.Float32s(), 1e-5)
	})
}

func TestAttention(t *testing.T) {
	r := rng(t, 11)
	const nh, hin = 2, 6
	for _, tc := range []struct {
		b, s, p, hq, hv int
		mask            string
		causal          bool
	}{
		{2, 4, 0, 8, 8, "raw2", false},
		{2, 4, 0, 8, 6, "lengths", true},
		{1, 3, 5, 8, 8, "", true},
		{3, 2, 0, 4, 4, "startend", false},
		{1, 2, 600, 4, 4, "", true},
	} {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			T := tc.p + tc.s
			x := randF32(r, int64(tc.b), int64(tc.s), hin)
			tot := 2*tc.hq + tc.hv
			w, bias := randF32(r, hin, int64(tot)), randF32(r, int64(tot))
			in := []kernels.Tensor{x, w, bias, {}, {}}
			var mask []int32
			switch tc.mask {
			case "raw2":
				mask = make([]int32, tc.b*T)
				for i := range mask {
					mask[i] = int32(r.IntN(2))
				}
				in[3] = i32([]int64{int64(tc.b), int64(T)}, mask)
			case "lengths":
				mask = []int32{2, 4}
				in[3] = i32([]int64{int64(tc.b)}, mask)
			case "startend":
				mask = []int32{2, 1, 2, 0, 1, 1}
				in[3] = i32([]int64{2 * int64(tc.b)}, mask)
			}
			var past kernels.Tensor
			outs := []kernels.Value{{DType: graph.Float32, Shape: []int64{int64(tc.b), int64(tc.s), int64(tc.hv)}}}
			if tc.p > 0 {
				past = randF32(r, 2, int64(tc.b), nh, int64(tc.p), int64(tc.hq/nh))
				in[4] = past
				outs = append(outs, kernels.Value{DType: graph.Float32, Shape: []int64{2, int64(tc.b), nh, int64(T), int64(tc.hq / nh)}})
			}
			for in[len(in)-1].DType == graph.Undefined {
				in = in[:len(in)-1]
			}
			causal := 0
			if tc.causal {
				causal = 1
			}
			attrs := kernels.Attrs("num_heads", nh, "unidirectional", causal, "qkv_hidden_sizes", []int64{int64(tc.hq), int64(tc.hq), int64(tc.hv)})
			n := msNode("Attention", attrs, in, outs...)
			got, inst := run(t, n, in...)
			// the projection, by hand
			proj := make([]float32, tc.b*tc.s*tot)
			for i := 0; i < tc.b*tc.s; i++ {
				for j := 0; j < tot; j++ {
					s := float64(bias.Float32s()[j])
					for l := 0; l < hin; l++ {
						s += float64(x.Float32s()[i*hin+l]) * float64(w.Float32s()[l*tot+j])
					}
					proj[i*tot+j] = float32(s)
				}
			}
			pt := f32([]int64{int64(tc.b), int64(tc.s), int64(tot)}, proj)
			d, dv := tc.hq/nh, tc.hv/nh
			qa, ka, va := bshAt(pt, tc.s, tot, 0, d), bshAt(pt, tc.s, tot, tc.hq, d), bshAt(pt, tc.s, tot, 2*tc.hq, dv)
			if tc.p > 0 {
				half := kernels.Tensor{DType: graph.Float32, Data: past.Data[:len(past.Data)/2]}
				rest := kernels.Tensor{DType: graph.Float32, Data: past.Data[len(past.Data)/2:]}
				ka = concatAt(bnshAt(half, nh, tc.p, d), ka, tc.p)
				va = concatAt(bnshAt(rest, nh, tc.p, d), va, tc.p)
			}
			ref := attnRef{b: tc.b, s: tc.s, n: nh, nkv: nh, t: T, d: d, dv: dv, q: qa, k: ka, v: va, scale: 1 / math.Sqrt(float64(d))}
			ref.add = func(b, n, i, j int) float64 {
				var a float64
				if tc.causal && j > tc.p+i {
					a -= 10000
				}
				switch tc.mask {
				case "raw2":
					if mask[b*T+j] == 0 {
						a -= 10000
					}
				case "lengths":
					if j >= int(mask[b]) {
						a -= 10000
					}
				case "startend":
					if j >= int(mask[b]) || j < int(mask[tc.b+b]) {
						a -= 10000
					}
				}
				return a
			}
			closeTo(t, ref.run(), got[0].Float32s(), 1e-4)
			requireRefusesSmallWorkspace(t, n, in...)
			_ = inst
		})
	}
}
