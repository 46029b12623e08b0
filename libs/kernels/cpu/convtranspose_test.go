package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// refConvTranspose2D scatters every input element times every kernel tap into the output, for
// x [N, C, H, W] and w [C, M/g, KH, KW], with begin pads pb and output dims oh x ow.
func refConvTranspose2D(x, w, b []float32, xs, wsh []int64, g int, s, d, pb [2]int, oh, ow int) []float32 {
	N, C, H, W := int(xs[0]), int(xs[1]), int(xs[2]), int(xs[3])
	mg, KH, KW := int(wsh[1]), int(wsh[2]), int(wsh[3])
	M, cg := mg*g, C/g
	y := make([]float64, N*M*oh*ow)
	for n := range N {
		for c := range C {
			grp := c / cg
			for i := range H {
				for j := range W {
					xv := float64(x[((n*C+c)*H+i)*W+j])
					for m := range mg {
						for a := range KH {
							for bb := range KW {
								o1, o2 := i*s[0]-pb[0]+a*d[0], j*s[1]-pb[1]+bb*d[1]
								if o1 < 0 || o2 < 0 || o1 >= oh || o2 >= ow {
									continue
								}
								y[((n*M+grp*mg+m)*oh+o1)*ow+o2] += xv * float64(w[((c*mg+m)*KH+a)*KW+bb])
							}
						}
					}
				}
			}
		}
	}
	out := make([]float32, len(y))
	for i, v := range y {
		if b != nil {
			v += float64(b[i/(oh*ow)%M])
		}
		out[i] = float32(v)
	}
	return out
}

func TestConvTranspose(t *testing.T) {
	r := rng(t, 21)
	for _, tc := range []struct {
		name     string
		x, w     []int64
		g        int
		s, d, pb [2]int
		oh, ow   int
		at       graph.Attributes
		bias     bool
	}{
		{"stride 2 pad 1", []int64{1, 4, 5, 5}, []int64{4, 3, 4, 4}, 1, [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, 10, 10,
			kernels.Attrs("strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}), true},
		{"grouped output_padding", []int64{2, 4, 3, 4}, []int64{4, 2, 3, 3}, 2, [2]int{2, 3}, [2]int{1, 1}, [2]int{1, 0}, 6, 13,
			kernels.Attrs("group", 2, "strides", []int64{2, 3}, "pads", []int64{1, 0, 1, 0}, "output_padding", []int64{1, 1}), false},
		{"dilated asymmetric", []int64{1, 3, 6, 5}, []int64{3, 2, 3, 2}, 1, [2]int{1, 2}, [2]int{2, 1}, [2]int{0, 1}, 9, 9,
			kernels.Attrs("strides", []int64{1, 2}, "dilations", []int64{2, 1}, "pads", []int64{0, 1, 1, 0}), true},
		{"output_shape SAME_UPPER", []int64{1, 2, 4, 4}, []int64{2, 3, 3, 3}, 1, [2]int{2, 2}, [2]int{1, 1}, [2]int{0, 0}, 8, 8,
			kernels.Attrs("strides", []int64{2, 2}, "auto_pad", "SAME_UPPER"), true},
		{"1-D as 2-D large", []int64{1, 8, 1, 300}, []int64{8, 4, 1, 4}, 1, [2]int{1, 2}, [2]int{1, 1}, [2]int{0, 1}, 1, 600,
			kernels.Attrs("strides", []int64{1, 2}, "pads", []int64{0, 1, 0, 1}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, w := randF32(r, tc.x...), randF32(r, tc.w...)
			m := tc.w[1] * int64(tc.g)
			in := []kernels.Tensor{x, w}
			var b []float32
			if tc.bias {
				bt := randF32(r, m)
				in, b = append(in, bt), bt.Float32s()
			}
			yshape := []int64{tc.x[0], m, int64(tc.oh), int64(tc.ow)}
			n := node("ConvTranspose", tc.at, in, kernels.Value{DType: graph.Float32, Shape: yshape})
			got := out1(t, n, in...)
			closeTo(t, refConvTranspose2D(x.Float32s(), w.Float32s(), b, tc.x, tc.w, tc.g, tc.s, tc.d, tc.pb, tc.oh, tc.ow), got.Float32s(), 1e-4)
			requireRefusesSmallWorkspace(t, n, in...)
		})
	}
	// 1-D
	x := f32([]int64{1, 1, 3}, []float32{1, 2, 3})
	w := f32([]int64{1, 1, 2}, []float32{1, 10})
	got := out1(t, node("ConvTranspose", kernels.Attrs("strides", []int64{2}), []kernels.Tensor{x, w}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 6}}), x, w)
	require.Equal(t, []float32{1, 10, 2, 20, 3, 30}, got.Float32s())
	// refusals
	_, err := registry.Select(node("ConvTranspose", kernels.Attrs("group", 3), []kernels.Tensor{x, w}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 4}}), dev)
	require.ErrorContains(t, err, "group 3 does not divide the input channels 1")
	_, err = registry.Select(node("ConvTranspose", kernels.Attrs("strides", []int64{2}, "output_padding", []int64{2}), []kernels.Tensor{x, w}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 1, 8}}), dev)
	require.ErrorContains(t, err, "want less than the stride or the dilation")
}
