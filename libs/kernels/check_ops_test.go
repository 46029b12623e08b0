package kernels_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// A few of the per-op checks every backend shares (check_*.go), at their rules' edges; the
// backends' tests run them on every op.
func TestOpChecks(t *testing.T) {
	f32 := func(shape ...int64) kernels.Value { return kernels.Value{DType: graph.Float32, Shape: shape} }
	i64 := func(shape ...int64) kernels.Value { return kernels.Value{DType: graph.Int64, Shape: shape} }
	node := func(op string, in []kernels.Value, out ...kernels.Value) *kernels.Node {
		return &kernels.Node{Op: op, Inputs: in, Outputs: out}
	}

	shape, fmod, err := kernels.CheckBinary(node("Add", []kernels.Value{f32(2, 1), f32(3)}, f32(2, 3)), kernels.BinaryArith)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3}, shape)
	require.False(t, fmod)
	_, _, err = kernels.CheckBinary(node("Mod", []kernels.Value{f32(2), f32(2)}, f32(2)), kernels.BinaryArith)
	require.ErrorContains(t, err, "Mod of float32 needs fmod=1")
	_, _, err = kernels.CheckBinary(node("Less", []kernels.Value{{DType: graph.Bool, Shape: []int64{2}}, {DType: graph.Bool, Shape: []int64{2}}}, kernels.Value{DType: graph.Bool, Shape: []int64{2}}), kernels.BinaryCompare)
	require.ErrorContains(t, err, "cannot compare bool")

	k, err := kernels.CheckSlice(node("Slice", []kernels.Value{f32(4, 5), i64(2), i64(2), i64(2)}, f32(2, 5)))
	require.NoError(t, err)
	require.Equal(t, int64(2), k)
	_, err = kernels.CheckSlice(node("Slice", []kernels.Value{f32(4, 5), i64(2), i64(1)}, f32(2, 5)))
	require.ErrorContains(t, err, "input 2 has 1 values, starts 2")

	b, m, err := kernels.CheckGatherND(&kernels.Node{Op: "GatherND", Attrs: kernels.Attrs("batch_dims", int64(1)),
		Inputs: []kernels.Value{f32(2, 3, 4), i64(2, 1)}, Outputs: []kernels.Value{f32(2, 4)}})
	require.NoError(t, err)
	require.Equal(t, [2]int{1, 1}, [2]int{b, m})

	r, err := kernels.CheckReduce(node("ReduceSum", []kernels.Value{f32(2, 3), {DType: graph.Int64, Shape: []int64{1}, Const: kernels.BytesOf([]int64{-1})}}, f32(2, 1)))
	require.NoError(t, err)
	require.False(t, r.AxesInput)
	require.Equal(t, []bool{false, true}, r.Reduced)
	_, err = kernels.CheckReduce(node("ReduceSum", []kernels.Value{f32(2, 3), {DType: graph.Int64, Shape: []int64{1}, Const: kernels.BytesOf([]int64{-1})}}, f32(2)))
	require.ErrorContains(t, err, "output 0 has shape [2], want [2 1]")
	r, err = kernels.CheckReduce(node("ReduceSum", []kernels.Value{f32(2, 3), i64(1)}, f32(2)))
	require.NoError(t, err)
	require.True(t, r.AxesInput, "axes held on the device are the run's")

	g, err := kernels.CheckNorm(&kernels.Node{Op: "SkipLayerNormalization", Inputs: []kernels.Value{f32(2, 3, 8), f32(3, 8), f32(8)}, Outputs: []kernels.Value{f32(2, 3, 8)}})
	require.NoError(t, err)
	require.Equal(t, [3]int64{6, 8, 3}, [3]int64{g.Rows, g.H, g.SkipRows})
	_, err = kernels.CheckNorm(&kernels.Node{Op: "LayerNormalization", Inputs: []kernels.Value{f32(2, 8), f32(3)}, Outputs: []kernels.Value{f32(2, 8)}})
	require.ErrorContains(t, err, "scale (input 1) has shape [3]")
	_, err = kernels.CheckNorm(&kernels.Node{Op: "RMSNormalization", Inputs: []kernels.Value{f32(2, 8), f32(8)}, Outputs: []kernels.Value{f32(2, 8), f32(2)}})
	require.ErrorContains(t, err, "has 2 outputs, want 1 to 1")

	kind, tm, err := kernels.CheckKeyMask(kernels.Value{DType: graph.Int32, Shape: []int64{2, 5}}, 2, 3, 6)
	require.NoError(t, err)
	require.Equal(t, kernels.KeyMaskRaw2, kind)
	require.Equal(t, int64(5), tm)
	_, _, err = kernels.CheckKeyMask(kernels.Value{DType: graph.Int32, Shape: []int64{3}}, 2, 3, 6)
	require.ErrorContains(t, err, "mask shape [3] is not supported")
}
