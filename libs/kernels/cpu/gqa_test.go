package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// ropeRef rotates vector x (head size d) at position p with rotary dim rot, computing the
// angles' cos and sin from caches.
func ropeRef(x []float64, cos, sin []float32, p, rot int, interleaved bool) []float64 {
	out := append([]float64(nil), x...)
	half := rot / 2
	for k := 0; k < half; k++ {
		c, s := float64(cos[p*half+k]), float64(sin[p*half+k])
		i0, i1 := k, k+half
		if interleaved {
			i0, i1 = 2*k, 2*k+1
		}
		out[i0] = x[i0]*c - x[i1]*s
		out[i1] = x[i1]*c + x[i0]*s
	}
	return out
}

func TestGroupQueryAttention(t *testing.T) {
	r := rng(t, 12)
	const nq, nkv, d = 4, 2, 8
	for _, tc := range []struct {
		name          string
		b, s, p, tcap int // p: past_key's length; tcap: present length
		seqlens       []int32
		rotary, inter bool
		rot           int
		packed        bool
		window        int
		softcap       float32
		tactic        string
		noPresent     bool
	}{
		{name: "prompt", b: 2, s: 5, p: 0, tcap: 5, seqlens: []int32{4, 4}, rotary: true, rot: d, tactic: "full"},
		{name: "decode", b: 2, s: 1, p: 5, tcap: 6, seqlens: []int32{5, 3}, rotary: true, rot: d, tactic: "full"},
		{name: "shared-buffer", b: 2, s: 1, p: 8, tcap: 8, seqlens: []int32{4, 6}, rotary: true, inter: true, rot: 4, tactic: "full"},
		{name: "subsequent-prompt", b: 1, s: 3, p: 4, tcap: 7, seqlens: []int32{6}, tactic: "full"},
		{name: "packed-window-softcap", b: 1, s: 6, p: 0, tcap: 6, seqlens: []int32{5}, packed: true, window: 2, softcap: 5, tactic: "full"},
		{name: "no-present", b: 1, s: 3, p: 2, tcap: 5, seqlens: []int32{4}, rotary: true, rot: d, noPresent: true, tactic: "full"},
		{name: "split-kv", b: 1, s: 1, p: 600, tcap: 601, seqlens: []int32{600}, rotary: true, rot: d, tactic: "split-kv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q, k, v kernels.Tensor
			in := make([]kernels.Tensor, 9)
			if tc.packed {
				q = randF32(r, int64(tc.b), int64(tc.s), (nq+2*nkv)*d)
				in[0] = q
			} else {
				q, k, v = randF32(r, int64(tc.b), int64(tc.s), nq*d), randF32(r, int64(tc.b), int64(tc.s), nkv*d), randF32(r, int64(tc.b), int64(tc.s), nkv*d)
				in[0], in[1], in[2] = q, k, v
			}
			pk, pv := randF32(r, int64(tc.b), nkv, int64(tc.p), d), randF32(r, int64(tc.b), nkv, int64(tc.p), d)
			in[3], in[4] = pk, pv
			total := int32(0)
			for _, sl := range tc.seqlens {
				total = max(total, sl+1)
			}
			in[5] = i32([]int64{int64(tc.b)}, tc.seqlens)
			in[6] = i32(nil, []int32{total})
			var cos, sin []float32
			if tc.rotary {
				const maxPos = 1024
				cos, sin = make([]float32, maxPos*tc.rot/2), make([]float32, maxPos*tc.rot/2)
				for p := 0; p < maxPos; p++ {
					for i := 0; i < tc.rot/2; i++ {
						a := float64(p) / math.Pow(10000, float64(2*i)/float64(tc.rot))
						cos[p*tc.rot/2+i], sin[p*tc.rot/2+i] = float32(math.Cos(a)), float32(math.Sin(a))
					}
				}
				in[7], in[8] = f32([]int64{maxPos, int64(tc.rot / 2)}, cos), f32([]int64{maxPos, int64(tc.rot / 2)}, sin)
			} else {
				in = in[:7]
			}
			outs := []kernels.Value{{DType: graph.Float32, Shape: []int64{int64(tc.b), int64(tc.s), nq * d}}}
			pres := kernels.Value{DType: graph.Float32, Shape: []int64{int64(tc.b), nkv, int64(tc.tcap), d}}
			if !tc.noPresent {
				outs = append(outs, pres, pres)
			}
			rot, inter := 0, 0
			if tc.rotary {
				rot = 1
			}
			if tc.inter {
				inter = 1
			}
			window := tc.window
			if window == 0 {
				window = -1
			}
			attrs := kernels.Attrs("num_heads", nq, "kv_num_heads", nkv, "do_rotary", rot, "rotary_interleaved", inter,
				"local_window_size", window, "softcap", tc.softcap)
			n := msNode("GroupQueryAttention", attrs, in, outs...)
			got, inst := run(t, n, in...)
			require.Equal(t, tc.tactic, inst.Tactic())

			first := int32(tc.s) == total
			pastOf := func(b int) int {
				if first {
					return 0
				}
				return int(tc.seqlens[b]) + 1 - tc.s
			}
			width := nq * d
			qa := bshAt(q, tc.s, width, 0, d)
			var ka, va func(b, h, i, x int) float64
			if tc.packed {
				width = (nq + 2*nkv) * d
				qa = bshAt(q, tc.s, width, 0, d)
				ka, va = bshAt(q, tc.s, width, nq*d, d), bshAt(q, tc.s, width, (nq+nkv)*d, d)
			} else {
				ka, va = bshAt(k, tc.s, nkv*d, 0, d), bshAt(v, tc.s, nkv*d, 0, d)
			}
			vec := func(f func(b, h, i, x int) float64, b, h, i int) []float64 {
				out := make([]float64, d)
				for x := range out {
					out[x] = f(b, h, i, x)
				}
				return out
			}
			rotated := func(f func(b, h, i, x int) float64) func(b, h, i, x int) float64 {
				if !tc.rotary {
					return f
				}
				return func(b, h, i, x int) float64 {
					return ropeRef(vec(f, b, h, i), cos, sin, pastOf(b)+i, tc.rot, tc.inter)[x]
				}
			}
			qr, kr := rotated(qa), rotated(ka)
			// the history of batch b: past rows [0, past_b), then the new ones
			hist := func(past kernels.Tensor, cur func(b, h, i, x int) float64) func(b, h, j, x int) float64 {
				return func(b, h, j, x int) float64 {
					if pb := pastOf(b); j < pb {
						return float64(past.Float32s()[((b*nkv+h)*tc.p+j)*d+x])
					} else {
						return cur(b, h, j-pb, x)
					}
				}
			}
			ref := attnRef{b: tc.b, s: tc.s, n: nq, nkv: nkv, t: tc.tcap, d: d, dv: d, q: qr, k: hist(pk, kr), v: hist(pv, va),
				scale: 1 / math.Sqrt(d), softcap: float64(tc.softcap)}
			ref.allowed = func(b, i, j int) bool {
				hi := pastOf(b) + i + 1
				ok := j < hi && j <= int(tc.seqlens[b])
				if tc.window > 0 && hi > tc.window {
					ok = ok && j >= hi-tc.window
				}
				return ok
			}
			closeTo(t, ref.run(), got[0].Float32s(), 1e-5)
			if !tc.noPresent {
				for b := 0; b < tc.b; b++ {
					for h := 0; h < nkv; h++ {
						for j := 0; j <= int(tc.seqlens[b]); j++ {
							for x := 0; x < d; x++ {
								require.InDelta(t, ref.k(b, h, j, x), got[1].Float32s()[((b*nkv+h)*tc.tcap+j)*d+x], 1e-5, "present_key b%d h%d j%d", b, h, j)
								require.InDelta(t, ref.v(b, h, j, x), got[2].Float32s()[((b*nkv+h)*tc.tcap+j)*d+x], 1e-6)
							}
						}
					}
				}
			}
			requireRefusesSmallWorkspace(t, n, in...)
		})
	}
}

func TestGroupQueryAttentionRejectsBadLengths(t *testing.T) {
	r := rng(t, 13)
	q, k, v := randF32(r, 1, 1, 16), randF32(r, 1, 1, 8), randF32(r, 1, 1, 8)
	pk, pv := randF32(r, 1, 1, 3, 8), randF32(r, 1, 1, 3, 8)
	in := []kernels.Tensor{q, k, v, pk, pv, i32([]int64{1}, []int32{9}), i32(nil, []int32{10})}
	pres := kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 4, 8}}
	n := msNode("GroupQueryAttention", kernels.Attrs("num_heads", 2, "kv_num_heads", 1), in, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 16}}, pres, pres)
	inst, err := registry.Select(n, dev)
	require.NoError(t, err)
	out := []kernels.Tensor{kernels.MustTensor(graph.Float32, 1, 1, 16), kernels.MustTensor(graph.Float32, 1, 1, 4, 8), kernels.MustTensor(graph.Float32, 1, 1, 4, 8)}
	sentinel(out)
	size, _ := inst.Recipe().Size()
	reg, keep := region(size)
	var re *kernels.RunError
	require.ErrorAs(t, kernels.Execute(inst, in, out, reg, 0), &re)
	untouched(t, out)
	_ = keep[0]
}
