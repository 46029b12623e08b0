package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// The rotary embedding as HuggingFace writes it (rotate_half), over x [B, H, S, D]:
//
//	x1 = Slice(x, 0, D/2, axis -1);  x2 = Slice(x, D/2, end, axis -1)
//	out = x * cos + Concat(Neg(x2), x1, axis -1) * sin
//
// with cos and sin of shape [1, .., 1, S, D] made as Cos(Concat(f, f, -1)) and Sin of the
// same (their halves are equal), under Unsqueeze, Reshape or Cast. It becomes
// com.microsoft.RotaryEmbedding(x, position_ids [0], cos_cache, sin_cache), the caches being
// the first halves of cos and sin as [S, D/2]: position s reads row s.

func rotaryCandidate(n *graph.Node) bool {
	if !is(n, "Neg") {
		return false
	}
	for _, c := range n.Outputs[0].Consumers {
		if is(c, "Concat") {
			return true
		}
	}
	return false
}

// sliceLast returns the start and end of a Slice of the last axis of x with step 1.
func sliceLast(n *graph.Node, x *graph.Value) (start, end int64, ok bool) {
	if !is(n, "Slice") || n.Inputs[0] != x {
		return 0, 0, false
	}
	st, ok1 := constInts(n.Input(1))
	en, ok2 := constInts(n.Input(2))
	if !ok1 || !ok2 || len(st) != 1 || len(en) != 1 {
		return 0, 0, false
	}
	r := int64(len(x.Shape))
	if a := n.Input(3); a != nil {
		ax, ok := constInts(a)
		if !ok || len(ax) != 1 || (ax[0] != -1 && ax[0] != r-1) {
			return 0, 0, false
		}
	} else if r != 1 {
		return 0, 0, false
	}
	if s := n.Input(4); s != nil {
		if sp, ok := constInts(s); !ok || len(sp) != 1 || sp[0] != 1 {
			return 0, 0, false
		}
	}
	return st[0], en[0], true
}

// equalHalves reports whether t is a table whose last axis is Concat(f, f) under fn (Cos or
// Sin), seen through Unsqueeze, Reshape and Cast: its two halves are then equal.
func equalHalves(t *graph.Value, fn string) bool {
	for t.Producer != nil && (is(t.Producer, "Unsqueeze") || is(t.Producer, "Cast")) {
		t = t.Producer.Inputs[0]
	}
	f := from(t, fn)
	if f == nil {
		return false
	}
	c := from(f.Inputs[0], "Concat")
	if c == nil || len(c.Inputs) != 2 || c.Inputs[0] != c.Inputs[1] {
		return false
	}
	a := c.Attrs.Int("axis", 0)
	return a == -1 || a == int64(len(c.Outputs[0].Shape)-1)
}

// matchRotary matches the rotary embedding whose Neg is neg.
func matchRotary(neg *graph.Node) (*match, string) {
	x2, nx := neg.Inputs[0], neg.Outputs[0]
	if len(nx.Consumers) != 1 || nx.Output || !is(nx.Consumers[0], "Concat") {
		return nil, fmt.Sprintf("%s is read by %s, not by one Concat", nx.Name, readers(nx))
	}
	cat := nx.Consumers[0]
	sl2 := x2.Producer
	if sl2 == nil || len(cat.Inputs) != 2 || cat.Inputs[0] != nx {
		return nil, fmt.Sprintf("%s does not concatenate -x2 and x1", cat.Name)
	}
	x := sl2.Inputs[0]
	if len(x.Shape) != 4 || !isFloat(x.DType) {
		return nil, fmt.Sprintf("%s is %s; the rotary fusion takes 4-D [batch, heads, seq, head] float tensors", x.Name, x)
	}
	d, ok := x.Shape[3].Value()
	if !ok || d%2 != 0 {
		return nil, fmt.Sprintf("the head size %s of %s is not an even constant", x.Shape[3], x.Name)
	}
	half := d / 2
	x1 := cat.Inputs[1]
	s1, e1, ok1 := sliceLast(x1.Producer, x)
	s2, e2, ok2 := sliceLast(sl2, x)
	if !ok1 || !ok2 || s1 != 0 || e1 != half || s2 != half || e2 < d {
		return nil, fmt.Sprintf("%s and %s are not the halves [0, %d) and [%d, %d) of %s's last axis", x1.Name, x2.Name, half, half, d, x.Name)
	}
	if a := cat.Attrs.Int("axis", 0); a != -1 && a != 3 {
		return nil, fmt.Sprintf("%s concatenates axis %d, not the last", cat.Name, a)
	}
	for _, c := range []struct {
		v *graph.Value
		n *graph.Node
	}{{x1, cat}, {x2, neg}} {
		if why := exclusive(c.v, c.n, "the half"); why != "" {
			return nil, why
		}
	}
	rh := cat.Outputs[0]
	if len(rh.Consumers) != 1 || rh.Output || !is(rh.Consumers[0], "Mul") {
		return nil, fmt.Sprintf("the rotated half %s is read by %s, not by one Mul", rh.Name, readers(rh))
	}
	mulS := rh.Consumers[0]
	sin := other(mulS, rh)
	ms := mulS.Outputs[0]
	if len(ms.Consumers) != 1 || ms.Output || !is(ms.Consumers[0], "Add") {
		return nil, fmt.Sprintf("%s is read by %s, not by one Add", ms.Name, readers(ms))
	}
	add := ms.Consumers[0]
	mc := other(add, ms)
	mulC := from(mc, "Mul")
	if mulC == nil || other(mulC, x) == nil || !only(mc, add) {
		return nil, fmt.Sprintf("%s adds %s, not x*cos read by it alone", add.Name, mc.Name)
	}
	cos := other(mulC, x)
	for _, t := range []struct {
		v  *graph.Value
		fn string
	}{{cos, "Cos"}, {sin, "Sin"}} {
		v := t.v
		if v.DType != x.DType || len(v.Shape) != 4 || !v.Shape[2].Equal(x.Shape[2]) || !v.Shape[3].Equal(x.Shape[3]) ||
			!v.Shape[0].Equal(graph.Const(1)) || !v.Shape[1].Equal(graph.Const(1)) {
			return nil, fmt.Sprintf("the %s table %s is %s; the fusion takes one table of [1, 1, seq, head] for every batch and head", t.fn, v.Name, v)
		}
		if !equalHalves(v, t.fn) {
			return nil, fmt.Sprintf("the %s table %s is not %s(Concat(f, f)): its halves may differ", t.fn, v.Name, t.fn)
		}
	}
	mt := &match{kind: Rotary, root: add, interior: []*graph.Node{x1.Producer, sl2, neg, cat, mulS, mulC, add},
		opsets: map[string]int64{"com.microsoft": 1}}
	i64 := func(name string, vals ...int64) string { return mt.ints(name, []int64{int64(len(vals))}, vals...) }
	zero, pos := i64("rewrite.rotary.0", 0), i64("rewrite.rotary.position0", 0)
	end, axis, shape := i64(fmt.Sprintf("rewrite.rotary.%d", half), half), i64("rewrite.rotary.-1", -1), i64(fmt.Sprintf("rewrite.rotary.cache%d", half), -1, half)
	cache := func(t *graph.Value) string {
		h, c := t.Name+"/half", t.Name+"/cache"
		mt.add = append(mt.add,
			graph.NodeSpec{Name: h, OpType: "Slice", Inputs: []string{t.Name, zero, end, axis}, Outputs: []string{h}},
			graph.NodeSpec{Name: c, OpType: "Reshape", Inputs: []string{h, shape}, Outputs: []string{c}})
		return c
	}
	cc, sc := cache(cos), cache(sin)
	mt.add = append(mt.add, graph.NodeSpec{Name: add.Name + "/RotaryEmbedding", OpType: "RotaryEmbedding", Domain: "com.microsoft",
		Inputs: []string{x.Name, pos, cc, sc}, Outputs: []string{add.Outputs[0].Name},
		Attrs: graph.NewAttributes(graph.Attribute{Name: "interleaved", Kind: graph.AttrInt, Int: 0})})
	mt.detail = fmt.Sprintf("rotate-half over head size %d, tables %s and %s", d, cos.Name, sin.Name)
	return mt, ""
}
