package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// The batch·heads form.
//
// Models that compute attention with batched matrix products (Bloom's baddbmm and bmm) hold the
// scores and probabilities as [batch*heads, queries, keys] and reshape them to and from
// [batch, heads, queries, keys] around the masks and the softmax. A Reshape moves no element of
// a row-major tensor: it only renames indices. One that keeps the last two dims and splits the
// first into [B, H] (or merges [B, H] into B*H) maps entry (n, i, j) of the 3-D form to entry
// (n / H, n % H, i, j) of the 4-D one, whatever B is, so both forms hold the same [B, H, S, T]
// scores. headsReshape proves that from the shapes alone; every such Reshape of one pattern must
// split by the same [B, H] (frame.fit), else n / H would name another batch and head on the
// two sides of some Reshape. The fused Attention then works in the 4-D form: a 3-D value it
// reads is split by the same H, from the Reshape that made it where one did (split), and a 3-D
// output is merged back (merge).

// frame is the [batch, heads] split of a pattern's batch·heads form, once a Reshape fixed it.
type frame struct {
	b, h  graph.Dim
	known bool
	at    string // the Reshape that fixed it, for reasons
}

// headsReshape reports whether Reshape node r only merges [B, H] of a 4-D value into B*H
// (merge) or splits B*H of a 3-D value into [B, H] (!merge), the last two dims kept, and
// returns B and H.
func headsReshape(r *graph.Node) (b, h graph.Dim, merge, ok bool) {
	in, out := r.Inputs[0].Shape, r.Outputs[0].Shape
	four, three, merge := in, out, true
	if len(in) == 3 {
		four, three, merge = out, in, false
	}
	if len(four) != 4 || len(three) != 3 || !three[0].Equal(four[0].Mul(four[1])) || !three[1].Equal(four[2]) || !three[2].Equal(four[3]) {
		return graph.Dim{}, graph.Dim{}, false, false
	}
	return four[0], four[1], merge, true
}

// notHeads says why a Reshape of a value of the pattern is not a heads reshape.
func notHeads(r *graph.Node, what string) string {
	return fmt.Sprintf("%s %s are reshaped by %s from %s to %s, which does not only split batch·heads into [batch, heads] or merge them (the last two dims kept)",
		what, r.Inputs[0].Name, r.Name, r.Inputs[0].Shape, r.Outputs[0].Shape)
}

// fit takes the split [b, h] of heads Reshape r: the frame's, if it has none yet; else it must
// be the same.
func (f *frame) fit(b, h graph.Dim, r *graph.Node) string {
	if !f.known {
		*f = frame{b: b, h: h, known: true, at: r.Name}
		return ""
	}
	if !b.Equal(f.b) || !h.Equal(f.h) {
		return fmt.Sprintf("%s takes batch·heads as [%s, %s] and %s as [%s, %s]; the fused Attention reads them one way", r.Name, b, h, f.at, f.b, f.h)
	}
	return ""
}

// split returns the 4-D form [B, H, X, Y] of a 3-D value v [B*H, X, Y] of frame fr: the value
// a heads Reshape merged into v, or a new Reshape of v (made; its nodes added to the match),
// named after v so that fusions reading the same v share it. A new value is described for
// the checks that follow, as untranspose does.
func (mt *match) split(v *graph.Value, fr frame) (v4 *graph.Value, made bool, why string) {
	if len(v.Shape) != 3 || !v.Shape[0].Equal(fr.b.Mul(fr.h)) {
		return nil, false, fmt.Sprintf("%s is %s, not [batch·heads (%s), ., .]", v.Name, v.Shape, fr.b.Mul(fr.h))
	}
	if r := from(v, "Reshape"); r != nil {
		if b, h, merge, ok := headsReshape(r); ok && merge && b.Equal(fr.b) && h.Equal(fr.h) {
			return r.Inputs[0], false, ""
		}
	}
	h, ok := fr.h.Value()
	if !ok {
		return nil, false, fmt.Sprintf("the heads %s are not a constant, which splitting %s into [batch, heads, ., .] needs", fr.h, v.Name)
	}
	tail := mt.shapeFrom(v.Name, 1)
	target := v.Name + "/split_heads_shape"
	mt.add = append(mt.add, graph.NodeSpec{Name: target, OpType: "Concat", Inputs: []string{mt.ints(fmt.Sprintf("rewrite.[-1,%d]", h), []int64{2}, -1, h), tail},
		Outputs: []string{target}, Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: 0})})
	out := v.Name + "/split_heads"
	mt.add = append(mt.add, graph.NodeSpec{Name: out, OpType: "Reshape", Inputs: []string{v.Name, target}, Outputs: []string{out}})
	return &graph.Value{Name: out, DType: v.DType, Shape: graph.Shape{fr.b, fr.h, v.Shape[1], v.Shape[2]}}, true, ""
}

// merge adds the Reshape of the 4-D value in [B, H, X, Y] to out [B*H, X, Y].
func (mt *match) merge(in, out string) {
	target := in + "/merge_heads_shape"
	mt.add = append(mt.add,
		graph.NodeSpec{Name: target, OpType: "Concat", Inputs: []string{mt.ints("rewrite.[-1]", []int64{1}, -1), mt.shapeFrom(in, 2)},
			Outputs: []string{target}, Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: 0})},
		graph.NodeSpec{Name: out + "/MergeHeads", OpType: "Reshape", Inputs: []string{in, target}, Outputs: []string{out}})
}

// shapeFrom adds Shape(v)[start:] (Shape's start attribute, opset 15, below the Attention's 23).
func (mt *match) shapeFrom(v string, start int64) string {
	out := fmt.Sprintf("%s/shape[%d:]", v, start)
	mt.add = append(mt.add, graph.NodeSpec{Name: out, OpType: "Shape", Inputs: []string{v}, Outputs: []string{out},
		Attrs: graph.NewAttributes(graph.Attribute{Name: "start", Kind: graph.AttrInt, Int: start})})
	return out
}
