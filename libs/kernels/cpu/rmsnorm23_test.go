package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

func TestONNXRMSNorm(t *testing.T) {
	r := rng(t, 23)
	for _, tc := range []struct {
		name string
		x, s []int64
		axis int64
		dt   graph.DType
		tol  float64
	}{
		{"last axis", []int64{3, 5, 16}, []int64{16}, -1, graph.Float32, 1e-6},
		{"two axes, broadcast scale", []int64{4, 3, 8}, []int64{1, 8}, 1, graph.Float32, 1e-6},
		{"full scale", []int64{4, 3, 8}, []int64{3, 8}, 1, graph.Float32, 1e-6},
		{"bfloat16", []int64{2, 32}, []int64{32}, -1, graph.BFloat16, 1e-2},
		{"float16", []int64{2, 32}, []int64{32}, -1, graph.Float16, 2e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := tensorOf(tc.dt, tc.x, float64sOf(randF32(r, tc.x...)))
			s := tensorOf(tc.dt, tc.s, float64sOf(randF32(r, tc.s...)))
			const eps = 1e-5
			n := node("RMSNormalization", kernels.Attrs("axis", tc.axis, "epsilon", float32(eps)), []kernels.Tensor{x, s}, value(x))
			got := out1(t, n, x, s)
			axis, err := kernels.NormAxis(tc.axis, len(tc.x))
			require.NoError(t, err)
			rows, h := normRows(tc.x, axis)
			xs, ss := float64sOf(x), float64sOf(s)
			want := make([]float64, len(xs))
			for row := 0; row < rows; row++ {
				var sq float64
				for j := 0; j < h; j++ {
					sq += xs[row*h+j] * xs[row*h+j]
				}
				inv := 1 / math.Sqrt(sq/float64(h)+eps)
				for j := 0; j < h; j++ {
					want[row*h+j] = xs[row*h+j] * inv * ss[bcastIndexRef(tc.x[axis:], tc.s, j)]
				}
			}
			closeTo64(t, want, float64sOf(got), tc.tol, "Y")
			requireNoAllocs(t, n, x, s)
		})
	}
}

func TestONNXRMSNormErrors(t *testing.T) {
	f := func(shape ...int64) kernels.Value { return kernels.Value{DType: graph.Float32, Shape: shape} }
	for _, tc := range []struct {
		name  string
		attrs []any
		in    []kernels.Value
		wants string
	}{
		{"types", nil, []kernels.Value{f(2, 4), {DType: graph.Float16, Shape: []int64{4}}}, "input 1 is float16, want float32"},
		{"axis", []any{"axis", 2}, []kernels.Value{f(2, 4), f(4)}, "out of range"},
		{"scale", nil, []kernels.Value{f(2, 4), f(3)}, "scale"},
		{"stash", []any{"stash_type", 10}, []kernels.Value{f(2, 4), f(4)}, "stash_type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := registry.Select(&kernels.Node{Op: "RMSNormalization", Attrs: kernels.Attrs(tc.attrs...), Inputs: tc.in, Outputs: []kernels.Value{tc.in[0]}}, dev)
			require.ErrorContains(t, err, tc.wants)
		})
	}
}
