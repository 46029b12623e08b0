package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The expected values are the ONNX operator tests' (onnx/backend/test/case/node/resize.py).
func TestResize(t *testing.T) {
	x22 := f32([]int64{1, 1, 2, 2}, []float32{1, 2, 3, 4})
	x24 := f32([]int64{1, 1, 2, 4}, []float32{1, 2, 3, 4, 5, 6, 7, 8})
	for _, tc := range []struct {
		name   string
		at     graph.Attributes
		x      kernels.Tensor
		scales []float32
		out    []int64
		want   []float32
	}{
		{"upsample nearest", kernels.Attrs("mode", "nearest"), x22, []float32{1, 1, 2, 3}, []int64{1, 1, 4, 6},
			[]float32{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}},
		{"downsample nearest", kernels.Attrs("mode", "nearest"), x24, []float32{1, 1, 0.6, 0.6}, []int64{1, 1, 1, 2}, []float32{1, 3}},
		{"upsample linear", kernels.Attrs("mode", "linear"), x22, []float32{1, 1, 2, 2}, []int64{1, 1, 4, 4},
			[]float32{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}},
		{"upsample linear align_corners", kernels.Attrs("mode", "linear", "coordinate_transformation_mode", "align_corners"), x22, []float32{1, 1, 2, 2}, []int64{1, 1, 4, 4},
			[]float32{1, 1.3333333, 1.6666667, 2, 1.6666666, 2, 2.3333333, 2.6666667, 2.3333333, 2.6666667, 3, 3.3333333, 3, 3.3333333, 3.6666667, 4}},
		{"downsample linear", kernels.Attrs("mode", "linear"), x24, []float32{1, 1, 0.6, 0.6}, []int64{1, 1, 1, 2}, []float32{2.6666665, 4.3333331}},
		{"downsample linear align_corners", kernels.Attrs("mode", "linear", "coordinate_transformation_mode", "align_corners"), x24, []float32{1, 1, 0.6, 0.6}, []int64{1, 1, 1, 2}, []float32{1, 4}}, // onnxruntime's and PyTorch's (in-1)/(out-1) with the whole output size; the ONNX reference's 3.142857 takes in*scale
		{"downsample linear pytorch_half_pixel", kernels.Attrs("mode", "linear", "coordinate_transformation_mode", "pytorch_half_pixel"), x24, []float32{1, 1, 0.5, 0.5}, []int64{1, 1, 1, 2}, []float32{1.5, 3.5}},
		{"upsample nearest asymmetric ceil", kernels.Attrs("mode", "nearest", "coordinate_transformation_mode", "asymmetric", "nearest_mode", "ceil"), x22, []float32{1, 1, 1, 2}, []int64{1, 1, 2, 4},
			[]float32{1, 2, 2, 2, 3, 4, 4, 4}},
		{"upsample nearest round_prefer_ceil", kernels.Attrs("mode", "nearest", "nearest_mode", "round_prefer_ceil"), x22, []float32{1, 1, 1, 2}, []int64{1, 1, 2, 4},
			[]float32{1, 1, 2, 2, 3, 3, 4, 4}},
		{"upsample nearest floor", kernels.Attrs("mode", "nearest", "nearest_mode", "floor"), x22, []float32{1, 1, 1, 1.5}, []int64{1, 1, 2, 3},
			[]float32{1, 1, 2, 3, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := f32([]int64{4}, tc.scales)
			n := node("Resize", tc.at, []kernels.Tensor{tc.x, {}, sc}, kernels.Value{DType: graph.Float32, Shape: tc.out})
			n.Inputs[2].Const = sc.Data
			got := out1(t, n, tc.x, kernels.Tensor{}, sc)
			closeTo(t, tc.want, got.Float32s(), 1e-5)
		})
	}
	// sizes instead of scales: out/in
	sz := i64([]int64{4}, []int64{1, 1, 4, 4})
	n := node("Resize", kernels.Attrs("mode", "linear"), []kernels.Tensor{x22, {}, {}, sz}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 4, 4}})
	got := out1(t, n, x22, kernels.Tensor{}, kernels.Tensor{}, sz)
	closeTo(t, []float32{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3, 3.25, 3.75, 4}, got.Float32s(), 1e-6)
	// Upsample (opset 9): nearest, asymmetric, floor
	sc := f32([]int64{4}, []float32{1, 1, 2, 3})
	got = out1(t, node("Upsample", kernels.Attrs("mode", "nearest"), []kernels.Tensor{x22, sc}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 4, 6}}), x22, sc)
	require.Equal(t, []float32{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4}, got.Float32s())
}

func TestResizeRefusals(t *testing.T) {
	x := kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 2, 2}}
	y := kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 4, 4}}
	sc := kernels.Value{DType: graph.Float32, Shape: []int64{4}, Const: kernels.BytesOf([]float32{1, 1, 2, 2})}
	for _, tc := range []struct {
		at   graph.Attributes
		in   []kernels.Value
		out  kernels.Value
		want string
	}{
		{kernels.Attrs("mode", "cubic"), []kernels.Value{x, {}, sc}, y, `mode "cubic" is not supported`},
		{kernels.Attrs("coordinate_transformation_mode", "tf_crop_and_resize"), []kernels.Value{x, {}, sc}, y, `coordinate_transformation_mode "tf_crop_and_resize" is not supported`},
		{kernels.Attrs("nearest_mode", "round"), []kernels.Value{x, {}, sc}, y, `nearest_mode "round" is not one of`},
		{kernels.Attrs(), []kernels.Value{x, {}, sc}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 4, 5}}, "scale 2 of dim 3 gives 4, output has 5"},
		{kernels.Attrs("mode", "linear"), []kernels.Value{x, {}, {DType: graph.Float32, Shape: []int64{4}}}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 2, 4, 4}}, "only the last two dims may change"},
	} {
		_, err := registry.Select(&kernels.Node{Op: "Resize", Attrs: tc.at, Inputs: tc.in, Outputs: []kernels.Value{tc.out}}, dev)
		require.ErrorContains(t, err, tc.want)
	}
}
