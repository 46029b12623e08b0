package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// expandedGatherSpec is one dev.carve.GatherElements node over data and idx, broadcasting idx
// to the shape of like (read by Shape, a host value), producing y.
func expandedGatherSpec(data, idx, like graph.ValueSpec) graph.Spec {
	return graph.Spec{
		Opsets: map[string]int64{"": 18, graph.DomainCarve: 1},
		Inputs: []graph.ValueSpec{data, idx, like},
		Nodes: []graph.NodeSpec{
			{Name: "shape", OpType: "Shape", Inputs: []string{like.Name}, Outputs: []string{"shape"}},
			{Name: "gather", OpType: "GatherElements", Domain: graph.DomainCarve, Inputs: []string{data.Name, idx.Name, "shape"}, Outputs: []string{"y"},
				Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: -1})},
		},
		Outputs: []string{"y"},
	}
}

func TestInferExpandedGatherElements(t *testing.T) {
	f, i := graph.Float32, graph.Int64
	for _, tc := range []struct {
		name            string
		data, idx, like graph.ValueSpec
		want            string
	}{
		{"leading axis", vs("x", f, "bh", "s", 16), vs("i", i, 1, "s", "s"), vs("l", f, "bh", "s", "s"), "y float32[bh, s, s]"},
		{"lower rank indices", vs("x", f, 4, "s", 16), vs("i", i, "s", "s"), vs("l", f, 4, 1, 1), "y float32[4, s, s]"},
		{"no broadcast", vs("x", f, 2, 3), vs("i", i, 2, 5), vs("l", f, 2, 5), "y float32[2, 5]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(expandedGatherSpec(tc.data, tc.idx, tc.like))
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Value("y").String())
		})
	}
}

func TestInferExpandedGatherElementsErrors(t *testing.T) {
	f, i := graph.Float32, graph.Int64
	_, err := graph.Build(expandedGatherSpec(vs("x", f, 4, 16), vs("i", i, 1, 4, 4), vs("l", f, 4, 4, 4)))
	var me *graph.ModelError
	require.ErrorAs(t, err, &me)
	require.Contains(t, me.Problem, "have rank 3, data rank 2")

	s := expandedGatherSpec(vs("x", f, 4, 16), vs("i", i, 4, 4), vs("l", f, 4, 4))
	s.Nodes = s.Nodes[1:]
	s.Nodes[0].Inputs[2] = "l" // a float tensor of runtime data, not a shape
	_, err = graph.Build(s)
	require.ErrorAs(t, err, &me)
	require.Contains(t, me.Problem, "is not computable on the host")
}
