package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// expandedGatherSpec gathers two data tensors [b, s, 16] along the last axis with one index
// tensor [1, s, s] expanded to [b, s, s], as DeBERTa's layers share their relative positions.
func expandedGatherSpec() graph.Spec {
	f, i := graph.Float32, graph.Int64
	v := func(name string, dt graph.DType, dims ...graph.Dim) graph.ValueSpec {
		return graph.ValueSpec{Name: name, DType: dt, Shape: dims}
	}
	b, s := graph.Sym("b"), graph.Sym("s")
	axis := graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: -1})
	return graph.Spec{
		Opsets: map[string]int64{"": 18},
		Inputs: []graph.ValueSpec{v("x0", f, b, s, graph.Const(16)), v("x1", f, b, s, graph.Const(16)), v("pos", i, graph.Const(1), s, s), v("like", f, b, s, s)},
		Nodes: []graph.NodeSpec{
			{Name: "shape", OpType: "Shape", Inputs: []string{"like"}, Outputs: []string{"shape"}},
			{Name: "expand", OpType: "Expand", Inputs: []string{"pos", "shape"}, Outputs: []string{"idx"}},
			{Name: "g0", OpType: "GatherElements", Inputs: []string{"x0", "idx"}, Outputs: []string{"y0"}, Attrs: axis},
			{Name: "g1", OpType: "GatherElements", Inputs: []string{"x1", "idx"}, Outputs: []string{"y1"}, Attrs: axis},
		},
		Outputs: []string{"y0", "y1"},
	}
}

// TestExpandedGather: every GatherElements of the expanded indices reads them unexpanded, and
// the Expand goes once nothing reads it; while something else does, it stays.
func TestExpandedGather(t *testing.T) {
	m, err := graph.Build(expandedGatherSpec())
	require.NoError(t, err)
	f, rep, err := rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Count(rewrite.ExpandedGather), "%+v", rep.Unfused)
	require.Equal(t, []string{"g0", "expand"}, rep.Fused[0].Replaced)
	require.Equal(t, "dev.carve.GatherElements", rep.Fused[0].Op)
	require.Equal(t, "indices pos[1, s, s] broadcast to [b, s, s]", rep.Fused[0].Detail)
	for _, n := range f.Nodes {
		require.NotEqual(t, "Expand", n.OpType)
		if n.OpType == "GatherElements" {
			require.Equal(t, graph.DomainCarve, n.Domain)
			require.Equal(t, "pos", n.Inputs[1].Name)
			require.Equal(t, int64(-1), n.Attrs.Int("axis", 0))
		}
	}
	for _, y := range []string{"y0", "y1"} {
		require.Equal(t, m.Value(y).String(), f.Value(y).String())
	}

	s := expandedGatherSpec()
	s.Outputs = append(s.Outputs, "idx")
	m, err = graph.Build(s)
	require.NoError(t, err)
	f, rep, err = rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Count(rewrite.ExpandedGather))
	require.NotNil(t, f.Value("idx").Producer, "the expanded indices, a graph output, are still computed")
	require.Equal(t, "Expand", f.Value("idx").Producer.OpType)

	_, rep, err = rewrite.Fuse(m, rewrite.Options{Skip: []rewrite.Kind{rewrite.ExpandedGather}})
	require.NoError(t, err)
	require.Zero(t, rep.Count(rewrite.ExpandedGather))
}
