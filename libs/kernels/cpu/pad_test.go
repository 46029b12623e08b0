package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// refPad pads a 2-D [h, w] by nested loops, mapping each output coordinate to the input's.
func refPad(x []float32, h, w int, pads [4]int, mode string, cv float32) []float32 {
	oh, ow := h+pads[0]+pads[2], w+pads[1]+pads[3]
	m := func(i, n int) (int, bool) {
		if i >= 0 && i < n {
			return i, true
		}
		switch mode {
		case "edge":
			return min(max(i, 0), n-1), true
		case "wrap":
			return ((i % n) + n) % n, true
		case "reflect":
			for i < 0 || i >= n {
				if i < 0 {
					i = -i
				}
				if i >= n {
					i = 2*(n-1) - i
				}
			}
			return i, true
		}
		return 0, false
	}
	y := make([]float32, 0, oh*ow)
	for i := range oh {
		for j := range ow {
			a, ok1 := m(i-pads[0], h)
			b, ok2 := m(j-pads[1], w)
			if ok1 && ok2 {
				y = append(y, x[a*w+b])
			} else {
				y = append(y, cv)
			}
		}
	}
	return y
}

func TestPad(t *testing.T) {
	r := rng(t, 13)
	x := randF32(r, 4, 5)
	for _, mode := range []string{"constant", "reflect", "edge", "wrap"} {
		for _, pads := range [][4]int{{1, 2, 3, 1}, {0, 0, 0, 0}, {2, 3, 0, 4}, {-1, 1, 2, -2}} {
			p := i64([]int64{4}, []int64{int64(pads[0]), int64(pads[1]), int64(pads[2]), int64(pads[3])})
			cv := f32([]int64{}, []float32{2.5})
			yshape := []int64{int64(4 + pads[0] + pads[2]), int64(5 + pads[1] + pads[3])}
			got := out1(t, node("Pad", kernels.Attrs("mode", mode), []kernels.Tensor{x, p, cv}, kernels.Value{DType: graph.Float32, Shape: yshape}), x, p, cv)
			require.Equal(t, refPad(x.Float32s(), 4, 5, pads, mode, 2.5), got.Float32s(), "%s %v", mode, pads)
		}
	}
	// axes (opset 18): the last axis only, int64 elements, no constant (zero)
	xi := i64([]int64{2, 2}, []int64{1, 2, 3, 4})
	p := i64([]int64{2}, []int64{1, 2})
	axes := i64([]int64{1}, []int64{-1})
	got := out1(t, node("Pad", graph.Attributes{}, []kernels.Tensor{xi, p, {}, axes}, kernels.Value{DType: graph.Int64, Shape: []int64{2, 5}}), xi, p, kernels.Tensor{}, axes)
	require.Equal(t, []int64{0, 1, 2, 0, 0, 0, 3, 4, 0, 0}, kernels.ViewAs[int64](got.Data))
	// 4-D reflect over the spatial dims, as vision models pad
	x4 := randF32(r, 1, 2, 3, 4)
	p4 := i64([]int64{8}, []int64{0, 0, 1, 2, 0, 0, 1, 2})
	got = out1(t, node("Pad", kernels.Attrs("mode", "reflect"), []kernels.Tensor{x4, p4}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 2, 5, 8}}), x4, p4)
	for c := range 2 {
		want := refPad(x4.Float32s()[c*12:(c+1)*12], 3, 4, [4]int{1, 2, 1, 2}, "reflect", 0)
		require.Equal(t, want, got.Float32s()[c*40:(c+1)*40])
	}
}

func TestPadRefusals(t *testing.T) {
	x := kernels.Value{DType: graph.Float32, Shape: []int64{2, 3}}
	p := kernels.Value{DType: graph.Int64, Shape: []int64{4}, Const: kernels.BytesOf([]int64{0, 1, 0, 1})}
	y := kernels.Value{DType: graph.Float32, Shape: []int64{2, 5}}
	_, err := registry.Select(&kernels.Node{Op: "Pad", Attrs: kernels.Attrs("mode", "symmetric"), Inputs: []kernels.Value{x, p}, Outputs: []kernels.Value{y}}, dev)
	require.ErrorContains(t, err, `mode "symmetric" is not one of constant, reflect, edge, wrap`)
	_, err = registry.Select(&kernels.Node{Op: "Pad", Inputs: []kernels.Value{x, p}, Outputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{2, 6}}}}, dev)
	require.ErrorContains(t, err, "is not the input [2 3] padded by [0 1 0 1]")
	_, err = registry.Select(&kernels.Node{Op: "Pad", Inputs: []kernels.Value{x, {DType: graph.Int64, Shape: []int64{3}}}, Outputs: []kernels.Value{y}}, dev)
	require.ErrorContains(t, err, "pads has 3 values, want 4")
	// pads known only at run time that do not give the output
	inst, err := registry.Select(&kernels.Node{Op: "Pad", Inputs: []kernels.Value{x, {DType: graph.Int64, Shape: []int64{4}}}, Outputs: []kernels.Value{y}}, dev)
	require.NoError(t, err)
	err = inst.Run([]kernels.Tensor{kernels.MustTensor(graph.Float32, 2, 3), i64([]int64{4}, []int64{0, 0, 0, 1})}, []kernels.Tensor{kernels.MustTensor(graph.Float32, 2, 5)}, nil, 0)
	require.ErrorContains(t, err, "pads do not give the output's shape")
}
