package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// convReluSpec is a residual block's end over x [b, 2, 3, s]: c = Conv(x, w, bias) (2 output
// channels, 1x1, pads keeping the shape), then the nodes given, z a second input of c's shape.
func convReluSpec(t *testing.T, nodes ...graph.NodeSpec) graph.Spec {
	b, s := graph.Sym("b"), graph.Sym("s")
	shape := graph.Shape{b, graph.Const(2), graph.Const(3), s}
	return graph.Spec{
		Opsets: map[string]int64{"": 18},
		Inputs: []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: shape}, {Name: "z", DType: graph.Float32, Shape: shape},
			{Name: "col", DType: graph.Float32, Shape: graph.Shape{graph.Const(1), graph.Const(2), graph.Const(1), graph.Const(1)}}},
		Initializers: []*graph.Tensor{f32Tensor(t, "w", []int64{2, 2, 1, 1}, 1, 2, 3, 4), f32Tensor(t, "bias", []int64{2}, 0.5, -0.5),
			f32Tensor(t, "w2", []int64{2, 2, 1, 1}, 4, 3, 2, 1)},
		Nodes: append([]graph.NodeSpec{{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w", "bias"}, Outputs: []string{"c"},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "strides", Kind: graph.AttrInts, Ints: []int64{1, 1}})}}, nodes...),
		Outputs: []string{"y"},
	}
}

func relu(in, out string) graph.NodeSpec {
	return graph.NodeSpec{Name: out, OpType: "Relu", Inputs: []string{in}, Outputs: []string{out}}
}

func add(a, b, out string) graph.NodeSpec {
	return graph.NodeSpec{Name: out, OpType: "Add", Inputs: []string{a, b}, Outputs: []string{out}}
}

// TestConvRelu: Relu(Conv) and Relu(Add(Conv, z)), in either operand order, become one
// com.microsoft.FusedConv with activation Relu and the Conv's attributes, z its fourth input;
// of an Add of two convolutions the first operand's fuses.
func TestConvRelu(t *testing.T) {
	for _, tc := range []struct {
		name     string
		nodes    []graph.NodeSpec
		inputs   []string
		replaced []string
		left     int // nodes besides the FusedConv
	}{
		{"relu", []graph.NodeSpec{relu("c", "y")}, []string{"x", "w", "bias"}, []string{"y", "conv"}, 0},
		{"relu of add", []graph.NodeSpec{add("c", "z", "a"), relu("a", "y")}, []string{"x", "w", "bias", "z"}, []string{"y", "a", "conv"}, 0},
		{"relu of add, conv second", []graph.NodeSpec{add("z", "c", "a"), relu("a", "y")}, []string{"x", "w", "bias", "z"}, []string{"y", "a", "conv"}, 0},
		{"two convs", []graph.NodeSpec{{Name: "conv2", OpType: "Conv", Inputs: []string{"x", "w2"}, Outputs: []string{"c2"}},
			add("c2", "c", "a"), relu("a", "y")}, []string{"x", "w2", "", "c"}, []string{"y", "a", "conv2"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(convReluSpec(t, tc.nodes...))
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Equal(t, 1, rep.Count(rewrite.ConvRelu), "%+v", rep.Unfused)
			require.ElementsMatch(t, tc.replaced, rep.Fused[0].Replaced)
			require.Equal(t, "com.microsoft.FusedConv", rep.Fused[0].Op)
			require.Len(t, f.Nodes, 1+tc.left)
			n := f.Nodes[len(f.Nodes)-1]
			require.Equal(t, "com.microsoft", n.Domain)
			require.Equal(t, "FusedConv", n.OpType)
			var ins []string
			for _, v := range n.Inputs {
				name := ""
				if v != nil {
					name = v.Name
				}
				ins = append(ins, name)
			}
			require.Equal(t, tc.inputs, ins)
			require.Equal(t, "Relu", n.Attrs.String("activation", ""))
			if tc.left == 0 {
				require.Equal(t, []int64{1, 1}, n.Attrs.Ints("strides"), "the Conv's attributes are kept")
			}
			require.Equal(t, "y", n.Outputs[0].Name)
			require.Equal(t, m.Value("y").String(), f.Value("y").String())
		})
	}
}

// TestConvReluLeft: an Add that broadcasts, a convolution's output read elsewhere, and an Add's
// output read elsewhere stay as exported, with the reason.
func TestConvReluLeft(t *testing.T) {
	for _, tc := range []struct {
		name   string
		nodes  []graph.NodeSpec
		extra  string // another graph output
		reason string
	}{
		{"broadcast", []graph.NodeSpec{add("c", "col", "a"), relu("a", "y")}, "", "not another value of the convolution's output's type and shape"},
		{"conv read elsewhere", []graph.NodeSpec{relu("c", "y")}, "c", "the Relu's input c is read by"},
		{"conv read elsewhere, add", []graph.NodeSpec{add("c", "z", "a"), relu("a", "y")}, "c", "the convolution's output c is read by"},
		{"add read elsewhere", []graph.NodeSpec{add("c", "z", "a"), relu("a", "y")}, "a", "the Relu's input a is read by"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := convReluSpec(t, tc.nodes...)
			if tc.extra != "" {
				s.Outputs = append(s.Outputs, tc.extra)
			}
			m, err := graph.Build(s)
			require.NoError(t, err)
			_, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Zero(t, rep.Count(rewrite.ConvRelu))
			require.Len(t, rep.Unfused, 1)
			require.Equal(t, rewrite.ConvRelu, rep.Unfused[0].Kind)
			require.Contains(t, rep.Unfused[0].Reason, tc.reason)
		})
	}
}
