package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
)

// TestRelativeBias: DeBERTa's gathered content-to-position and position-to-content terms,
// their index written as the log buckets of i - j (or i - j itself), fuse into the Attention's
// relative bias: its tables [B, H, seq, 2k] and int32 indices of 2 seq - 1 entries, no
// [seq, seq] value left. An index that is no function of i - j alone (i + j, i - 2j) is not
// read as a relative bias: the term is read whole, and the detail says why.
func TestRelativeBias(t *testing.T) {
	base := rewritetest.Disentangled{B: 2, H: 3, D: 8, Span: 8, MaxPos: 64, C2P: true, P2C: true, Mask: true}
	for _, tc := range []struct {
		name     string
		edit     func(d *rewritetest.Disentangled)
		c2p, p2c bool
		why      string // a part of the detail when the index is refused
	}{
		{"log buckets, both terms, padding", func(d *rewritetest.Disentangled) {}, true, true, ""},
		{"i - j, no mask", func(d *rewritetest.Disentangled) { d.Rel, d.Mask = rewritetest.Plain, false }, true, true, ""},
		{"content-to-position alone", func(d *rewritetest.Disentangled) { d.P2C = false }, true, false, ""},
		{"position-to-content alone", func(d *rewritetest.Disentangled) { d.C2P = false }, false, true, ""},
		{"i + j", func(d *rewritetest.Disentangled) { d.Rel = rewritetest.NotToeplitzSum }, false, false, "is not ±(row - column) plus a constant"},
		{"i - 2j", func(d *rewritetest.Disentangled) { d.Rel = rewritetest.NotToeplitzScaled }, false, false, "nor a sum of positions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base
			tc.edit(&d)
			m, err := d.Model()
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Equal(t, 1, rep.Count(rewrite.Attention), "%+v", rep.Unfused)
			n := attentionNode(t, f)
			var detail string
			for _, x := range rep.Fused {
				if x.Kind == rewrite.Attention {
					detail = x.Detail
				}
			}
			seq := graph.Sym("seq")
			for _, x := range []struct {
				on         bool
				tab, index int
				what       string
			}{{tc.c2p, graph.AttnRelC2P, graph.AttnRelC2PIndex, "content-to-position"}, {tc.p2c, graph.AttnRelP2C, graph.AttnRelP2CIndex, "position-to-content"}} {
				if !x.on {
					require.Nil(t, n.Input(x.tab), x.what)
					require.NotContains(t, detail, x.what+" bias")
					continue
				}
				require.Contains(t, detail, x.what+" bias")
				tab, idx := n.Input(x.tab), n.Input(x.index)
				require.NotNil(t, tab, x.what)
				require.Equal(t, graph.Shape{graph.Const(2), graph.Const(3), seq, graph.Const(16)}.String(), tab.Shape.String())
				require.Equal(t, graph.Int32, idx.DType)
				require.Len(t, idx.Shape, 1)
			}
			if tc.why != "" {
				require.Contains(t, detail, "not read as a relative bias")
				require.Contains(t, detail, tc.why)
				require.Len(t, n.Inputs, 4, "Q, K, V and the bias read whole")
				return
			}
			// nothing [seq, seq] is left: no GatherElements, no value with two seq dims
			for _, x := range f.Nodes {
				require.NotEqual(t, "GatherElements", x.OpType)
				for _, o := range x.Outputs {
					if r := len(o.Shape); r >= 2 && o.Shape[r-1].Equal(seq) && o.Shape[r-2].Equal(seq) {
						t.Fatalf("%s %s is [.., seq, seq]", x.Name, o)
					}
				}
			}
			b, err := graph.Bind(f, map[string]int64{"seq": 11})
			require.NoError(t, err)
			for _, i := range []int{graph.AttnRelC2PIndex, graph.AttnRelP2CIndex} {
				if idx := n.Input(i); idx != nil {
					require.Equal(t, []int64{21}, b.Shape(idx))
				}
			}
		})
	}
}
