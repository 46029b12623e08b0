package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
)

// TestMatMulBias: a linear layer's MatMul and bias Add become one Gemm with the bias as C, over
// views of x; a product read elsewhere, or an addend that is no bias row, stays as exported.
func TestMatMulBias(t *testing.T) {
	for _, swap := range []bool{false, true} {
		s := rewritetest.Linear(graph.BFloat16, 3, 8, 5)
		if swap { // Add(b, MatMul(x, W))
			in := s.Nodes[1].Inputs
			in[0], in[1] = in[1], in[0]
		}
		m, err := graph.Build(s)
		require.NoError(t, err)
		f, rep, err := rewrite.Fuse(m, rewrite.Options{})
		require.NoError(t, err)
		require.Equal(t, 1, rep.Count(rewrite.MatMulBias), "%+v", rep.Unfused)
		require.Equal(t, []string{"bias", "n1_MatMul"}, rep.Fused[0].Replaced)
		var gemm *graph.Node
		for _, n := range f.Nodes {
			require.NotEqual(t, "MatMul", n.OpType)
			require.NotEqual(t, "Add", n.OpType)
			if n.OpType == "Gemm" {
				gemm = n
			}
		}
		require.NotNil(t, gemm)
		require.Equal(t, rep.Fused[0].Node, gemm.Name)
		require.Len(t, gemm.Inputs, 3)
		require.Equal(t, s.Initializers[1].Name, gemm.Inputs[2].Name, "the bias is C")
		require.Equal(t, "[6, 5]", gemm.Outputs[0].Shape.String())
		require.Equal(t, "[2, 3, 5]", f.Value("y").Shape.String())
	}

	for _, tc := range []struct {
		name, wants string
		edit        func(s *graph.Spec)
	}{
		{"product read twice", "is read by", func(s *graph.Spec) { s.Outputs = append(s.Outputs, s.Nodes[0].Outputs[0]) }},
		{"addend not a row", "is not a bias of 5", func(s *graph.Spec) {
			full, err := graph.NewTensor("full", s.Initializers[1].DType, []int64{3, 5}, make([]byte, 30))
			if err != nil {
				panic(err)
			}
			s.Initializers = append(s.Initializers, full)
			s.Nodes[1].Inputs[1] = "full"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := rewritetest.Linear(graph.BFloat16, 3, 8, 5)
			tc.edit(&s)
			m, err := graph.Build(s)
			require.NoError(t, err)
			_, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Zero(t, rep.Count(rewrite.MatMulBias))
			require.Len(t, rep.Unfused, 1, "%+v", rep.Unfused)
			require.Equal(t, rewrite.MatMulBias, rep.Unfused[0].Kind)
			require.Contains(t, rep.Unfused[0].Reason, tc.wants)
		})
	}
}
