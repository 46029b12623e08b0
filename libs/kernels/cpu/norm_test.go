package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// lnRef normalizes rows of length h: (x - mean) / sqrt(var + eps) * g + b, or x / rms * g.
func lnRef(x []float32, h int, g, b []float32, eps float64, rms bool) (y, mean, inv []float32) {
	rows := len(x) / h
	y = make([]float32, len(x))
	for r := 0; r < rows; r++ {
		row := x[r*h : (r+1)*h]
		var m, v float64
		for _, e := range row {
			m += float64(e)
		}
		m /= float64(h)
		if rms {
			m = 0
		}
		for _, e := range row {
			v += (float64(e) - m) * (float64(e) - m)
		}
		is := 1 / math.Sqrt(v/float64(h)+eps)
		for j, e := range row {
			o := (float64(e) - m) * is * float64(g[j%len(g)])
			if b != nil {
				o += float64(b[j%len(b)])
			}
			y[r*h+j] = float32(o)
		}
		mean = append(mean, float32(m))
		inv = append(inv, float32(is))
	}
	return y, mean, inv
}

func TestLayerNormalization(t *testing.T) {
	r := rng(t, 2)
	for _, tc := range []struct {
		shape []int64
		axis  int64
		scale []int64
		bias  bool
	}{
		{[]int64{2, 3, 8}, -1, []int64{8}, true},
		{[]int64{4, 5}, 1, []int64{5}, false},
		{[]int64{2, 3, 4}, 1, []int64{3, 4}, true},
		{[]int64{2, 3, 4}, -2, []int64{4}, true}, // scale broadcast over the normalized [3, 4]
		{[]int64{3, 1, 7}, -1, []int64{7}, true},
		{[]int64{0, 7}, -1, []int64{7}, true},
	} {
		x := randF32(r, tc.shape...)
		g := randF32(r, tc.scale...)
		in := []kernels.Tensor{x, g}
		var bias []float32
		if tc.bias {
			b := randF32(r, tc.scale...)
			in = append(in, b)
			bias = b.Float32s()
		}
		axis := int(tc.axis)
		if axis < 0 {
			axis += len(tc.shape)
		}
		statShape := append([]int64(nil), tc.shape...)
		for i := axis; i < len(statShape); i++ {
			statShape[i] = 1
		}
		n := node("LayerNormalization", kernels.Attrs("axis", tc.axis, "epsilon", 1e-5), in,
			value(x), kernels.Value{DType: graph.Float32, Shape: statShape}, kernels.Value{DType: graph.Float32, Shape: statShape})
		out, inst := run(t, n, in...)
		require.Equal(t, "row-stats", inst.Tactic())
		h := int(mustNumel(tc.shape[axis:]))
		// the reference broadcasts g and b by the flat index within the row, which matches
		// right-aligned broadcasting for these cases
		if h == 0 {
			continue
		}
		wy, wm, wi := lnRef(x.Float32s(), h, g.Float32s(), bias, 1e-5, false)
		closeTo(t, wy, out[0].Float32s(), 1e-5, tc)
		closeTo(t, wm, out[1].Float32s(), 1e-5, tc)
		closeTo(t, wi, out[2].Float32s(), 1e-5, tc)
		if mustNumel(tc.shape) > 0 {
			requireRefusesSmallWorkspace(t, n, in...)
		}
	}
}

func TestSimplifiedAndSkipNorms(t *testing.T) {
	r := rng(t, 3)
	x := randF32(r, 2, 3, 16)
	g := randF32(r, 16)
	t.Run("rms", func(t *testing.T) {
		n := node("SimplifiedLayerNormalization", kernels.Attrs("epsilon", 1e-6), []kernels.Tensor{x, g}, value(x), kernels.Value{DType: graph.Float32, Shape: []int64{2, 3, 1}})
		out, _ := run(t, n, x, g)
		wy, _, wi := lnRef(x.Float32s(), 16, g.Float32s(), nil, 1e-6, true)
		closeTo(t, wy, out[0].Float32s(), 1e-5)
		closeTo(t, wi, out[1].Float32s(), 1e-5)
		requireRefusesSmallWorkspace(t, n, x, g)
	})
	for _, skipShape := range [][]int64{{2, 3, 16}, {1, 3, 16}, {3, 16}} {
		skip := randF32(r, skipShape...)
		beta, bias := randF32(r, 16), randF32(r, 16)
		sum := make([]float32, 2*3*16)
		for i := range sum {
			sum[i] = x.Float32s()[i] + skip.Float32s()[i%len(skip.Float32s())] + bias.Float32s()[i%16]
		}
		t.Run("skip-ln", func(t *testing.T) {
			in := []kernels.Tensor{x, skip, g, beta, bias}
			stat := kernels.Value{DType: graph.Float32, Shape: []int64{2, 3, 1}}
			n := node("SkipLayerNormalization", kernels.Attrs("epsilon", 1e-5), in, value(x), stat, stat, value(x))
			n.Domain = kernels.DomainMicrosoft
			out, _ := run(t, n, in...)
			wy, wm, wi := lnRef(sum, 16, g.Float32s(), beta.Float32s(), 1e-5, false)
			closeTo(t, wy, out[0].Float32s(), 1e-5)
			closeTo(t, wm, out[1].Float32s(), 1e-5)
			closeTo(t, wi, out[2].Float32s(), 1e-5)
			closeTo(t, sum, out[3].Float32s(), 1e-6)
			requireRefusesSmallWorkspace(t, n, in...)
		})
		t.Run("skip-rms", func(t *testing.T) {
			in := []kernels.Tensor{x, skip, g, bias}
			stat := kernels.Value{DType: graph.Float32, Shape: []int64{2, 3, 1}}
			n := node("SkipSimplifiedLayerNormalization", kernels.Attrs("epsilon", 1e-5), in, value(x), kernels.Value{}, stat, value(x))
			n.Domain = kernels.DomainMicrosoft
			out, _ := run(t, n, in...)
			wy, _, wi := lnRef(sum, 16, g.Float32s(), nil, 1e-5, true)
			closeTo(t, wy, out[0].Float32s(), 1e-5)
			closeTo(t, wi, out[2].Float32s(), 1e-5)
			closeTo(t, sum, out[3].Float32s(), 1e-6)
		})
	}
}

func TestLayerNormFloat16(t *testing.T) {
	r := rng(t, 4)
	x := randF32(r, 3, 8)
	g := randF32(r, 8)
	x16, g16 := toF16(x), toF16(g)
	n := node("LayerNormalization", graph.Attributes{}, []kernels.Tensor{x16, g16}, value(x16))
	out := out1(t, n, x16, g16)
	back := fromF16(toF16(x))
	wy, _, _ := lnRef(back, 8, fromF16(g16), nil, 1e-5, false)
	closeTo(t, wy, fromF16(out), 2e-3)
}

func toF16(t kernels.Tensor) kernels.Tensor {
	u := make([]uint16, len(t.Float32s()))
	for i, v := range t.Float32s() {
		u[i] = tof16(v)
	}
	return kernels.Tensor{DType: graph.Float16, Shape: t.Shape, Data: kernels.BytesOf(u)}
}

func fromF16(t kernels.Tensor) []float32 {
	out := make([]float32, len(t.Uint16s()))
	for i, v := range t.Uint16s() {
		out[i] = f16(v)
	}
	return out
}
