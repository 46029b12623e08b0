package kernels_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The checks every backend's Select and Bound share: labels, the part limit and the recipe's
// size, byte sizes, dim ranges.
func TestInstanceRecipe(t *testing.T) {
	key := kernels.Key(kernels.DomainMicrosoft, "MoE")
	label, r, err := kernels.InstanceRecipe(&kernels.Node{Name: "n1"}, key, "grouped", []alloc.Part{{Name: "a", Size: 8}})
	require.NoError(t, err)
	require.Equal(t, "n1:com.microsoft.MoE/grouped", label)
	require.Equal(t, label, r.Kernel)
	label, _, err = kernels.InstanceRecipe(&kernels.Node{}, kernels.Key("", "Conv"), "im2col", nil)
	require.NoError(t, err)
	require.Equal(t, "Conv/im2col", label)

	parts := make([]alloc.Part, kernels.MaxRecipeParts+1)
	for i := range parts {
		parts[i] = alloc.Part{Name: string(rune('a' + i)), Size: 64}
	}
	_, _, err = kernels.InstanceRecipe(&kernels.Node{}, key, "t", parts)
	require.ErrorContains(t, err, "recipe has 9 parts, more than 8")
	_, _, err = kernels.InstanceRecipe(&kernels.Node{}, key, "t", parts[:kernels.MaxRecipeParts])
	require.NoError(t, err)

	_, _, err = kernels.InstanceRecipe(&kernels.Node{}, key, "t", []alloc.Part{{Name: "a", Size: math.MaxInt64}, {Name: "b", Size: math.MaxInt64}})
	require.Error(t, err, "a recipe whose size overflows")
}

func TestCheckNodeSizesAndRange(t *testing.T) {
	ok := kernels.Value{DType: graph.Float32, Shape: []int64{2, 3}}
	huge := kernels.Value{DType: graph.Float32, Shape: []int64{1 << 40, 1 << 30}}
	require.NoError(t, kernels.CheckNodeSizes(&kernels.Node{Inputs: []kernels.Value{ok, {}}, Outputs: []kernels.Value{ok}}))
	require.Error(t, kernels.CheckNodeSizes(&kernels.Node{Inputs: []kernels.Value{ok}, Outputs: []kernels.Value{huge}}))

	vr := func(lo, hi int64) kernels.ValueRange {
		return kernels.ValueRange{DType: graph.Float32, Dims: []kernels.DimRange{{Lo: lo, Hi: hi}}}
	}
	require.NoError(t, kernels.CheckRange(&kernels.NodeRange{Inputs: []kernels.ValueRange{vr(0, 5)}, Outputs: []kernels.ValueRange{vr(3, 3)}}))
	require.ErrorContains(t, kernels.CheckRange(&kernels.NodeRange{Outputs: []kernels.ValueRange{vr(4, 2)}}), "invalid dim range [4, 2]")
	require.ErrorContains(t, kernels.CheckRange(&kernels.NodeRange{Inputs: []kernels.ValueRange{vr(-1, 2)}}), "invalid dim range [-1, 2]")
}

// The checks every backend's Run makes of the tensors it is given.
func TestCheckTensors(t *testing.T) {
	want := kernels.Expectations([]kernels.Value{{DType: graph.Float32, Shape: []int64{2, 3}}, {}})
	require.Equal(t, int64(24), want[0].Bytes)
	require.False(t, want[1].Present)
	f32 := func(shape ...int64) kernels.Tensor { return kernels.Tensor{DType: graph.Float32, Shape: shape} }
	require.NoError(t, kernels.CheckTensors("input", want, []kernels.Tensor{f32(2, 3), {}}))
	require.ErrorIs(t, kernels.CheckTensors("input", want, []kernels.Tensor{f32(2, 3)}), kernels.ErrRunArity)
	require.ErrorContains(t, kernels.CheckTensors("input", want, []kernels.Tensor{f32(3, 2), {}}), "input 0 has shape [3 2], want [2 3]")
	require.ErrorContains(t, kernels.CheckTensors("output", want, []kernels.Tensor{f32(6), {}}), "output 0 is float32[6], want float32[2 3]")
	got := []kernels.Tensor{f32(2, 3), {}}
	allocs := testing.AllocsPerRun(10, func() { _ = kernels.CheckTensors("input", want, got) })
	require.Zero(t, allocs)
}
