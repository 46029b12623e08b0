package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
)

// TestGatedMatMul: a gated MLP's two products over one input and its SwiGLU become one
// GatedMatMul(x, Wg, Wu) producing y under its name; nothing of the exported form is left, and
// the fused graph binds to the same output shape.
func TestGatedMatMul(t *testing.T) {
	for _, dt := range []graph.DType{graph.Float32, graph.Float16, graph.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			m, err := graph.Build(rewritetest.GatedMLP(dt, 3, 8, 5))
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Empty(t, rep.Unfused)
			require.Equal(t, 1, rep.Count(rewrite.SiLU))
			require.Equal(t, 1, rep.Count(rewrite.SwiGLU))
			require.Equal(t, 1, rep.Count(rewrite.GatedMatMul))
			require.Equal(t, 5, rep.NodesBefore)
			require.Equal(t, 1, rep.NodesAfter, "MatMul, MatMul, Sigmoid, Mul and Mul become one node")
			fu := rep.Fused[2]
			require.Equal(t, rewrite.GatedMatMul, fu.Kind)
			require.Equal(t, "dev.carve.GatedMatMul", fu.Op)
			require.Equal(t, "y", fu.Output)
			require.Equal(t, []string{"gate/SwiGLU", "n1_MatMul", "n2_MatMul"}, fu.Replaced)
			require.Equal(t, "swish(x·c0, alpha 1) * x·c1", fu.Detail)

			n := f.Value("y").Producer
			require.Equal(t, fu.Node, n.Name)
			require.Equal(t, graph.DomainCarve, n.Domain)
			require.Equal(t, "GatedMatMul", n.OpType)
			require.Equal(t, []string{"x", "c0", "c1"}, []string{n.Inputs[0].Name, n.Inputs[1].Name, n.Inputs[2].Name})
			require.Equal(t, float32(1), n.Attrs.Float("alpha", 0))
			require.True(t, f.Value("y").Output)
			require.Equal(t, dt, f.Value("y").DType)
			b1, err := graph.Bind(m, nil)
			require.NoError(t, err)
			b2, err := graph.Bind(f, nil)
			require.NoError(t, err)
			require.Equal(t, []int64{2, 3, 5}, b2.Shape(f.Value("y")))
			require.Equal(t, b1.Shape(m.Value("y")), b2.Shape(f.Value("y")))
		})
	}
}

// productsSwiGLU is dev.carve.SwiGLU(MatMul(x, wg), MatMul(x, wu), alpha) as a model may hold it
// already, x [4, 8] and wg [8, 6] float32.
func productsSwiGLU(t *testing.T, wuShape []int64, alpha float32) graph.Spec {
	t.Helper()
	weight := func(name string, shape []int64) *graph.Tensor {
		n, err := graph.NumElements(shape)
		require.NoError(t, err)
		w, err := graph.NewTensor(name, graph.Float32, shape, make([]byte, 4*n))
		require.NoError(t, err)
		return w
	}
	return graph.Spec{
		Opsets:       map[string]int64{"": 18, graph.DomainCarve: 1},
		Inputs:       []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Const(4), graph.Const(8)}}},
		Initializers: []*graph.Tensor{weight("wg", []int64{8, 6}), weight("wu", wuShape)},
		Nodes: []graph.NodeSpec{
			{Name: "mg", OpType: "MatMul", Inputs: []string{"x", "wg"}, Outputs: []string{"g"}},
			{Name: "mu", OpType: "MatMul", Inputs: []string{"x", "wu"}, Outputs: []string{"u"}},
			{Name: "sw", OpType: "SwiGLU", Domain: graph.DomainCarve, Inputs: []string{"g", "u"}, Outputs: []string{"y"},
				Attrs: graph.NewAttributes(graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: alpha})},
		},
		Outputs: []string{"y"},
	}
}

// TestGatedMatMulOfSwiGLU: a SwiGLU the model holds already fuses too, keeping its alpha.
func TestGatedMatMulOfSwiGLU(t *testing.T) {
	m, err := graph.Build(productsSwiGLU(t, []int64{8, 6}, 1.702))
	require.NoError(t, err)
	f, rep, err := rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Empty(t, rep.Unfused)
	require.Equal(t, 1, rep.Count(rewrite.GatedMatMul))
	require.Len(t, f.Nodes, 1)
	n := f.Nodes[0]
	require.Equal(t, "sw/GatedMatMul", n.Name)
	require.Equal(t, float32(1.702), n.Attrs.Float("alpha", 0))
	require.Equal(t, "y float32[4, 6]", f.Value("y").String())
}

// TestGatedMatMulUnfused: candidates that are not two products of weights over one input, each
// read by the SwiGLU alone, stay as exported (after SwiGLU) with the reason.
func TestGatedMatMulUnfused(t *testing.T) {
	// GatedMLP's nodes: n1_MatMul (gate), n2_MatMul (up), n3_Sigmoid, n4_Mul, gate (the Mul by up).
	mlp := func(edit func(s *graph.Spec)) graph.Spec {
		s := rewritetest.GatedMLP(graph.Float32, 3, 8, 5)
		edit(&s)
		return s
	}
	for _, tc := range []struct {
		name  string
		spec  graph.Spec
		wants string
		later rewrite.Kind // the kind that fuses the product instead, if any
	}{
		{"different inputs", mlp(func(s *graph.Spec) {
			s.Inputs = append(s.Inputs, graph.ValueSpec{Name: "x2", DType: graph.Float32, Shape: s.Inputs[0].Shape})
			s.Nodes[1].Inputs[0] = "x2"
		}), "gate and up read different inputs, x and x2", ""},
		{"gate read elsewhere", mlp(func(s *graph.Spec) { s.Outputs = append(s.Outputs, "v1_MatMul") }),
			"the gate v1_MatMul is read by gate/SwiGLU (dev.carve.SwiGLU), the graph's outputs, not only by gate/SwiGLU", ""},
		{"up read elsewhere", mlp(func(s *graph.Spec) { s.Outputs = append(s.Outputs, "v2_MatMul") }),
			"the up product v2_MatMul is read by gate/SwiGLU (dev.carve.SwiGLU), the graph's outputs, not only by gate/SwiGLU", ""},
		{"gate with a bias", mlp(func(s *graph.Spec) {
			b, err := graph.NewTensor("bg", graph.Float32, []int64{5}, make([]byte, 20))
			require.NoError(t, err)
			s.Initializers = append(s.Initializers, b)
			s.Nodes = append(s.Nodes, graph.NodeSpec{Name: "bias", OpType: "Add", Inputs: []string{"v1_MatMul", "bg"}, Outputs: []string{"gb"}})
			s.Nodes[2].Inputs[0], s.Nodes[3].Inputs[0] = "gb", "gb"
		}), "the gate gb comes from bias (Add), not a MatMul of a weight (a product with a bias is left to matmul-bias)", rewrite.MatMulBias},
		{"transposed weight", mlp(func(s *graph.Spec) {
			wt, err := graph.NewTensor("wgT", graph.Float32, []int64{5, 8}, make([]byte, 160))
			require.NoError(t, err)
			s.Initializers = append(s.Initializers, wt)
			s.Nodes = append(s.Nodes, graph.NodeSpec{Name: "tr", OpType: "Transpose", Inputs: []string{"wgT"}, Outputs: []string{"wg"}})
			s.Nodes[0].Inputs[1] = "wg"
		}), "the gate v1_MatMul multiplies by tr (Transpose), not a 2-D weight (a product with a transposed weight is left to transposed-weight)", rewrite.TransposedWeight},
		{"up of a broadcast weight", productsSwiGLU(t, []int64{8, 1}, 1), "the weights wg float32[8, 6] and wu float32[8, 1] differ in dtype or shape", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(tc.spec)
			require.NoError(t, err)
			_, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Zero(t, rep.Count(rewrite.GatedMatMul))
			require.Len(t, rep.Unfused, 1, "%+v", rep.Unfused)
			require.Equal(t, rewrite.GatedMatMul, rep.Unfused[0].Kind)
			require.Equal(t, "dev.carve.SwiGLU", rep.Unfused[0].Op)
			require.Equal(t, tc.wants, rep.Unfused[0].Reason)
			if tc.later != "" {
				require.Equal(t, 1, rep.Count(tc.later), "the product fuses in its own pass")
			}
		})
	}
}
