package rewrite_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
)

// attentionNode returns the fused graph's Attention node.
func attentionNode(t *testing.T, m *graph.Model) *graph.Node {
	t.Helper()
	var found *graph.Node
	for _, n := range m.Nodes {
		if n.OpType == "Attention" && n.Domain == "" {
			require.Nil(t, found, "two Attention nodes")
			found = n
		}
	}
	require.NotNil(t, found, "no Attention node")
	return found
}

// TestAttentionForms fuses every form the exporters write, checking what the fused node
// reads: K in [B, Hkv, T, D] (ungrouped), the scale, causality and the mask.
func TestAttentionForms(t *testing.T) {
	base := rewritetest.Attention{B: 2, Hq: 4, Hkv: 2, S: 5, T: 5, D: 8, Dv: 6, Scale: 0.3}
	for _, tc := range []struct {
		name       string
		edit       func(a *rewritetest.Attention)
		mask       string // the attn_mask input's producer op, "" for none, "input" for a graph input
		causal     bool
		kvHeads    int64
		guardInOut bool
	}{
		{"transpose, scaled scores, no mask", func(a *rewritetest.Attention) {}, "", false, 2, false},
		{"divided scores", func(a *rewritetest.Attention) { a.ScaleForm = rewritetest.DivScores }, "", false, 2, false},
		{"pytorch sdpa: scaled Q and K, reshaped K^T", func(a *rewritetest.Attention) {
			a.ScaleForm, a.KForm = rewritetest.ScaleQK, rewritetest.KReshaped
		}, "", false, 2, false},
		{"torchscript: scale computed from Q's shape", func(a *rewritetest.Attention) { a.ScaleForm = rewritetest.ScaleFromShape }, "", false, 2, false},
		{"bshd K (gpt2, bert)", func(a *rewritetest.Attention) { a.KForm, a.Hq = rewritetest.KFromBSHD, 2 }, "", false, 2, false},
		{"unscaled", func(a *rewritetest.Attention) { a.ScaleForm, a.Scale = rewritetest.NoScale, 1 }, "", false, 2, false},
		{"float mask input", func(a *rewritetest.Attention) { a.Mask = rewritetest.FloatMask }, "input", false, 2, false},
		{"-inf padding", func(a *rewritetest.Attention) { a.Mask = rewritetest.InfMask }, "Unsqueeze", false, 2, false},
		{"-inf causal padding, guarded", func(a *rewritetest.Attention) {
			a.Mask, a.Causal, a.Guard = rewritetest.InfMask, true, true
		}, "Unsqueeze", true, 2, true},
		{"min causal padding", func(a *rewritetest.Attention) { a.Mask, a.Causal = rewritetest.MinMask, true }, "Where", true, 2, false},
		{"min causal padding, more keys than queries", func(a *rewritetest.Attention) { a.Mask, a.Causal, a.T = rewritetest.MinMask, true, 7 }, "Where", false, 2, false},
		{"min padding (always-true parts dropped)", func(a *rewritetest.Attention) { a.Mask = rewritetest.MinMask }, "Where", false, 2, false},
		{"mha", func(a *rewritetest.Attention) { a.Hq, a.Hkv = 2, 2 }, "", false, 2, false},
		{"soft-capped scores (Gemma2's eager attention)", func(a *rewritetest.Attention) { a.Softcap = 50 }, "", false, 2, false},
		{"soft-capped, causal padding", func(a *rewritetest.Attention) { a.Softcap, a.Mask, a.Causal = 30, rewritetest.MinMask, true }, "Where", true, 2, false},
		{"mqa", func(a *rewritetest.Attention) { a.Hkv = 1 }, "", false, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := base
			tc.edit(&a)
			a = a.Normalize()
			m, err := a.Model()
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			for _, u := range rep.Unfused {
				// a soft cap's Tanh is a GELU candidate too, and no GELU
				require.True(t, a.Softcap > 0 && u.Kind == rewrite.Gelu, "left as exported: %+v", u)
			}
			require.Equal(t, 1, rep.Count(rewrite.Attention), "%+v", rep)
			n := attentionNode(t, f)
			if tc.causal && a.Mask == rewritetest.MinMask {
				// rows with no key kept are set to the mean of V after the fused node
				require.Equal(t, rewritetest.Output+"/attention", n.Outputs[0].Name)
				fix := f.Value(rewritetest.Output).Producer
				require.Equal(t, "Reshape", fix.OpType, "grouped heads: Where over [B, Hkv, R, S, Dv]")
				require.Equal(t, "[2, 1, 1, 5]", n.Input(3).Shape.String(), "the float mask is the padding's: no queries x keys mask left")
			} else {
				require.Equal(t, rewritetest.Output, n.Outputs[0].Name, "the fused node keeps the output's name")
			}
			require.Equal(t, "q", n.Inputs[0].Name)
			require.Equal(t, tc.kvHeads, mustConst(t, n.Inputs[1].Shape[1]))
			require.Equal(t, tc.kvHeads, mustConst(t, n.Inputs[2].Shape[1]))
			require.InEpsilon(t, a.Scale, n.Attrs.Float("scale", 0), 1e-6)
			require.Equal(t, a.Softcap, n.Attrs.Float("softcap", 0))
			require.Equal(t, tc.causal, n.Attrs.Int("is_causal", 0) == 1)
			switch mask := n.Input(3); {
			case tc.mask == "":
				require.Nil(t, mask)
			case tc.mask == "input":
				require.Equal(t, "mask", mask.Name)
			default:
				require.NotNil(t, mask)
				require.Equal(t, tc.mask, mask.Producer.OpType)
				if a.Mask == rewritetest.InfMask {
					require.Equal(t, graph.Bool, mask.DType)
					require.Equal(t, "[2, 1, 1, 5]", mask.Shape.String(), "padding only: no queries x keys mask left")
				}
			}
			for _, n := range f.Nodes {
				require.NotContains(t, []string{"Softmax", "IsNaN"}, n.OpType, "nothing of the pattern is left")
			}
		})
	}
}

func mustConst(t *testing.T, d graph.Dim) int64 {
	t.Helper()
	v, ok := d.Value()
	require.True(t, ok, "dim %s", d)
	return v
}

// TestAttentionRandom: every random case of the exporters' forms fuses, whole.
func TestAttentionRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 1))
	for range 300 {
		a := rewritetest.Random(r)
		m, err := a.Model()
		require.NoError(t, err, "%s", a)
		f, rep, err := rewrite.Fuse(m, rewrite.Options{})
		require.NoError(t, err, "%s", a)
		require.Equal(t, 1, rep.Count(rewrite.Attention), "%s: %+v", a, rep.Unfused)
		require.Equal(t, len(f.Nodes), rep.NodesAfter)
		n := attentionNode(t, f)
		// a causal part over one query or one key is all true; it stays in the bool mask; a
		// mask expanded over the heads is read whole
		compact := (a.Mask == rewritetest.InfMask || a.Mask == rewritetest.MinMask && a.S == a.T) && a.Heads != rewritetest.HeadsAll
		// (a window of one key is the diagonal: causal too)
		require.Equal(t, (a.Causal || a.Window == 1) && compact && a.S > 1 && a.T > 1, n.Attrs.Int("is_causal", 0) == 1, "%s", a)
	}
}

// TestAttentionLeftAlone: a pattern that matches only in part stays as exported, and the
// report says why.
func TestAttentionLeftAlone(t *testing.T) {
	a := rewritetest.Attention{B: 2, Hq: 2, Hkv: 2, S: 4, T: 4, D: 4, Dv: 4, Scale: 0.5, Mask: rewritetest.InfMask, Guard: true}.Normalize()
	find := func(s *graph.Spec, op string) int {
		i := slices.IndexFunc(s.Nodes, func(n graph.NodeSpec) bool { return n.OpType == op })
		require.GreaterOrEqual(t, i, 0, op)
		return i
	}
	for _, tc := range []struct {
		name  string
		edit  func(s *graph.Spec)
		wants string
	}{
		{"probabilities are an output", func(s *graph.Spec) {
			s.Outputs = append(s.Outputs, s.Nodes[find(s, "Softmax")].Outputs[0])
		}, "are a graph output"},
		{"scores read twice", func(s *graph.Spec) {
			s.Outputs = append(s.Outputs, s.Nodes[find(s, "MatMul")].Outputs[0])
		}, "the scores"},
		{"softmax over queries", func(s *graph.Spec) {
			s.Nodes[find(s, "Softmax")].Attrs = graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: 2})
		}, "not over the keys"},
		{"guard replaces NaN by 1", func(s *graph.Spec) {
			w := &s.Nodes[find(s, "IsNaN")+1]
			one, err := graph.NewTensor("one", graph.Float32, nil, []byte{0, 0, 0x80, 0x3f})
			require.NoError(t, err)
			s.Initializers = append(s.Initializers, one)
			w.Inputs[1] = "one"
		}, "not by the constant 0"},
		{"scale is not a constant", func(s *graph.Spec) {
			i := find(s, "Mul")
			s.Inputs = append(s.Inputs, graph.ValueSpec{Name: "s", DType: graph.Float32, Shape: graph.Shape{}})
			s.Nodes[i].Inputs[1] = "s"
		}, "is a (scaled) MatMul of Q and K, soft-capped or not; n3_Mul scales v2_MatMul by s, which is not known at load: it reads the data of the input s"},
		{"K^T is no transpose", func(s *graph.Spec) {
			s.Nodes[find(s, "Transpose")].Attrs = graph.NewAttributes(graph.Attribute{Name: "perm", Kind: graph.AttrInts, Ints: []int64{1, 0, 3, 2}})
		}, "perm [1 0 3 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := a.Spec()
			tc.edit(&s)
			m, err := graph.Build(s)
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Zero(t, rep.Count(rewrite.Attention))
			require.Same(t, m, f, "nothing fused: the model itself")
			require.Len(t, rep.Unfused, 1)
			require.Equal(t, rewrite.Attention, rep.Unfused[0].Kind)
			require.Equal(t, "Softmax", rep.Unfused[0].Op)
			require.Contains(t, rep.Unfused[0].Reason, tc.wants)
		})
	}
}

// TestAttentionScaleFromShape: a scale computed on the host from a Shape (TorchScript's
// 1/sqrt(head_dim), applied as its square root to Q and to K^T) fuses when the dim it reads
// is static, its nodes removed with the pattern; when that dim is symbolic the scale is not
// known at load and the attention stays as exported, the reason naming the dim.
func TestAttentionScaleFromShape(t *testing.T) {
	a := rewritetest.Attention{B: 2, Hq: 2, Hkv: 2, S: 5, T: 5, D: 8, Dv: 6, ScaleForm: rewritetest.ScaleFromShape,
		Mask: rewritetest.InfMask, Causal: true, Guard: true}.Normalize()
	m, err := a.Model()
	require.NoError(t, err)
	f, rep, err := rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Empty(t, rep.Unfused)
	require.Equal(t, 1, rep.Count(rewrite.Attention))
	n := attentionNode(t, f)
	require.InEpsilon(t, 1/math.Sqrt(8), n.Attrs.Float("scale", 0), 1e-6)
	require.Equal(t, "q", n.Inputs[0].Name, "Q's scale is in the fused node's, not left on Q")
	for _, n := range f.Nodes {
		require.NotContains(t, []string{"Shape", "Sqrt", "Mul", "Div"}, n.OpType, "the scale's nodes go with the pattern")
	}

	// the head size symbolic: Shape(Q)[-1:] is [head] at load
	s := a.Spec()
	for i, in := range s.Inputs {
		if in.Name == "q" || in.Name == "k" {
			s.Inputs[i].Shape[3] = graph.Sym("head")
		}
	}
	m, err = graph.Build(s)
	require.NoError(t, err)
	f, rep, err = rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Same(t, m, f, "nothing fused")
	require.Len(t, rep.Unfused, 1)
	u := rep.Unfused[0]
	require.Equal(t, rewrite.Attention, u.Kind)
	require.Contains(t, u.Reason, "the scale of K^T is not a constant")
	require.Contains(t, u.Reason, "which is not known at load")
	require.Contains(t, u.Reason, "= [head] depends on the dim head")
}

// TestMaskSpanningKeys: a mask broadcast over the keys (last dim 1) is no ONNX attn_mask.
func TestMaskSpanningKeys(t *testing.T) {
	a := rewritetest.Attention{B: 1, Hq: 2, Hkv: 2, S: 3, T: 3, D: 4, Dv: 4, Scale: 0.5, Mask: rewritetest.FloatMask}.Normalize()
	s := a.Spec()
	for i, in := range s.Inputs {
		if in.Name == "mask" {
			s.Inputs[i].Shape[3] = graph.Const(1)
		}
	}
	m, err := graph.Build(s)
	require.NoError(t, err)
	_, rep, err := rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Len(t, rep.Unfused, 1)
	require.Contains(t, rep.Unfused[0].Reason, "does not span the 3 keys")
}

// TestAttentionBatchHeads: the scores and probabilities in the batch·heads form
// [batch*heads, queries, keys], between Reshapes that split or merge the heads on either side
// of the mask and of the softmax, fuse to one Attention over the 4-D Q, K and V the Reshapes
// were made from; a 3-D output is merged back from the fused node's.
func TestAttentionBatchHeads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		heads int
		edit  func(a *rewritetest.Attention)
	}{
		{"bloom: split before the mask, merged after the softmax", rewritetest.HeadsBloom, func(a *rewritetest.Attention) {}},
		{"bloom, bshd K^T merged", rewritetest.HeadsBloom, func(a *rewritetest.Attention) { a.KForm, a.Hq = rewritetest.KFromBSHD, 2 }},
		{"bloom, scaled Q and K^T", rewritetest.HeadsBloom, func(a *rewritetest.Attention) { a.ScaleForm = rewritetest.ScaleQK }},
		{"probabilities merged, output left 3-D", rewritetest.HeadsProbs, func(a *rewritetest.Attention) {}},
		{"all 3-D, the mask expanded over the heads", rewritetest.HeadsAll, func(a *rewritetest.Attention) { a.Guard = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := rewritetest.Attention{B: 2, Hq: 4, Hkv: 2, S: 5, T: 5, D: 8, Dv: 6, Scale: 0.3, Heads: tc.heads, Mask: rewritetest.MinMask, Causal: true}
			tc.edit(&a)
			a = a.Normalize()
			m, err := a.Model()
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Empty(t, rep.Unfused)
			require.Equal(t, 1, rep.Count(rewrite.Attention), "%+v", rep)
			require.Contains(t, rep.Fused[0].Detail, fmt.Sprintf("batch·heads form split as [2, %d]", a.Hq))
			n := attentionNode(t, f)
			require.Equal(t, "q", n.Inputs[0].Name, "Q under its Reshape to 3-D")
			require.Equal(t, fmt.Sprintf("[2, %d, 5, 8]", a.Hq), n.Inputs[0].Shape.String())
			require.Equal(t, int64(a.Hkv), mustConst(t, n.Inputs[1].Shape[1]), "grouped heads under the 3-D K")
			require.Equal(t, fmt.Sprintf("[2, %d, 5, 6]", a.Hq), n.Outputs[0].Shape.String())
			require.InEpsilon(t, a.Scale, n.Attrs.Float("scale", 0), 1e-6)
			y := f.Value(rewritetest.Output)
			if tc.heads == rewritetest.HeadsProbs {
				require.Equal(t, "[8, 5, 6]", y.Shape.String(), "the 3-D output is merged back")
				require.Equal(t, "Reshape", y.Producer.OpType)
			} else {
				require.Equal(t, n.Outputs[0].Shape.String(), y.Shape.String())
			}
			if tc.heads == rewritetest.HeadsAll {
				require.Equal(t, "[2, 4, 5, 5]", n.Input(3).Shape.String(), "a mask expanded over the heads is read whole")
			} else {
				require.True(t, n.Attrs.Int("is_causal", 0) == 1)
				require.Equal(t, "[2, 1, 1, 5]", n.Input(3).Shape.String(), "the padding only")
			}
			for _, n := range f.Nodes {
				require.NotContains(t, []string{"Softmax", "MatMul"}, n.OpType, "nothing of the pattern is left")
			}
		})
	}
}

// TestAttentionKeyBias: a per-key bias for each head (Bloom's ALiBi, [batch*heads, 1, keys] or
// [batch, heads, 1, keys]), which evaluation does not recognise as a mask, is added whole to
// the fused node's float attn_mask, with the recognised causal part as is_causal and the
// padding added to it: no [queries, keys] tensor is left.
func TestAttentionKeyBias(t *testing.T) {
	for _, tc := range []struct {
		name       string
		heads      int
		mask       int
		causal     bool
		wantMask   string // the attn_mask input's shape
		wantCausal bool
		bias       string // the bias's name as the attn_mask reads it
	}{
		{"4-D bias alone", rewritetest.Heads4D, rewritetest.NoMask, false, "[2, 4, 1, 5]", false, "bias"},
		{"3-D bias alone, split", rewritetest.HeadsBloom, rewritetest.NoMask, false, "[2, 4, 1, 5]", false, "bias/split_heads"},
		{"bloom: 3-D bias, causal padding with the float minimum", rewritetest.HeadsBloom, rewritetest.MinMask, true, "[2, 4, 1, 5]", true, "bias/split_heads"},
		{"4-D bias, causal padding with -inf", rewritetest.Heads4D, rewritetest.InfMask, true, "[2, 4, 1, 5]", true, "bias"},
		{"4-D bias, float mask input", rewritetest.Heads4D, rewritetest.FloatMask, false, "[2, 4, 5, 5]", false, "bias"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := rewritetest.Attention{B: 2, Hq: 4, Hkv: 4, S: 5, T: 5, D: 8, Dv: 6, Scale: 0.3, Heads: tc.heads, Mask: tc.mask, Causal: tc.causal, KeyBias: true}.Normalize()
			m, err := a.Model()
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Empty(t, rep.Unfused)
			require.Equal(t, 1, rep.Count(rewrite.Attention), "%+v", rep)
			if tc.mask == rewritetest.NoMask {
				require.Contains(t, rep.Fused[0].Detail, "float mask bias [", "the one term, read whole")
			} else {
				require.Contains(t, rep.Fused[0].Detail, "bias bias [")
				require.NotContains(t, rep.Fused[0].Detail, "not recognised")
			}
			n := attentionNode(t, f)
			require.Equal(t, tc.wantCausal, n.Attrs.Int("is_causal", 0) == 1)
			mask := n.Input(3)
			require.NotNil(t, mask)
			require.Equal(t, graph.Float32, mask.DType)
			require.Equal(t, tc.wantMask, mask.Shape.String())
			if tc.mask == rewritetest.NoMask {
				require.Equal(t, tc.bias, mask.Name)
				return
			}
			add := mask.Producer
			require.Equal(t, "Add", add.OpType, "the mask plus the bias")
			require.Equal(t, tc.bias, add.Inputs[1].Name)
			if tc.mask == rewritetest.InfMask {
				require.Equal(t, "Where", add.Inputs[0].Producer.OpType, "the bool padding as a float mask of -inf")
				require.Equal(t, graph.Bool, add.Inputs[0].Producer.Inputs[0].DType)
			}
		})
	}
}

// TestAttentionReshapesLeftAlone: a Reshape of the scores or probabilities that does more than
// split or merge batch·heads, or heads Reshapes that disagree on the split, leave the
// attention as exported, with the reason.
func TestAttentionReshapesLeftAlone(t *testing.T) {
	// the Reshape whose output the Softmax reads
	scoresSplit := func(s *graph.Spec) *graph.NodeSpec {
		i := slices.IndexFunc(s.Nodes, func(n graph.NodeSpec) bool { return n.OpType == "Softmax" })
		j := slices.IndexFunc(s.Nodes, func(n graph.NodeSpec) bool { return n.Outputs[0] == s.Nodes[i].Inputs[0] })
		require.Equal(t, "Reshape", s.Nodes[j].OpType)
		return &s.Nodes[j]
	}
	shape := func(s *graph.Spec, dims ...int64) string {
		b := make([]byte, 0, 8*len(dims))
		for _, d := range dims {
			b = binary.LittleEndian.AppendUint64(b, uint64(d))
		}
		name := fmt.Sprintf("shape%d", len(s.Initializers))
		t0, err := graph.NewTensor(name, graph.Int64, []int64{int64(len(dims))}, b)
		require.NoError(t, err)
		s.Initializers = append(s.Initializers, t0)
		return name
	}
	for _, tc := range []struct {
		name  string
		a     rewritetest.Attention
		edit  func(s *graph.Spec)
		wants string
	}{
		{"the scores' keys and queries swapped",
			rewritetest.Attention{B: 2, Hq: 2, Hkv: 2, S: 4, T: 6, D: 4, Dv: 4, Scale: 0.5, Heads: rewritetest.HeadsBloom},
			func(s *graph.Spec) { scoresSplit(s).Inputs[1] = shape(s, 2, 2, 6, 4) },
			"are reshaped by n"},
		{"the heads split as [heads, batch] after a split as [batch, heads]",
			rewritetest.Attention{B: 2, Hq: 3, Hkv: 3, S: 4, T: 4, D: 4, Dv: 4, Scale: 0.5, Heads: rewritetest.HeadsBloom},
			func(s *graph.Spec) {
				r := scoresSplit(s)
				x := r.Outputs[0]
				r.Outputs[0] = x + "_bhst"
				s.Nodes = append(s.Nodes,
					graph.NodeSpec{Name: "merge_again", OpType: "Reshape", Inputs: []string{x + "_bhst", shape(s, 6, 4, 4)}, Outputs: []string{x + "_3d"}},
					graph.NodeSpec{Name: "split_hb", OpType: "Reshape", Inputs: []string{x + "_3d", shape(s, 3, 2, 4, 4)}, Outputs: []string{x}})
			},
			"merge_again takes batch·heads as [2, 3] and n8_Reshape as [3, 2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.a.Normalize().Spec()
			tc.edit(&s)
			m, err := graph.Build(s)
			require.NoError(t, err)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Same(t, m, f, "nothing fused")
			require.Len(t, rep.Unfused, 1)
			require.Equal(t, rewrite.Attention, rep.Unfused[0].Kind)
			require.Contains(t, rep.Unfused[0].Reason, tc.wants)
			t.Log(rep.Unfused[0].Reason)
		})
	}
}
