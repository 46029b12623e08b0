package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

var bcastCases = []struct{ a, b []int64 }{
	{[]int64{3, 4}, []int64{3, 4}},
	{[]int64{3, 4}, []int64{4}},
	{[]int64{3, 1}, []int64{1, 5}},
	{[]int64{2, 1, 4}, []int64{3, 1}},
	{[]int64{}, []int64{2, 3}},
	{[]int64{1}, []int64{}},
	{[]int64{2, 0, 3}, []int64{3}},
	{[]int64{5, 1, 1, 7}, []int64{1, 6, 1, 1}},
	{[]int64{1, 1, 3}, []int64{2, 1, 1}},
	{[]int64{7, 1, 5, 1, 3}, []int64{6, 1, 2, 1}},
}

func TestBinaryFloatBroadcast(t *testing.T) {
	r := rng(t, 1)
	ops := map[string]func(a, b float32) float32{
		"Add": func(a, b float32) float32 { return a + b },
		"Sub": func(a, b float32) float32 { return a - b },
		"Mul": func(a, b float32) float32 { return a * b },
		"Div": func(a, b float32) float32 { return a / b },
		"Max": func(a, b float32) float32 { return float32(math.Max(float64(a), float64(b))) },
		"Min": func(a, b float32) float32 { return float32(math.Min(float64(a), float64(b))) },
	}
	for name, f := range ops {
		for _, tc := range bcastCases {
			for _, swap := range []bool{false, true} {
				as, bs := tc.a, tc.b
				if swap {
					as, bs = bs, as
				}
				t.Run(fmt.Sprintf("%s/%v/%v", name, as, bs), func(t *testing.T) {
					a, b := randF32(r, as...), randF32(r, bs...)
					shape, err := kernels.BroadcastShapes(as, bs)
					require.NoError(t, err)
					got := out1(t, node(name, graph.Attributes{}, []kernels.Tensor{a, b}, kernels.Value{DType: graph.Float32, Shape: shape}), a, b)
					want := make([]float32, mustNumel(shape))
					for i := range want {
						want[i] = f(a.Float32s()[bcastIndexRef(shape, as, i)], b.Float32s()[bcastIndexRef(shape, bs, i)])
					}
					closeTo(t, want, got.Float32s(), 0)
				})
			}
		}
	}
}

func TestBinaryIntAndCompare(t *testing.T) {
	a := i64([]int64{2, 3}, []int64{-7, 7, 0, 5, -5, 9})
	b := i64([]int64{3}, []int64{2, -2, 0})
	sh := kernels.Value{DType: graph.Int64, Shape: []int64{2, 3}}
	bo := kernels.Value{DType: graph.Bool, Shape: []int64{2, 3}}
	for _, tc := range []struct {
		op    string
		attrs graph.Attributes
		out   kernels.Value
		want  []int64
	}{
		{"Add", graph.Attributes{}, sh, []int64{-5, 5, 0, 7, -7, 9}},
		{"Div", graph.Attributes{}, sh, []int64{-3, -3, 0, 2, 2, 0}},
		{"Mod", graph.Attributes{}, sh, []int64{1, -1, 0, 1, -1, 0}},
		{"Mod", kernels.Attrs("fmod", 1), sh, []int64{-1, 1, 0, 1, -1, 0}},
		{"Equal", graph.Attributes{}, bo, []int64{0, 0, 1, 0, 0, 0}},
		{"Less", graph.Attributes{}, bo, []int64{1, 0, 0, 0, 1, 0}},
		{"GreaterOrEqual", graph.Attributes{}, bo, []int64{0, 1, 1, 1, 0, 1}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			got := out1(t, node(tc.op, tc.attrs, []kernels.Tensor{a, b}, tc.out), a, b)
			for i, w := range tc.want {
				require.Equal(t, w, loadI64(got, i), "element %d", i)
			}
		})
	}
}

func TestLogical(t *testing.T) {
	a := boolT([]int64{4}, []bool{true, true, false, false})
	b := boolT([]int64{4}, []bool{true, false, true, false})
	for op, want := range map[string][]byte{"And": {1, 0, 0, 0}, "Or": {1, 1, 1, 0}, "Xor": {0, 1, 1, 0}} {
		got := out1(t, node(op, graph.Attributes{}, []kernels.Tensor{a, b}, value(a)), a, b)
		require.Equal(t, want, got.Data, op)
	}
	got := out1(t, node("Not", graph.Attributes{}, []kernels.Tensor{a}, value(a)), a)
	require.Equal(t, []byte{0, 0, 1, 1}, got.Data)
}

func TestBinaryRejects(t *testing.T) {
	a := f32([]int64{2, 3}, make([]float32, 6))
	b := f32([]int64{4}, make([]float32, 4))
	_, err := registry.Select(node("Add", graph.Attributes{}, []kernels.Tensor{a, b}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 4}}), dev)
	var ne *kernels.NodeError
	require.ErrorAs(t, err, &ne)
	c := i64([]int64{3}, make([]int64, 3))
	_, err = registry.Select(node("Add", graph.Attributes{}, []kernels.Tensor{a, c}, value(a)), dev)
	require.Error(t, err)
	_, err = registry.Select(node("Add", graph.Attributes{}, []kernels.Tensor{a, a}, kernels.Value{DType: graph.Float32, Shape: []int64{3, 2}}), dev)
	require.Error(t, err, "wrong output shape")
}
