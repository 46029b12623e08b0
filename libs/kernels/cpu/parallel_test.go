package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// runOn is run on a target with the given worker count.
func runOn(t *testing.T, workers int, n *kernels.Node, in ...kernels.Tensor) []kernels.Tensor {
	t.Helper()
	inst, err := registry.Select(n, kernels.Target{Backend: kernels.BackendCPU, Workers: workers})
	require.NoError(t, err)
	out := make([]kernels.Tensor, len(n.Outputs))
	for i, v := range n.Outputs {
		out[i] = kernels.MustTensor(v.DType, v.Shape...)
	}
	size, err := inst.Recipe().Size()
	require.NoError(t, err)
	reg, keep := region(size)
	require.NoError(t, kernels.Execute(inst, in, out, reg, 0))
	_ = keep
	return out
}

// Kernels that split large tensors over the workers give exactly the one-worker results.
func TestParallelMatchesSerial(t *testing.T) {
	r := rng(t, 31)
	x := randF32(r, 4, 96, 200) // 76800 elements: above parMinElems
	row := randF32(r, 200)
	col := randF32(r, 4, 96, 1)
	cond := boolT([]int64{96, 200}, make([]bool, 96*200))
	for i := range cond.Data {
		cond.Data[i] = byte(r.IntN(2))
	}
	big := randF32(r, 20, 64, 64, 64) // a transpose of 5 million elements
	cases := []struct {
		name string
		n    *kernels.Node
		in   []kernels.Tensor
	}{
		{"Add row", node("Add", graph.Attributes{}, []kernels.Tensor{x, row}, value(x)), []kernels.Tensor{x, row}},
		{"Div col", node("Div", graph.Attributes{}, []kernels.Tensor{x, col}, value(x)), []kernels.Tensor{x, col}},
		{"Less", node("Less", graph.Attributes{}, []kernels.Tensor{x, col}, kernels.Value{DType: graph.Bool, Shape: x.Shape}), []kernels.Tensor{x, col}},
		{"Where", node("Where", graph.Attributes{}, []kernels.Tensor{cond, x, row}, value(x)), []kernels.Tensor{cond, x, row}},
		{"Tanh", node("Tanh", graph.Attributes{}, []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{"Softmax", node("Softmax", graph.Attributes{}, []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{"Softmax axis 1", node("Softmax", kernels.Attrs("axis", 1), []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{"FastGelu", msNode("FastGelu", graph.Attributes{}, []kernels.Tensor{x, row}, value(x)), []kernels.Tensor{x, row}},
		{"Transpose", node("Transpose", kernels.Attrs("perm", []int64{0, 1, 3, 2}), []kernels.Tensor{big}, value(big)), []kernels.Tensor{big}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := runOn(t, 1, c.n, c.in...)
			got := runOn(t, 4, c.n, c.in...)
			require.Equal(t, want[0].Data, got[0].Data)
		})
	}
}
