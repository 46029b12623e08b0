package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// refPool2D is MaxPool or AveragePool over [N, C, H, W] by nested loops, with explicit begin
// pads, output dims oh x ow and the padded extent's end pads for count_include_pad.
func refPool2D(x []float32, n, c, h, w int, k, s, d, pb, pe [2]int, oh, ow int, isMax, incl bool) []float32 {
	y := make([]float32, 0, n*c*oh*ow)
	for p := range n * c {
		for i := range oh {
			for j := range ow {
				m, sum, valid, padded := math.Inf(-1), 0.0, 0, 0
				for a := range k[0] {
					for b := range k[1] {
						ih, iw := i*s[0]-pb[0]+a*d[0], j*s[1]-pb[1]+b*d[1]
						if ih >= -pb[0] && ih < h+pe[0] && iw >= -pb[1] && iw < w+pe[1] {
							padded++
						}
						if ih < 0 || iw < 0 || ih >= h || iw >= w {
							continue
						}
						v := float64(x[(p*h+ih)*w+iw])
						m, sum, valid = math.Max(m, v), sum+v, valid+1
					}
				}
				switch {
				case isMax:
					y = append(y, float32(m))
				case incl:
					y = append(y, float32(sum/float64(padded)))
				default:
					y = append(y, float32(sum/float64(valid)))
				}
			}
		}
	}
	return y
}

func TestPool(t *testing.T) {
	r := rng(t, 11)
	for _, tc := range []struct {
		name    string
		op      string
		x       []int64
		at      graph.Attributes
		k, s, d [2]int
		pb, pe  [2]int
		oh, ow  int
		incl    bool
	}{
		{"max 3x3 s2 p1", "MaxPool", []int64{2, 3, 9, 8}, kernels.Attrs("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 5, 4, false},
		{"max ceil_mode", "MaxPool", []int64{1, 2, 6, 7}, kernels.Attrs("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "ceil_mode", 1), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{}, [2]int{}, 3, 3, false},
		{"max dilated asymmetric", "MaxPool", []int64{1, 2, 9, 9}, kernels.Attrs("kernel_shape", []int64{2, 3}, "dilations", []int64{2, 1}, "pads", []int64{0, 1, 1, 0}), [2]int{2, 3}, [2]int{1, 1}, [2]int{2, 1}, [2]int{0, 1}, [2]int{1, 0}, 8, 8, false},
		{"max SAME_UPPER", "MaxPool", []int64{1, 2, 7, 7}, kernels.Attrs("kernel_shape", []int64{2, 2}, "strides", []int64{2, 2}, "auto_pad", "SAME_UPPER"), [2]int{2, 2}, [2]int{2, 2}, [2]int{1, 1}, [2]int{0, 0}, [2]int{1, 1}, 4, 4, false},
		{"avg exclude pad", "AveragePool", []int64{1, 3, 7, 6}, kernels.Attrs("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 4, 3, false},
		{"avg include pad", "AveragePool", []int64{1, 3, 7, 6}, kernels.Attrs("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}, "count_include_pad", 1), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 4, 3, true},
		{"avg ceil_mode include pad", "AveragePool", []int64{1, 1, 6, 6}, kernels.Attrs("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}, "ceil_mode", 1, "count_include_pad", 1), [2]int{3, 3}, [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 4, 4, true},
		{"avg 1-D as 2-D", "AveragePool", []int64{2, 2, 1, 11}, kernels.Attrs("kernel_shape", []int64{1, 4}, "strides", []int64{1, 3}), [2]int{1, 4}, [2]int{1, 3}, [2]int{1, 1}, [2]int{}, [2]int{}, 1, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := randF32(r, tc.x...)
			yshape := []int64{tc.x[0], tc.x[1], int64(tc.oh), int64(tc.ow)}
			got := out1(t, node(tc.op, tc.at, []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: yshape}), x)
			want := refPool2D(x.Float32s(), int(tc.x[0]), int(tc.x[1]), int(tc.x[2]), int(tc.x[3]), tc.k, tc.s, tc.d, tc.pb, tc.pe, tc.oh, tc.ow, tc.op == "MaxPool", tc.incl)
			closeTo(t, want, got.Float32s(), 1e-5)
		})
	}
	// 1-D MaxPool
	x := f32([]int64{1, 1, 5}, []float32{1, 5, 2, 4, 3})
	got := out1(t, node("MaxPool", kernels.Attrs("kernel_shape", []int64{2}, "strides", []int64{2}, "ceil_mode", 1), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 3}}), x)
	require.Equal(t, []float32{5, 4, 3}, got.Float32s())
	// a NaN in a window is its max, wherever it falls in the window
	nan := float32(math.NaN())
	x = f32([]int64{1, 1, 6}, []float32{1, nan, 2, 4, nan, 3})
	got = out1(t, node("MaxPool", kernels.Attrs("kernel_shape", []int64{2}, "strides", []int64{2}), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 3}}), x)
	ys := got.Float32s()
	require.True(t, ys[0] != ys[0] && ys[2] != ys[2], "%v", ys)
	require.Equal(t, float32(4), ys[1])
}

func TestGlobalPool(t *testing.T) {
	x := f32([]int64{1, 2, 2, 2}, []float32{1, 2, 3, 6, -1, -2, -3, -4})
	y := kernels.Value{DType: graph.Float32, Shape: []int64{1, 2, 1, 1}}
	require.Equal(t, []float32{3, -2.5}, out1(t, node("GlobalAveragePool", graph.Attributes{}, []kernels.Tensor{x}, y), x).Float32s())
	require.Equal(t, []float32{6, -1}, out1(t, node("GlobalMaxPool", graph.Attributes{}, []kernels.Tensor{x}, y), x).Float32s())
}

func TestPoolRefusals(t *testing.T) {
	x := kernels.Value{DType: graph.Float32, Shape: []int64{1, 2, 6, 6}}
	y := kernels.Value{DType: graph.Float32, Shape: []int64{1, 2, 3, 3}}
	for _, tc := range []struct {
		n    *kernels.Node
		want string
	}{
		{&kernels.Node{Op: "MaxPool", Attrs: kernels.Attrs("kernel_shape", []int64{2, 2}, "strides", []int64{2, 2}), Inputs: []kernels.Value{x}, Outputs: []kernels.Value{y, {DType: graph.Int64, Shape: y.Shape}}}, "Indices output is not supported"},
		{&kernels.Node{Op: "MaxPool", Attrs: kernels.Attrs("strides", []int64{2, 2}), Inputs: []kernels.Value{x}, Outputs: []kernels.Value{y}}, "kernel_shape is required"},
		{&kernels.Node{Op: "AveragePool", Attrs: kernels.Attrs("kernel_shape", []int64{2, 2}), Inputs: []kernels.Value{x}, Outputs: []kernels.Value{y}}, "output 0 has shape [1 2 3 3], want [1 2 5 5]"},
		{&kernels.Node{Op: "AveragePool", Attrs: kernels.Attrs("kernel_shape", []int64{2}), Inputs: []kernels.Value{x}, Outputs: []kernels.Value{y}}, "kernel_shape [2] has 1 dims, want 2"},
	} {
		_, err := registry.Select(tc.n, dev)
		require.ErrorContains(t, err, tc.want)
	}
}
