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
	big := randF32(r, 20, 64, 64, 64)  // a transpose of 5 million elements
	idxLast := make([]int64, 4*96*200) // GatherElements along the last axis, negative ones too
	idxMid := make([]int64, 4*96*200)  // and along the middle one
	for i := range idxLast {
		idxLast[i], idxMid[i] = int64(r.IntN(400)-200), int64(r.IntN(96))
	}
	pos := make([]int64, 4*96)
	for i := range pos {
		pos[i] = int64(r.IntN(96))
	}
	posT, cache := i64([]int64{4, 96}, pos), randF32(r, 96, 50)
	half := randF32(r, 4, 96, 100)
	a, b := randF32(r, 400, 64), randF32(r, 64, 200)
	q := randF32(r, 2, 128, 128)
	bias3 := randF32(r, 3*128)
	wqkv := randF32(r, 128, 3*128)
	one, y := randF32(r, 1), randF32(r, 4, 96, 200)
	cube, root := f32([]int64{}, []float32{3}), f32([]int64{1}, []float32{0.5})
	condAll := boolT(x.Shape, make([]bool, len(x.Data)/4))
	for i := range condAll.Data {
		condAll.Data[i] = byte(r.IntN(2))
	}
	cases := []struct {
		name string
		n    *kernels.Node
		in   []kernels.Tensor
	}{
		{"Add row", node("Add", graph.Attributes{}, []kernels.Tensor{x, row}, value(x)), []kernels.Tensor{x, row}},
		{"Div col", node("Div", graph.Attributes{}, []kernels.Tensor{x, col}, value(x)), []kernels.Tensor{x, col}},
		{"Mul same shape", node("Mul", graph.Attributes{}, []kernels.Tensor{x, y}, value(x)), []kernels.Tensor{x, y}},
		{"Mul scalar", node("Mul", graph.Attributes{}, []kernels.Tensor{x, one}, value(x)), []kernels.Tensor{x, one}},
		{"Pow 3", node("Pow", graph.Attributes{}, []kernels.Tensor{x, cube}, value(x)), []kernels.Tensor{x, cube}},
		{"Pow 0.5", node("Pow", graph.Attributes{}, []kernels.Tensor{x, root}, value(x)), []kernels.Tensor{x, root}},
		{"Where same shape", node("Where", graph.Attributes{}, []kernels.Tensor{condAll, x, y}, value(x)), []kernels.Tensor{condAll, x, y}},
		{"Less", node("Less", graph.Attributes{}, []kernels.Tensor{x, col}, kernels.Value{DType: graph.Bool, Shape: x.Shape}), []kernels.Tensor{x, col}},
		{"Where", node("Where", graph.Attributes{}, []kernels.Tensor{cond, x, row}, value(x)), []kernels.Tensor{cond, x, row}},
		{"Tanh", node("Tanh", graph.Attributes{}, []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{"Clip", node("Clip", graph.Attributes{}, []kernels.Tensor{x, f32(nil, []float32{-0.5}), root}, value(x)), []kernels.Tensor{x, f32(nil, []float32{-0.5}), root}},
		{"Softmax", node("Softmax", graph.Attributes{}, []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{"Softmax axis 1", node("Softmax", kernels.Attrs("axis", 1), []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{"FastGelu", msNode("FastGelu", graph.Attributes{}, []kernels.Tensor{x, row}, value(x)), []kernels.Tensor{x, row}},
		{"Transpose", node("Transpose", kernels.Attrs("perm", []int64{0, 1, 3, 2}), []kernels.Tensor{big}, value(big)), []kernels.Tensor{big}},
		{"Transpose outer dims", node("Transpose", kernels.Attrs("perm", []int64{1, 0, 2}), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: []int64{96, 4, 200}}), []kernels.Tensor{x}},
		{"ReduceMax", node("ReduceMax", kernels.Attrs("axes", []int64{-1}), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: []int64{4, 96, 1}}), []kernels.Tensor{x}},
		{"ArgMax", node("ArgMax", kernels.Attrs("axis", -1, "keepdims", 0), []kernels.Tensor{x}, kernels.Value{DType: graph.Int64, Shape: []int64{4, 96}}), []kernels.Tensor{x}},
		{"GatherElements last", node("GatherElements", kernels.Attrs("axis", 2), []kernels.Tensor{x, i64(x.Shape, idxLast)}, value(x)), []kernels.Tensor{x, i64(x.Shape, idxLast)}},
		{"GatherElements middle", node("GatherElements", kernels.Attrs("axis", 1), []kernels.Tensor{x, i64(x.Shape, idxMid)}, value(x)), []kernels.Tensor{x, i64(x.Shape, idxMid)}},
		{"Trilu", node("Trilu", kernels.Attrs("upper", 0), []kernels.Tensor{x}, value(x)), []kernels.Tensor{x}},
		{"CumSum", node("CumSum", kernels.Attrs("reverse", 1), []kernels.Tensor{x, i64([]int64{1}, []int64{1})}, value(x)), []kernels.Tensor{x, i64([]int64{1}, []int64{1})}},
		{"Tile", node("Tile", graph.Attributes{}, []kernels.Tensor{half, i64([]int64{3}, []int64{1, 1, 2})}, value(x)), []kernels.Tensor{half, i64([]int64{3}, []int64{1, 1, 2})}},
		{"Split", node("Split", kernels.Attrs("axis", 2), []kernels.Tensor{x, i64([]int64{2}, []int64{120, 80})},
			kernels.Value{DType: graph.Float32, Shape: []int64{4, 96, 120}}, kernels.Value{DType: graph.Float32, Shape: []int64{4, 96, 80}}), []kernels.Tensor{x, i64([]int64{2}, []int64{120, 80})}},
		{"RotaryEmbedding", msNode("RotaryEmbedding", graph.Attributes{}, []kernels.Tensor{x, posT, cache, cache}, value(x)), []kernels.Tensor{x, posT, cache, cache}},
		{"Gemm bias row", node("Gemm", graph.Attributes{}, []kernels.Tensor{a, b, row}, kernels.Value{DType: graph.Float32, Shape: []int64{400, 200}}), []kernels.Tensor{a, b, row}},
		{"Attention packed", msNode("Attention", kernels.Attrs("num_heads", 4), []kernels.Tensor{q, wqkv, bias3}, value(q)), []kernels.Tensor{q, wqkv, bias3}},
		{"MultiHeadAttention bias", msNode("MultiHeadAttention", kernels.Attrs("num_heads", 2), []kernels.Tensor{q, q, q, bias3}, value(q)), []kernels.Tensor{q, q, q, bias3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := runOn(t, 1, c.n, c.in...)
			got := runOn(t, 4, c.n, c.in...)
			for i := range want {
				require.Equal(t, want[i].Data, got[i].Data, "output %d", i)
			}
		})
	}
}

// splitRuns cuts one long run into runs of a divisor of its length, keeping every operand's
// element at the same offset, and leaves plans it cannot or need not split alone.
func TestSplitRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		out     []int64
		ins     [][]int64
		workers int
		dims    []int
		strides [][]int
	}{
		{"one run", []int64{4, 96, 200}, [][]int64{{4, 96, 200}, {1}}, 4, []int{5, 15360}, [][]int{{15360, 1}, {0, 0}}},
		{"rows of a row", []int64{300, 512}, [][]int64{{300, 512}, {512}}, 4, []int{300, 512}, [][]int{{512, 1}, {0, 1}}},
		{"one worker", []int64{4, 96, 200}, [][]int64{{4, 96, 200}, {1}}, 1, []int{76800}, [][]int{{1}, {0}}},
		{"small", []int64{100, 300}, [][]int64{{100, 300}, {100, 300}}, 4, []int{30000}, [][]int{{1}, {1}}},
		{"no divisor", []int64{65537}, [][]int64{{65537}, {65537}}, 4, []int{65537}, [][]int{{1}, {1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := newBPlan(tc.out, tc.ins...)
			require.NoError(t, err)
			p.splitRuns(tc.workers)
			require.Equal(t, tc.dims, p.dims[:p.rank])
			for k, st := range tc.strides {
				require.Equal(t, st, p.st[k][:p.rank], "operand %d", k)
			}
		})
	}
}

// A split GatherElements still refuses an index out of range, wherever it lies.
func TestParallelGatherElementsRejectsBadIndex(t *testing.T) {
	r := rng(t, 32)
	x := randF32(r, 4, 96, 200)
	for _, at := range []int{0, 4*96*200/2 + 7, 4*96*200 - 1} {
		idx := make([]int64, 4*96*200)
		idx[at] = 200
		n := node("GatherElements", kernels.Attrs("axis", 2), []kernels.Tensor{x, i64(x.Shape, idx)}, value(x))
		inst, err := registry.Select(n, kernels.Target{Backend: kernels.BackendCPU, Workers: 4})
		require.NoError(t, err)
		out := []kernels.Tensor{kernels.MustTensor(graph.Float32, x.Shape...)}
		require.ErrorContains(t, inst.Run([]kernels.Tensor{x, i64(x.Shape, idx)}, out, nil, 0), "index 200 out of range for dim 200", "bad index at %d", at)
	}
}
