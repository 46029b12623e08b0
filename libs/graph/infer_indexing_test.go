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

// TestHostDataOfRank2Shapes: Slice and Transpose carry host data at any rank, as torch's pad
// order conversion needs (TorchScript's F.pad: the pads as a [k, 2] tensor, its rows reversed
// by a step -1 Slice, transposed and flattened), so the Pad it feeds has a shape at load.
func TestHostDataOfRank2Shapes(t *testing.T) {
	i64 := func(name string, shape []int64, vals ...int64) *graph.Tensor {
		b := make([]byte, 0, 8*len(vals))
		for _, v := range vals {
			for k := 0; k < 8; k++ {
				b = append(b, byte(uint64(v)>>(8*k)))
			}
		}
		tt, err := graph.NewTensor(name, graph.Int64, shape, b)
		require.NoError(t, err)
		return tt
	}
	node := func(op string, ins []string, out string, attrs ...graph.Attribute) graph.NodeSpec {
		return graph.NodeSpec{Name: out, OpType: op, Inputs: ins, Outputs: []string{out}, Attrs: graph.NewAttributes(attrs...)}
	}
	spec := graph.Spec{
		Opsets: map[string]int64{"": 18},
		Inputs: []graph.ValueSpec{vs("x", graph.Float32, "h", "w")},
		Initializers: []*graph.Tensor{
			i64("pairs", []int64{4}, 1, 2, 3, 4), i64("k2", []int64{2}, -1, 2), i64("flat", []int64{1}, -1),
			i64("st", []int64{1}, -1), i64("en", []int64{1}, -(1 << 62)), i64("ax", []int64{1}, 0), i64("sp", []int64{1}, -1),
		},
		Nodes: []graph.NodeSpec{
			node("Reshape", []string{"pairs", "k2"}, "p2"),                                                                     // [[1, 2], [3, 4]]
			node("Slice", []string{"p2", "st", "en", "ax", "sp"}, "rev"),                                                       // [[3, 4], [1, 2]]
			node("Transpose", []string{"rev"}, "tr", graph.Attribute{Name: "perm", Kind: graph.AttrInts, Ints: []int64{1, 0}}), // [[3, 1], [4, 2]]
			node("Reshape", []string{"tr", "flat"}, "pads"),                                                                    // [3, 1, 4, 2]
			node("Pad", []string{"x", "pads"}, "y"),
		},
		Outputs: []string{"y"},
	}
	m, err := graph.Build(spec)
	require.NoError(t, err)
	require.Equal(t, "y float32[h + 7, w + 3]", m.Value("y").String())
}
