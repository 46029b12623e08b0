package rewrite_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

func f32Tensor(t *testing.T, name string, shape []int64, xs ...float32) *graph.Tensor {
	t.Helper()
	b := make([]byte, 0, 4*len(xs))
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	w, err := graph.NewTensor(name, graph.Float32, shape, b)
	require.NoError(t, err)
	return w
}

func hostFloats(t *testing.T, v *graph.Value) []float32 {
	t.Helper()
	h, err := v.Init.Host()
	require.NoError(t, err)
	out := make([]float32, len(h.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(h.Data[4*i:]))
	}
	return out
}

// convBNSpec is Conv(x, w[, b]) then BatchNormalization over 2 output channels of 1x2 kernels.
func convBNSpec(t *testing.T, bias bool, extra ...graph.NodeSpec) graph.Spec {
	b, s := graph.Sym("b"), graph.Sym("s")
	inits := []*graph.Tensor{
		f32Tensor(t, "w", []int64{2, 1, 1, 2}, 1, 2, 3, 4),
		f32Tensor(t, "scale", []int64{2}, 2, 0.5),
		f32Tensor(t, "shift", []int64{2}, 1, -1),
		f32Tensor(t, "mean", []int64{2}, 0.25, -2),
		f32Tensor(t, "var", []int64{2}, 3, 0.75),
	}
	conv := []string{"x", "w"}
	if bias {
		inits = append(inits, f32Tensor(t, "bias", []int64{2}, 0.5, 1.5))
		conv = append(conv, "bias")
	}
	eps := graph.NewAttributes(graph.Attribute{Name: "epsilon", Kind: graph.AttrFloat, Float: 1})
	return graph.Spec{
		Opsets:       map[string]int64{"": 18},
		Inputs:       []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{b, graph.Const(1), graph.Const(3), s}}},
		Initializers: inits,
		Nodes: append([]graph.NodeSpec{
			{Name: "conv", OpType: "Conv", Inputs: conv, Outputs: []string{"c"}},
			{Name: "bn", OpType: "BatchNormalization", Inputs: []string{"c", "scale", "shift", "mean", "var"}, Outputs: []string{"y"}, Attrs: eps},
		}, extra...),
		Outputs: []string{"y"},
	}
}

// TestConvBatchNorm: the batch norm folds into its convolution's weights and bias per output
// channel, the exported weights go, and the output keeps its name and shape.
func TestConvBatchNorm(t *testing.T) {
	for _, bias := range []bool{false, true} {
		m, err := graph.Build(convBNSpec(t, bias))
		require.NoError(t, err)
		f, rep, err := rewrite.Fuse(m, rewrite.Options{})
		require.NoError(t, err)
		require.Equal(t, 1, rep.Count(rewrite.ConvBatchNorm), "%+v", rep.Unfused)
		require.Equal(t, []string{"bn", "conv"}, rep.Fused[0].Replaced)
		require.Len(t, f.Nodes, 1)
		n := f.Nodes[0]
		require.Equal(t, "Conv", n.OpType)
		require.Equal(t, "y", n.Outputs[0].Name)
		require.Equal(t, m.Value("y").String(), f.Value("y").String())
		// s = scale / sqrt(var + 1): 2/2 = 1 and 0.5/sqrt(1.75)
		s1 := 0.5 / math.Sqrt(1.75)
		require.InDeltaSlice(t, []float64{1, 2, 3 * s1, 4 * s1}, f64(hostFloats(t, n.Inputs[1])), 1e-6)
		b0, b1 := 0.0, 0.0
		if bias {
			b0, b1 = 0.5, 1.5
		}
		require.InDeltaSlice(t, []float64{(b0-0.25)*1 + 1, (b1+2)*s1 - 1}, f64(hostFloats(t, n.Inputs[2])), 1e-6)
		for _, name := range []string{"w", "scale", "shift", "mean", "var", "bias"} {
			require.Nil(t, f.Value(name), "the exported %s is dropped", name)
		}
	}
}

// TestConvBatchNormLeft: a convolution's output read elsewhere, or a batch norm in training
// mode, stays as exported, with the reason.
func TestConvBatchNormLeft(t *testing.T) {
	s := convBNSpec(t, true, graph.NodeSpec{Name: "other", OpType: "Relu", Inputs: []string{"c"}, Outputs: []string{"r"}})
	s.Outputs = append(s.Outputs, "r")
	m, err := graph.Build(s)
	require.NoError(t, err)
	_, rep, err := rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Zero(t, rep.Count(rewrite.ConvBatchNorm))
	var left []rewrite.Unfused // the Relu of the shared output is a conv-relu candidate left too
	for _, u := range rep.Unfused {
		if u.Kind == rewrite.ConvBatchNorm {
			left = append(left, u)
		}
	}
	require.Len(t, left, 1)
	require.Contains(t, left[0].Reason, "convolution's output")

	s = convBNSpec(t, false)
	s.Nodes[1].Attrs = graph.NewAttributes(graph.Attribute{Name: "training_mode", Kind: graph.AttrInt, Int: 1})
	if m, err = graph.Build(s); err == nil { // a loader may refuse training mode outright
		_, rep, err = rewrite.Fuse(m, rewrite.Options{})
		require.NoError(t, err)
		require.Zero(t, rep.Count(rewrite.ConvBatchNorm))
	}
}

func f64(xs []float32) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
