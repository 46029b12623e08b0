package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
	"carve.dev/libs/graph/testmodels/zoo"
)

// TestAttentionLayoutSequenceFirst: torchvision's VisionTransformer (nn.MultiheadAttention,
// sequence-first), as the dynamo and the TorchScript exporter write it, keeps no copy around
// its attentions: Q, K and V are read in place from the in-projection, made again over the
// unmoved rows [B, S, 3E] (the layouts bs0hd, bs1hd, bs2hd), and Y is written [B, S, H, D]
// for the out-projection, also made over the unmoved rows, so that neither the transposes to
// and from sequence-first nor the Gathers of Q, K and V are left. Without the fusion they are.
func TestAttentionLayoutSequenceFirst(t *testing.T) {
	n := 0
	for _, zm := range zoo.Models() {
		if zm.Family != "vit_tv" {
			continue
		}
		n++
		t.Run(zm.Name, func(t *testing.T) {
			m, err := graph.Load(zm.WriteTemp(t))
			require.NoError(t, err)
			t.Cleanup(func() { m.Close() })
			before, _, err := rewrite.Fuse(m, rewrite.Options{Skip: []rewrite.Kind{rewrite.AttentionLayout}})
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Equal(t, 2, rep.Count(rewrite.AttentionLayout), "both layers; unfused: %+v", rep.Unfused)
			require.Positive(t, rewritetest.CopiesAroundAttention(before), "the exported copies, as the measure counts them")
			require.Zero(t, rewritetest.CopiesAroundAttention(f), "copies around the attentions")
			for _, a := range f.Nodes {
				if a.OpType != "Attention" {
					continue
				}
				for name, want := range map[string]string{graph.AttrQLayout: "bs0hd", graph.AttrKLayout: "bs1hd", graph.AttrVLayout: "bs2hd", graph.AttrYLayout: "bshd"} {
					require.Equal(t, want, a.Attrs.String(name, ""), "%s of %s", name, a.Name)
				}
				require.Same(t, a.Inputs[0], a.Inputs[1], "Q, K and V: one tensor")
				require.Same(t, a.Inputs[0], a.Inputs[2], "Q, K and V: one tensor")
			}
			count := func(g *graph.Model, op string) int {
				c := 0
				for _, x := range g.Nodes {
					if x.OpType == op {
						c++
					}
				}
				return c
			}
			// left: the patch embedding's Transpose and the class token's Gather
			require.Equal(t, 1, count(f, "Transpose"))
			t.Logf("nodes %d -> %d, Transposes %d -> %d, copies around the attentions %d -> 0", len(before.Nodes), len(f.Nodes),
				count(before, "Transpose"), count(f, "Transpose"), rewritetest.CopiesAroundAttention(before))
		})
	}
	require.Equal(t, 2, n, "the zoo's vit_tv exports")
}
