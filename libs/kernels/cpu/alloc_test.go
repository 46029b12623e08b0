package cpu

import (
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The hot path allocates nothing: every kernel below runs with zero heap allocations once its
// instance is selected and its workspace carved (MatMul is covered in matmul_test.go).
func TestKernelsDoNotAllocate(t *testing.T) {
	r := rng(t, 23)
	x := randF32(r, 2, 8, 16)
	g := randF32(r, 16)
	row := randF32(r, 16)
	idx := i64([]int64{3}, []int64{0, 7, -1})
	cond := boolT([]int64{8, 1}, []bool{true, false, true, true, false, false, true, false})
	starts, ends := i64([]int64{1}, []int64{1}), i64([]int64{1}, []int64{7})
	axes := i64([]int64{1}, []int64{1})
	q := randF32(r, 2, 8, 16)
	kv := randF32(r, 2, 700, 16)
	cases := []struct {
		n  *kernels.Node
		in []kernels.Tensor
	}{
		{node("Add", graph.Attributes{}, []kernels.Tensor{x, row}, value(x)), []kernels.Tensor{x, row}},
		{node("Mul", graph.Attributes{}, []kernels.Tensor{x, x}, value(x)), []kernels.Tensor{x, x}},
		{node("Where", graph.Attributes{}, []kernels.Tensor{cond, x, row}, value(x)), []kernels.Tensor{cond, x, row}},
		{node("Tanh", graph.Attributes{}, []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{node("Cast", kernels.Attrs("to", int64(graph.Int64)), []kernels.Tensor{x}, kernels.Value{DType: graph.Int64, Shape: x.Shape}), []kernels.Tensor{x}},
		{node("Transpose", kernels.Attrs("perm", []int64{0, 2, 1}), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 16, 8}}), []kernels.Tensor{x}},
		{node("Slice", graph.Attributes{}, []kernels.Tensor{x, starts, ends, axes}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 6, 16}}), []kernels.Tensor{x, starts, ends, axes}},
		{node("Gather", kernels.Attrs("axis", 1), []kernels.Tensor{x, idx}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 3, 16}}), []kernels.Tensor{x, idx}},
		{node("Concat", kernels.Attrs("axis", -1), []kernels.Tensor{x, x}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 8, 32}}), []kernels.Tensor{x, x}},
		{node("Softmax", graph.Attributes{}, []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{node("ReduceMean", kernels.Attrs("axes", []int64{-1}), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 8, 1}}), []kernels.Tensor{x}},
		{node("LayerNormalization", graph.Attributes{}, []kernels.Tensor{x, g, g}, value(x)), []kernels.Tensor{x, g, g}},
		{msNode("SkipSimplifiedLayerNormalization", graph.Attributes{}, []kernels.Tensor{x, x, g}, value(x)), []kernels.Tensor{x, x, g}},
		{msNode("MultiHeadAttention", kernels.Attrs("num_heads", 2), []kernels.Tensor{q, q, q}, value(q)), []kernels.Tensor{q, q, q}},
		{msNode("MultiHeadAttention", kernels.Attrs("num_heads", 2), []kernels.Tensor{q, kv, kv}, value(q)), []kernels.Tensor{q, kv, kv}},
		{msNode("FastGelu", graph.Attributes{}, []kernels.Tensor{x, g}, value(x)), []kernels.Tensor{x, g}},
	}
	for _, c := range cases {
		t.Run(c.n.Op, func(t *testing.T) { requireNoAllocs(t, c.n, c.in...) })
	}
}
