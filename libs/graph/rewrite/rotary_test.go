package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// TestRotaryTables: the rotary fusion reads the first half of cos and sin, so it needs tables
// whose halves are equal; a table built otherwise is left alone.
func TestRotaryTables(t *testing.T) {
	s := load(t, "qwen2").Spec()
	for i, n := range s.Nodes {
		if n.Name == "node_cat" { // cat = Concat(freqs, freqs): make it Concat(freqs, -freqs)
			s.Nodes[i].Inputs[1] = "neg_freqs"
			s.Nodes = append(s.Nodes, graph.NodeSpec{Name: "neg_freqs", OpType: "Neg", Inputs: []string{n.Inputs[0]}, Outputs: []string{"neg_freqs"}})
		}
	}
	m, err := graph.Build(s)
	require.NoError(t, err)
	_, rep, err := rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Zero(t, rep.Count(rewrite.Rotary))
	require.Equal(t, 2, rep.Count(rewrite.Attention))
	var reasons []string
	for _, u := range rep.Unfused {
		require.Equal(t, rewrite.Rotary, u.Kind)
		reasons = append(reasons, u.Reason)
	}
	require.Len(t, reasons, 5, "4 rotary embeddings, and the Neg made here, which feeds a Concat")
	require.Contains(t, reasons[0], "node_cat does not concatenate -x2 and x1")
	for _, r := range reasons[1:] {
		require.Contains(t, r, "the Cos table unsqueeze_16 is not Cos(Concat(f, f)): its halves may differ")
	}
}
