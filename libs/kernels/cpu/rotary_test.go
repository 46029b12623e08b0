package cpu

import (
	"cmp"
	"math"
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"

	"github.com/stretchr/testify/require"
)

func TestRotaryEmbedding(t *testing.T) {
	r := rng(t, 15)
	const b, s, nh, maxPos = 2, 3, 2, 16
	for _, tc := range []struct {
		name        string
		d           int // head size; 8 when 0
		layout4     bool
		interleaved bool
		rot         int
		scalarPos   bool
		onnx        bool
	}{
		{name: "bsh", rot: 8},
		{name: "bnsh-interleaved", layout4: true, interleaved: true, rot: 8},
		{name: "partial", rot: 4},
		{name: "offset", scalarPos: true, rot: 8},
		{name: "onnx23", onnx: true, rot: 8},
		// Heads of 8 lanes and more a half: the vectorised float32 path, with tails.
		{name: "bsh-d16", d: 16, rot: 16},
		{name: "bnsh-d40", d: 40, layout4: true, rot: 40},
		{name: "partial-d40", d: 40, rot: 32},
		{name: "bnsh-partial-d40", d: 40, layout4: true, rot: 18},
		{name: "offset-bnsh-d16", d: 16, layout4: true, scalarPos: true, rot: 16},
		{name: "onnx23-d16", d: 16, onnx: true, rot: 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := cmp.Or(tc.d, 8)
			cos, sin := make([]float32, maxPos*tc.rot/2), make([]float32, maxPos*tc.rot/2)
			for i := range cos {
				a := r.Float64() * math.Pi
				cos[i], sin[i] = float32(math.Cos(a)), float32(math.Sin(a))
			}
			cs := f32([]int64{maxPos, int64(tc.rot / 2)}, cos)
			sn := f32([]int64{maxPos, int64(tc.rot / 2)}, sin)
			var x kernels.Tensor
			if tc.layout4 {
				x = randF32(r, b, nh, s, int64(d))
			} else {
				x = randF32(r, b, s, int64(nh*d))
			}
			pos := make([]int64, b*s)
			for i := range pos {
				pos[i] = int64(r.IntN(maxPos))
			}
			pt := i64([]int64{b, s}, pos)
			if tc.scalarPos {
				pt = i64([]int64{1}, []int64{5})
				for bb := 0; bb < b; bb++ {
					for i := 0; i < s; i++ {
						pos[bb*s+i] = int64(5 + i)
					}
				}
			}
			attrs := kernels.Attrs("interleaved", boolToInt(tc.interleaved), "num_heads", nh, "rotary_embedding_dim", tc.rot)
			var n *kernels.Node
			in := []kernels.Tensor{x, pt, cs, sn}
			if tc.onnx {
				in = []kernels.Tensor{x, cs, sn, pt}
				n = node("RotaryEmbedding", attrs, in, value(x))
			} else {
				n = msNode("RotaryEmbedding", attrs, in, value(x))
			}
			got := out1(t, n, in...)
			want := make([]float32, len(x.Float32s()))
			for bb := 0; bb < b; bb++ {
				for h := 0; h < nh; h++ {
					for i := 0; i < s; i++ {
						o := ((bb*s+i)*nh + h) * d
						if tc.layout4 {
							o = ((bb*nh+h)*s + i) * d
						}
						vec := make([]float64, d)
						for k := range vec {
							vec[k] = float64(x.Float32s()[o+k])
						}
						rv := ropeRef(vec, cos, sin, int(pos[bb*s+i]), tc.rot, tc.interleaved)
						for k := range rv {
							want[o+k] = float32(rv[k])
						}
					}
				}
			}
			closeTo(t, want, got.Float32s(), 1e-6)
		})
	}
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRotaryRejectsOutOfCachePositions(t *testing.T) {
	c := f32([]int64{2, 2}, make([]float32, 4)) // a cache of 2 positions
	for _, tc := range []struct {
		name string
		seq  int64
		pos  kernels.Tensor
	}{
		{"past the end", 1, i64([]int64{1, 1}, []int64{2})},
		{"negative", 2, i64([]int64{1, 2}, []int64{0, -1})},
		{"offset running past the end", 2, i64([]int64{1}, []int64{1})},
		{"negative offset", 1, i64([]int64{1}, []int64{-1})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := f32([]int64{1, tc.seq, 4}, make([]float32, 4*tc.seq))
			n := msNode("RotaryEmbedding", graph.Attributes{}, []kernels.Tensor{x, tc.pos, c, c}, value(x))
			inst, err := registry.Select(n, dev)
			require.NoError(t, err)
			out := []kernels.Tensor{kernels.MustTensor(graph.Float32, 1, tc.seq, 4)}
			sentinel(out)
			err = inst.Run([]kernels.Tensor{x, tc.pos, c, c}, out, nil, 0)
			require.ErrorContains(t, err, "outside the cache of 2 positions")
			untouched(t, out)
		})
	}
}
