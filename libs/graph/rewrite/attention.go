package rewrite

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"carve.dev/libs/graph"
)

// Scaled dot-product attention, as exporters write it:
//
//	scores = MatMul(Q', K') [* or / scalars]    Q' = Q [* scalars], K' = K^T [* scalars]
//	scores = c * tanh(scores / c)              optional: a soft cap
//	scores = scores + term [+ term ...]        masks and biases
//	scores = Where(c, fill, scores)            or Where(c, scores, fill): PyTorch's masked_fill
//	probs  = Softmax(scores, axis=-1)
//	probs  = Where(IsNaN(probs), 0, probs)     optional: PyTorch's guard for masked-out rows
//	out    = MatMul(probs, V')
//
// over [batch, heads, queries, keys] scores or, between heads Reshapes anywhere on the way
// (heads.go), their batch·heads form [batch*heads, queries, keys] with 3-D Q', K' and V'.
// Identity Casts of the probabilities are taken too.
//
// K^T is Transpose(K, [0,1,3,2]), Transpose(K_bshd, [0,2,3,1]) (a new Transpose gives K in
// [B, H, T, D]) or Reshape(Transpose(Reshape(K, [B*H, T, D]), [0,2,1]), [B, H, D, T]); in the
// batch·heads form, Transpose(K, [0,2,1]) of a 3-D K or a heads Reshape of a 4-D K^T. K and V
// may repeat grouped heads as Reshape(Expand(Unsqueeze(X, 2), [B, Hkv, R, T, D]), [B, Hkv*R, T, D]),
// and the fused op reads X with kv_num_heads Hkv instead. The terms are planned by planTerms.
//
// The scalars are constants or computed on the host from static dims (hostScalar: TorchScript
// computes 1/sqrt(head_dim) from Q's Shape). The fused node is Attention (ai.onnx, opset 23)
// over Q, K, V [, attn_mask] in [batch, heads, ., .] with scale the product of the scalars and
// is_causal when the mask holds a causal part; a 3-D output is merged back from it.

// matchAttention matches the pattern whose Softmax is sm, in model m.
func matchAttention(m *graph.Model, sm *graph.Node) (*match, string) {
	x := sm.Inputs[0]
	rank := len(x.Shape)
	if rank != 4 && rank != 3 {
		return nil, fmt.Sprintf("the softmax input %s has rank %d; attention fuses [batch, heads, queries, keys] scores or their [batch·heads, queries, keys] form", x.Name, rank)
	}
	if a := sm.Attrs.Int("axis", -1); a != -1 && a != int64(rank-1) {
		return nil, fmt.Sprintf("the softmax is over axis %d, not over the keys (the last axis)", a)
	}
	dt := x.DType
	if !isFloat(dt) {
		return nil, fmt.Sprintf("the scores are %s", dt)
	}
	mt := &match{kind: Attention, interior: []*graph.Node{sm}}
	var details []string
	var fr frame

	// after the softmax: the optional NaN guard, identity Casts and heads Reshapes, then the
	// MatMul with V
	probs, guarded := sm.Outputs[0], false
	for {
		if probs.Output {
			return nil, fmt.Sprintf("the probabilities %s are a graph output", probs.Name)
		}
		if len(probs.Consumers) == 2 && !guarded {
			isnan, where := probs.Consumers[0], probs.Consumers[1]
			if is(where, "IsNaN") {
				isnan, where = where, isnan
			}
			if !is(isnan, "IsNaN") || !is(where, "Where") || !only(isnan.Outputs[0], where) || where.Inputs[0] != isnan.Outputs[0] || where.Inputs[2] != probs {
				return nil, fmt.Sprintf("the probabilities %s are read by %s; the only second reader fused is PyTorch's Where(IsNaN(p), 0, p) guard", probs.Name, readers(probs))
			}
			if z, ok := scalar(where.Inputs[1]); !ok || z != 0 {
				return nil, fmt.Sprintf("the guard %s replaces NaN by %s, not by the constant 0", where.Name, where.Inputs[1].Name)
			}
			mt.interior = append(mt.interior, isnan, where)
			probs, guarded = where.Outputs[0], true
			continue
		}
		if len(probs.Consumers) != 1 {
			return nil, fmt.Sprintf("the probabilities %s are read by %s, not by one MatMul", probs.Name, readers(probs))
		}
		c := probs.Consumers[0]
		if is(c, "Cast") && c.Outputs[0].DType == probs.DType {
			// a Cast to the probabilities' own type (eager softmax(..., dtype=float32).to(dtype)
			// of a float32 model) is the identity
			mt.interior = append(mt.interior, c)
			probs = c.Outputs[0]
			continue
		}
		if is(c, "Reshape") && c.Inputs[0] == probs {
			b, h, _, ok := headsReshape(c)
			if !ok {
				return nil, notHeads(c, "the probabilities")
			}
			if why := fr.fit(b, h, c); why != "" {
				return nil, why
			}
			mt.interior = append(mt.interior, c)
			probs = c.Outputs[0]
			continue
		}
		break
	}
	mm2 := probs.Consumers[0]
	if !is(mm2, "MatMul") || mm2.Inputs[0] != probs || mm2.Inputs[1] == probs {
		return nil, fmt.Sprintf("the probabilities %s are read by %s (%s), not as the first operand of a MatMul", probs.Name, mm2.Name, opLabel(mm2))
	}
	mt.root = mm2
	mt.interior = append(mt.interior, mm2)

	// before the softmax: the terms, the soft cap, the scale, the MatMul of Q and K^T
	w := &scoreWalk{m: m, fr: fr, scale: 1}
	if why := w.walk(x, sm, true); why != "" {
		return nil, why
	}
	fr = w.fr
	mt.interior = append(mt.interior, w.nodes...)
	mm1, scale, softcap := w.mm, w.scale, w.softcap
	qk := mm1.Outputs[0]
	if r := len(qk.Shape); r != 4 && r != 3 {
		return nil, fmt.Sprintf("the scores %s have rank %d", qk.Name, r)
	}
	threeD := len(qk.Shape) == 3
	s, t := qk.Shape[len(qk.Shape)-2], qk.Shape[len(qk.Shape)-1]

	// A scale of Q that is not known at load stays in Q, which the fused node then reads;
	// K's must be peeled off to reach K under K^T.
	q, qScale, _, _ := scaleChain(m, mm1.Inputs[0], mm1, false)
	kt, kScale, _, ktWhy := scaleChain(m, mm1.Inputs[1], mm1, false)
	scale *= qScale * kScale
	var k *graph.Value
	var why string
	if threeD {
		if r := from(q, "Reshape"); r != nil && !fr.known {
			if b, h, merge, ok := headsReshape(r); ok && merge {
				fr.fit(b, h, r)
			}
		}
		if !fr.known {
			return nil, fmt.Sprintf("the scores %s are [batch·heads, queries, keys] %s and no Reshape of them, of the probabilities or of Q splits batch·heads into [batch, heads]", qk.Name, qk.Shape)
		}
		if q, _, why = mt.split(q, fr); why != "" {
			return nil, "Q " + why
		}
		var f float64
		k, f, why = mt.untranspose3(m, kt, fr, mm2.Name)
		scale *= f
	} else {
		var kNode *graph.NodeSpec
		k, kNode, why = untranspose(kt, mm2.Name)
		if kNode != nil {
			mt.add = append(mt.add, *kNode)
		}
	}
	if why != "" {
		if ktWhy != "" {
			// the chain stopped at K^T's scale, not at its transpose
			why = "the scale of K^T is not a constant: " + ktWhy
		}
		return nil, why
	}
	q, qScale2, _, _ := scaleChain(m, q, nil, false)
	k, kScale2, _, _ := scaleChain(m, k, nil, false)
	scale *= qScale2 * kScale2
	v := mm2.Inputs[1]
	if len(v.Shape) != len(probs.Shape) {
		return nil, fmt.Sprintf("the probabilities %s and V %s differ in rank (the MatMul broadcasts them)", probs, v)
	}
	if len(v.Shape) == 3 {
		if v, _, why = mt.split(v, fr); why != "" {
			return nil, "V " + why
		}
	}
	for _, t := range []*graph.Value{q, k, v} {
		if len(t.Shape) != 4 || t.DType != dt {
			return nil, fmt.Sprintf("%s is %s; Q, K and V must be 4-D %s like the scores", t.Name, t, dt)
		}
	}
	kIn, vIn := k, v
	if kx, vx := ungroup(k), ungroup(v); kx != nil && vx != nil && kx.Shape[1].Equal(vx.Shape[1]) {
		kIn, vIn = kx, vx
		details = append(details, fmt.Sprintf("%s q heads over %s kv heads", q.Shape[1], kx.Shape[1]))
	} else {
		details = append(details, fmt.Sprintf("%s heads", q.Shape[1]))
	}
	switch {
	case differ(q.Shape[0], kIn.Shape[0]) || differ(q.Shape[0], vIn.Shape[0]):
		return nil, fmt.Sprintf("Q %s, K %s and V %s differ in batch (the exported MatMuls broadcast it); Attention needs one batch", q, kIn, vIn)
	case differ(q.Shape[3], kIn.Shape[3]):
		return nil, fmt.Sprintf("Q %s and K %s differ in head size", q, kIn)
	case differ(kIn.Shape[2], vIn.Shape[2]):
		return nil, fmt.Sprintf("K %s and V %s differ in length", kIn, vIn)
	}
	if h, ok := q.Shape[1].Value(); ok {
		if g, ok := kIn.Shape[1].Value(); ok && (g == 0 || h%g != 0) {
			return nil, fmt.Sprintf("Q's %d heads are not a multiple of K's %d", h, g)
		}
	}
	if math.IsInf(scale, 0) || math.IsNaN(scale) || scale == 0 || float64(float32(scale)) == 0 {
		return nil, fmt.Sprintf("the scale %g is not a usable float32", scale)
	}
	details = append(details, "scale "+f32(scale))
	if fr.known {
		details = append(details, fmt.Sprintf("batch·heads form split as [%s, %s] by %s", fr.b, fr.h, fr.at))
	}

	// the output: 4-D, or 3-D and split by a heads Reshape that then is the pattern's last
	// node, or 3-D and merged back from the fused node's
	y := mm2.Outputs[0]
	out, merged := y.Name, ""
	if len(y.Shape) == 3 {
		if c := soleReader(y); is(c, "Reshape") {
			if b, h, merge, ok := headsReshape(c); ok && !merge && b.Equal(fr.b) && h.Equal(fr.h) {
				mt.root = c
				mt.interior = append(mt.interior, c)
				out = c.Outputs[0].Name
			}
		}
		if mt.root == mm2 {
			merged, out = out, out+"/heads"
		}
	}
	inputs := []string{q.Name, kIn.Name, vIn.Name}
	final := out // the fused result in [batch, heads, queries, head]
	causal, window := false, (*graph.AttentionBand)(nil)
	// gathered relative-position biases (relbias.go) are read as the relative-bias inputs,
	// the other terms as the mask and biases
	terms, rels, notes := relativeTerms(m, w.terms, s, t)
	if len(terms) > 0 {
		mp, why := mt.planTerms(terms, fr, dt, s, t, mm2.Name)
		if why != "" {
			return nil, why
		}
		if mp.value != "" {
			inputs = append(inputs, mp.value)
		}
		causal, window = mp.causal, mp.window
		mt.add = append(mt.add, mp.add...)
		mt.inits = append(mt.inits, mp.inits...)
		details = append(details, mp.detail)
		switch {
		case mp.emptyRows != "":
			raw := out + "/attention"
			band := graph.AttentionBand{Left: -1, Right: 0}
			if window != nil {
				band = *window
			}
			if why := mt.emptyRows(mp.emptyRows, band, raw, out, vIn, q.Shape[1]); why != "" {
				return nil, why
			}
			out = raw
		case mp.padQueries != "":
			raw := out + "/attention"
			if why := mt.paddedQueries(mp.padQueries, mp.padQueriesZero, raw, out, vIn, q.Shape[1], dt); why != "" {
				return nil, why
			}
			out = raw
		}
	}
	if len(rels) > 0 {
		ri, why := mt.relInputs(rels, q.Name, kIn.Name, fr, dt, mm2.Name)
		if why != "" {
			return nil, why
		}
		for len(inputs) < graph.AttnRelC2P {
			inputs = append(inputs, "")
		}
		inputs = append(inputs, ri...)
		for inputs[len(inputs)-1] == "" {
			inputs = inputs[:len(inputs)-1]
		}
		details = append(details, relDetail(rels))
	}
	details = append(details, notes...)
	if guarded {
		details = append(details, "NaN guard")
	}
	attrs := []graph.Attribute{{Name: "scale", Kind: graph.AttrFloat, Float: float32(scale)}}
	if softcap > 0 {
		attrs = append(attrs, graph.Attribute{Name: "softcap", Kind: graph.AttrFloat, Float: float32(softcap)})
		details = append(details, "softcap "+f32(softcap))
	}
	if causal {
		attrs = append(attrs, graph.Attribute{Name: "is_causal", Kind: graph.AttrInt, Int: 1})
	}
	if window != nil && window.Left >= 0 {
		attrs = append(attrs, graph.Attribute{Name: graph.AttrWindowLeft, Kind: graph.AttrInt, Int: window.Left})
	}
	if window != nil && window.Right > 0 {
		attrs = append(attrs, graph.Attribute{Name: graph.AttrWindowRight, Kind: graph.AttrInt, Int: window.Right})
	}
	mt.fused = mm2.Name + "/Attention"
	mt.add = append(mt.add, graph.NodeSpec{
		Name: mt.fused, OpType: "Attention", Inputs: inputs,
		Outputs: []string{out}, Attrs: graph.NewAttributes(attrs...),
	})
	if merged != "" {
		mt.merge(final, merged)
		details = append(details, "output merged to [batch·heads, queries, head]")
	}
	mt.opsets = map[string]int64{"": 23}
	mt.detail = strings.Join(details, ", ")
	return mt, ""
}

// soleReader returns the one node that reads v, nil if v has more or none or is a graph output.
func soleReader(v *graph.Value) *graph.Node {
	if v.Output || len(v.Consumers) != 1 {
		return nil
	}
	return v.Consumers[0]
}

// scoreWalk walks the scores from the softmax down to the MatMul of Q and K^T, collecting the
// nodes on the way (read by the pattern alone), the terms added, the soft cap and the scale.
type scoreWalk struct {
	m       *graph.Model
	fr      frame
	nodes   []*graph.Node
	terms   []term
	scale   float64
	softcap float64
	mm      *graph.Node // the MatMul, once reached
	// depth counts the nodes walked, so that of an Add's two operands the reason of the one
	// walked further is given; scaleWhy says where a Mul or Div by a scalar not known at load
	// stopped the walk.
	depth    int
	scaleWhy string
}

// term is a value added to the scores: a mask or a bias.
type term struct {
	v      *graph.Value
	threeD bool // added to the batch·heads form
	// fill, for a masked_fill of the scores, says how to make v, a value of no model
	fill *maskedFill
}

// maskedFill is the term a Where(c, fill, scores) or Where(c, scores, fill) of the scores
// stands for: Where(keep, 0, fill), keep being what the Where keeps the scores by (c, or what a
// Not of it negates; Where(c, fill, 0) when there is no Not to strip). Its value is made only
// where the fused op reads it whole (planTerms).
type maskedFill struct {
	node graph.NodeSpec // makes the term
	zero *graph.Tensor  // the 0 it reads
}

// filledTerm describes the term of masked_fill node wh whose fill is input fillAt (1 or 2)
// over scores of type dt.
func filledTerm(wh *graph.Node, fillAt int, dt graph.DType) term {
	cond, fill := wh.Inputs[0], wh.Inputs[fillAt]
	zt, err := graph.NewTensor("rewrite.zero."+dt.String(), dt, nil, make([]byte, dt.Size()))
	if err != nil {
		panic(err) // the size is right by construction
	}
	zero := &graph.Value{Name: zt.Name, DType: dt, Kind: graph.KindInitializer, Init: zt}
	ins := []*graph.Value{cond, zero, fill} // keeps where cond holds
	if fillAt == 1 {
		ins = []*graph.Value{cond, fill, zero}
		if n := from(cond, "Not"); n != nil {
			ins = []*graph.Value{n.Inputs[0], zero, fill}
		}
	}
	name := wh.Outputs[0].Name + "/mask"
	v := &graph.Value{Name: name, DType: dt, Shape: ins[0].Shape, Kind: graph.KindActivation}
	v.Producer = &graph.Node{Name: name, OpType: "Where", Inputs: ins, Outputs: []*graph.Value{v}}
	return term{v: v, threeD: len(wh.Outputs[0].Shape) == 3, fill: &maskedFill{
		node: graph.NodeSpec{Name: name, OpType: "Where", Inputs: []string{ins[0].Name, ins[1].Name, ins[2].Name}, Outputs: []string{name}},
		zero: zt,
	}}
}

func (w *scoreWalk) step(nodes ...*graph.Node) {
	w.nodes = append(w.nodes, nodes...)
	w.depth += len(nodes)
}

// walk walks from v, read by reader, down to the MatMul; terms says whether Adds and a soft
// cap may still come (below a scale or a cap only scales and heads Reshapes may).
func (w *scoreWalk) walk(v *graph.Value, reader *graph.Node, terms bool) string {
	for {
		what := "the scores"
		if w.depth == 0 {
			what = "the softmax input"
		}
		if why := exclusive(v, reader, what); why != "" {
			return why
		}
		if r := from(v, "Reshape"); r != nil {
			b, h, _, ok := headsReshape(r)
			if !ok {
				return notHeads(r, "the scores")
			}
			if why := w.fr.fit(b, h, r); why != "" {
				return why
			}
			w.step(r)
			v, reader = r.Inputs[0], r
			continue
		}
		if terms {
			if add := from(v, "Add"); add != nil {
				return w.add(add)
			}
			if wh := from(v, "Where"); wh != nil {
				return w.filled(wh)
			}
			if inner, c, nodes := softcapped(v, reader); nodes != nil {
				w.softcap = c
				w.step(nodes...)
				v, reader, terms = inner, nodes[len(nodes)-1], false
				continue
			}
		}
		inner, f, nodes, why := scaleChain(w.m, v, reader, true)
		if len(nodes) > 0 {
			w.scale *= f
			w.step(nodes...)
			v, reader, terms = inner, nodes[len(nodes)-1], false
			continue
		}
		if mm := from(v, "MatMul"); mm != nil {
			w.step(mm)
			w.mm = mm
			return ""
		}
		w.scaleWhy = why
		why = fmt.Sprintf("the scores %s are not a MatMul of Q and K (they come from %s)", v.Name, producerLabel(v))
		if w.scaleWhy != "" {
			why += "; " + w.scaleWhy
		}
		return why
	}
}

// add walks on through Add node add: the operand that leads to the MatMul is the scores, the
// other a term.
func (w *scoreWalk) add(add *graph.Node) string {
	out := add.Outputs[0]
	var best *scoreWalk
	bestWhy := ""
	for i, in := range add.Inputs {
		other := add.Inputs[1-i]
		c := *w
		c.nodes, c.terms = slices.Clone(w.nodes), slices.Clone(w.terms)
		c.step(add)
		c.terms = append(c.terms, term{v: other, threeD: len(out.Shape) == 3})
		why := c.walk(in, add, true)
		if why == "" {
			if other == in {
				return fmt.Sprintf("%s adds the scores to themselves", add.Name)
			}
			*w = c
			return ""
		}
		if best == nil || c.depth > best.depth {
			best, bestWhy = &c, why
		}
	}
	if best.depth > w.depth+1 {
		return bestWhy // the walk went past the operand: its reason is the precise one
	}
	why := fmt.Sprintf("neither operand of %s is a (scaled) MatMul of Q and K, soft-capped or not", add.Name)
	if best.scaleWhy != "" {
		why += "; " + best.scaleWhy
	}
	return why
}

// filled walks on through Where node wh, PyTorch's masked_fill of the scores: one branch is the
// scores, the other a scalar fill of at most -1e4 (or -inf), the condition a bool. The exported
// graph sets a masked score to the fill, the fused op adds the fill to it: the same wherever
// the score is small beside the fill (the float minimum, as item 4 of doc.go assumes), and a
// row whose every score is masked is uniform either way (a finite fill) or masked out (-inf).
// The term is Where(keep, 0, fill) (filledTerm).
func (w *scoreWalk) filled(wh *graph.Node) string {
	cond, out := wh.Inputs[0], wh.Outputs[0]
	for i := 1; i <= 2; i++ {
		f, ok := scalar(wh.Inputs[i])
		if !ok {
			continue
		}
		scores := wh.Inputs[3-i]
		switch {
		case cond.DType != graph.Bool:
			return fmt.Sprintf("%s selects the scores by %s, not by a bool mask", wh.Name, cond)
		case !(f <= -1e4):
			return fmt.Sprintf("%s fills the scores with %g; a mask's fill is at most -1e4", wh.Name, f)
		case !sameShape(scores, out):
			return fmt.Sprintf("%s broadcasts the scores %s to %s", wh.Name, scores, out.Shape)
		}
		c := *w
		c.nodes, c.terms = slices.Clone(w.nodes), slices.Clone(w.terms)
		c.step(wh)
		c.terms = append(c.terms, filledTerm(wh, i, out.DType))
		if why := c.walk(scores, wh, true); why != "" {
			return why
		}
		*w = c
		return ""
	}
	return fmt.Sprintf("the scores %s come from %s (Where), which selects between %s and %s, neither a scalar fill", out.Name, wh.Name, wh.Inputs[1].Name, wh.Inputs[2].Name)
}

// untranspose3 finds K [B, H, T, D] under K^T [B*H, D, T] of the batch·heads form: a heads
// split of K [B*H, T, D] under Transpose(K, [0, 2, 1]) (and its scalars), or K under a heads
// merge of a 4-D K^T. It returns K, the product of the scalars peeled, or why not.
func (mt *match) untranspose3(m *graph.Model, kt *graph.Value, fr frame, at string) (*graph.Value, float64, string) {
	if len(kt.Shape) != 3 {
		return nil, 0, fmt.Sprintf("K^T %s has rank %d, want 3 like the scores", kt.Name, len(kt.Shape))
	}
	if t := from(kt, "Transpose"); t != nil {
		if perm := t.Attrs.Ints("perm"); !slices.Equal(perm, []int64{0, 2, 1}) {
			return nil, 0, fmt.Sprintf("K^T %s is a Transpose with perm %v; the fused form of a [batch·heads, keys, head] K is [0 2 1]", kt.Name, perm)
		}
		k, f, _, _ := scaleChain(m, t.Inputs[0], nil, false)
		k4, _, why := mt.split(k, fr)
		if why != "" {
			return nil, 0, "K " + why
		}
		return k4, f, ""
	}
	if r := from(kt, "Reshape"); r != nil {
		if b, h, merge, ok := headsReshape(r); ok && merge && b.Equal(fr.b) && h.Equal(fr.h) {
			k, kNode, why := untranspose(r.Inputs[0], at)
			if kNode != nil {
				mt.add = append(mt.add, *kNode)
			}
			return k, 1, why
		}
	}
	return nil, 0, fmt.Sprintf("K^T %s (from %s) is not a transpose of K", kt.Name, producerLabel(kt))
}

// softcapped recognises v = Mul(Tanh(Div(x, c)), c) (or Tanh(Mul(x, 1/c))), read by reader
// only, with c a positive scalar constant: the soft cap of the scores x. It returns x, c and
// the nodes from v's producer inwards, or nil nodes.
func softcapped(v *graph.Value, reader *graph.Node) (*graph.Value, float64, []*graph.Node) {
	m := from(v, "Mul")
	if m == nil || !only(v, reader) {
		return nil, 0, nil
	}
	t, outer := m.Inputs[0], m.Inputs[1]
	if from(t, "Tanh") == nil {
		t, outer = outer, t
	}
	c, ok := scalar(outer)
	tn := from(t, "Tanh")
	if !ok || c <= 0 || tn == nil || !only(t, m) {
		return nil, 0, nil
	}
	u := tn.Inputs[0]
	in := u.Producer
	var x *graph.Value
	var c2 float64
	switch {
	case is(in, "Div"):
		if s, ok := scalar(in.Inputs[1]); ok && s != 0 {
			x, c2 = in.Inputs[0], s
		}
	case is(in, "Mul"):
		if s, ok := scalar(in.Inputs[1]); ok && s != 0 {
			x, c2 = in.Inputs[0], 1/s
		}
	}
	if x == nil || !only(u, tn) || math.Abs(c2-c) > 1e-6*c || x.DType != v.DType || !sameShape(x, v) {
		return nil, 0, nil
	}
	return x, c, []*graph.Node{m, tn, in}
}

// emptyRows adds the nodes that set out to raw [B, Hq, S, Dv], except that the query rows
// whose keys the bool padding pad [B, 1, 1, S] keeps none of (causally: none of keys 0..i)
// take the mean of V over every key, as the exported softmax of all-equal scores gives:
//
//	empty = Transpose(Equal(CumSum(Cast(pad, int64), -1), 0), [0, 1, 3, 2])    [B, 1, S, 1]
//	out   = Where(empty, ReduceMean(V, [2]), raw)                               (grouped heads: over [B, Hkv, R, S, Dv])
//
// The first line is shared by every fusion of the same padding.
func (mt *match) emptyRows(pad string, band graph.AttentionBand, raw, out string, v *graph.Value, hq graph.Dim) string {
	hkv, dv := v.Shape[1], v.Shape[3]
	nq, ok1 := hq.Value()
	nkv, ok2 := hkv.Value()
	ndv, ok3 := dv.Value()
	grouped := !hq.Equal(hkv)
	if grouped && (!ok1 || !ok2 || !ok3 || nkv == 0 || nq%nkv != 0) {
		return fmt.Sprintf("the heads (%s over %s) or the head size %s of V are not constants, which the fix of rows with no key kept needs", hq, hkv, dv)
	}
	node := func(name, op string, attrs []graph.Attribute, ins ...string) string {
		mt.add = append(mt.add, graph.NodeSpec{Name: name, OpType: op, Inputs: ins, Outputs: []string{name}, Attrs: graph.NewAttributes(attrs...)})
		return name
	}
	i64 := func(v int64) graph.Attribute { return graph.Attribute{Name: "to", Kind: graph.AttrInt, Int: v} }
	kept := node(pad+"/kept", "CumSum", nil, node(pad+"/int", "Cast", []graph.Attribute{i64(int64(graph.Int64))}, pad), mt.ints("rewrite.-1", nil, -1))
	name := pad + "/empty"
	if band.Left >= 0 || band.Right != 0 {
		name = fmt.Sprintf("%s/empty_in_band(%d,%d)", pad, band.Left, band.Right)
		kept = mt.keptInBand(kept, band)
	}
	empty := node(name, "Equal", nil, kept, mt.ints("rewrite.0", nil, 0))
	rows := node(name+"_rows", "Transpose", []graph.Attribute{{Name: "perm", Kind: graph.AttrInts, Ints: []int64{0, 1, 3, 2}}}, empty)
	mt.meanRows(rows, raw, out, v, nq, nkv, ndv, grouped)
	return ""
}

// paddedQueries adds the nodes that set out to raw [B, Hq, S, Dv], except that the rows of the
// queries the bool padding pad [B, 1, 1, S] (of a prompt: query i is key i) masks take the mean
// of V over every key (zero: 0), as the exported softmax gives a row whose every key is
// masked with a finite fill (with -inf, NaN, which item 4 of doc.go makes zero):
//
//	padded = Not(Transpose(pad, [0, 1, 3, 2]))     [B, 1, S, 1]
//	out    = Where(padded, ReduceMean(V, [2]) or 0, raw)
func (mt *match) paddedQueries(pad string, zero bool, raw, out string, v *graph.Value, hq graph.Dim, dt graph.DType) string {
	rows := pad + "/padded_rows"
	mt.add = append(mt.add,
		graph.NodeSpec{Name: pad + "/rows", OpType: "Transpose", Inputs: []string{pad}, Outputs: []string{pad + "/rows"},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "perm", Kind: graph.AttrInts, Ints: []int64{0, 1, 3, 2}})},
		graph.NodeSpec{Name: rows, OpType: "Not", Inputs: []string{pad + "/rows"}, Outputs: []string{rows}})
	if zero {
		var p maskPlan
		z := p.floatConst(0, dt, nil)
		mt.add, mt.inits = append(mt.add, p.add...), append(mt.inits, p.inits...)
		mt.add = append(mt.add, graph.NodeSpec{Name: out + "/PaddedRows", OpType: "Where", Inputs: []string{rows, z, raw}, Outputs: []string{out}})
		return ""
	}
	hkv, dv := v.Shape[1], v.Shape[3]
	nq, ok1 := hq.Value()
	nkv, ok2 := hkv.Value()
	ndv, ok3 := dv.Value()
	grouped := !hq.Equal(hkv)
	if grouped && (!ok1 || !ok2 || !ok3 || nkv == 0 || nq%nkv != 0) {
		return fmt.Sprintf("the heads (%s over %s) or the head size %s of V are not constants, which the fix of padded queries' rows needs", hq, hkv, dv)
	}
	mt.meanRows(rows, raw, out, v, nq, nkv, ndv, grouped)
	return ""
}

// meanRows adds out = Where(rows, ReduceMean(V, [2]), raw), rows [B, 1, S, 1] bool and raw
// [B, Hq, S, Dv]; grouped heads (Hq = nq over nkv of V) over [B, Hkv, R, S, Dv].
func (mt *match) meanRows(rows, raw, out string, v *graph.Value, nq, nkv, ndv int64, grouped bool) {
	node := func(name, op string, attrs []graph.Attribute, ins ...string) string {
		mt.add = append(mt.add, graph.NodeSpec{Name: name, OpType: op, Inputs: ins, Outputs: []string{name}, Attrs: graph.NewAttributes(attrs...)})
		return name
	}
	mean := node(out+"/mean_v", "ReduceMean", []graph.Attribute{{Name: "keepdims", Kind: graph.AttrInt, Int: 1}}, v.Name, mt.ints("rewrite.[2]", []int64{1}, 2))
	if !grouped {
		mt.add = append(mt.add, graph.NodeSpec{Name: out + "/EmptyRows", OpType: "Where", Inputs: []string{rows, mean, raw}, Outputs: []string{out}})
		return
	}
	r := nq / nkv
	y5 := node(raw+"/grouped", "Reshape", nil, raw, mt.ints(fmt.Sprintf("rewrite.[0,%d,%d,-1,%d]", nkv, r, ndv), []int64{5}, 0, nkv, r, -1, ndv))
	m5 := node(mean+"/grouped", "Unsqueeze", nil, mean, mt.ints("rewrite.[2]", []int64{1}, 2))
	rows5 := node(rows+"/grouped", "Unsqueeze", nil, rows, mt.ints("rewrite.[1]", []int64{1}, 1))
	w5 := node(out+"/empty_rows_fixed", "Where", nil, rows5, m5, y5)
	mt.add = append(mt.add, graph.NodeSpec{Name: out + "/EmptyRows", OpType: "Reshape", Inputs: []string{w5, mt.ints(fmt.Sprintf("rewrite.[0,%d,-1,%d]", nq, ndv), []int64{4}, 0, nq, -1, ndv)}, Outputs: []string{out}})
}

// keptInBand adds KeptInBand's nodes and constants to the match, once each.
func (mt *match) keptInBand(c string, b graph.AttentionBand) string {
	nodes, inits, out := KeptInBand(c, b)
	for _, n := range nodes {
		if !slices.ContainsFunc(mt.add, func(m graph.NodeSpec) bool { return m.Name == n.Name }) {
			mt.add = append(mt.add, n)
		}
	}
	for _, t := range inits {
		if !slices.ContainsFunc(mt.inits, func(u *graph.Tensor) bool { return u.Name == t.Name }) {
			mt.inits = append(mt.inits, t)
		}
	}
	return out
}

// KeptInBand returns the nodes (and their int64 constants) that turn the running count of kept
// keys c [B, 1, 1, T] (c[j] counts keys 0..j) into the count each query row i of a prompt
// (S == T) keeps within the band [i-Left, i+Right], and the name of that count:
//
//	hi = c[min(i+Right, T-1)]:  Slice(Concat(c, Expand(c[-1:], [1, 1, 1, Right])), Right:)   (Right 0: c; unbounded: c[-1:])
//	lo = c[i-Left-1], 0 before: Slice(Concat(0 * c[:Left+1], c), :T)                         (unbounded: none)
//
// hi - lo is the count. The fusion of a windowed mask with a finite fill reads it to find the
// rows with no key kept, and package arch builds the same graph from a config.
func KeptInBand(c string, b graph.AttentionBand) (nodes []graph.NodeSpec, inits []*graph.Tensor, out string) {
	seen := map[string]bool{}
	node := func(name, op string, attrs []graph.Attribute, ins ...string) string {
		if !seen[name] {
			seen[name] = true
			nodes = append(nodes, graph.NodeSpec{Name: name, OpType: op, Inputs: ins, Outputs: []string{name}, Attrs: graph.NewAttributes(attrs...)})
		}
		return name
	}
	ints := func(name string, shape []int64, vals ...int64) string {
		if !seen[name] {
			seen[name] = true
			inits = append(inits, int64Init(name, shape, vals...))
		}
		return name
	}
	axis := []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: -1}}
	end, last := ints("rewrite.[int64 max]", []int64{1}, math.MaxInt64), ints("rewrite.[-1]", []int64{1}, -1)
	slice := func(x string, from, to int64) string {
		f, t := ints(fmt.Sprintf("rewrite.[%d]", from), []int64{1}, from), end
		if to != math.MaxInt64 {
			t = ints(fmt.Sprintf("rewrite.[%d]", to), []int64{1}, to)
		}
		return node(fmt.Sprintf("%s[%d:%d]", x, from, to), "Slice", nil, x, f, t, last)
	}
	hi := c
	switch {
	case b.Right < 0:
		hi = slice(c, -1, math.MaxInt64)
	case b.Right > 0:
		tail := node(fmt.Sprintf("%s/last_x%d", c, b.Right), "Expand", nil, slice(c, -1, math.MaxInt64), ints(fmt.Sprintf("rewrite.[1,1,1,%d]", b.Right), []int64{4}, 1, 1, 1, b.Right))
		hi = slice(node(c+"/extended", "Concat", axis, c, tail), b.Right, math.MaxInt64)
	}
	if b.Left < 0 {
		return nodes, inits, hi
	}
	zeros := node(fmt.Sprintf("%s/zeros_%d", c, b.Left+1), "Mul", nil, slice(c, 0, b.Left+1), ints("rewrite.0", nil, 0))
	keys := slice(node(c+"/shape", "Shape", nil, c), -1, math.MaxInt64) // [T]
	shifted := node(zeros+"/shifted", "Concat", axis, zeros, c)
	lo := node(shifted+"[0:T]", "Slice", nil, shifted, ints("rewrite.[0]", []int64{1}, 0), keys, last)
	return nodes, inits, node(fmt.Sprintf("%s/in_band(%d,%d)", c, b.Left, b.Right), "Sub", nil, hi, lo)
}

// ints names an int64 constant of the given shape (nil: a scalar), adding it once.
func (mt *match) ints(name string, shape []int64, vals ...int64) string {
	if !slices.ContainsFunc(mt.inits, func(t *graph.Tensor) bool { return t.Name == name }) {
		mt.inits = append(mt.inits, int64Init(name, shape, vals...))
	}
	return name
}

// int64Init is an int64 initializer of the given shape (nil: a scalar).
func int64Init(name string, shape []int64, vals ...int64) *graph.Tensor {
	b := make([]byte, 0, 8*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	t, err := graph.NewTensor(name, graph.Int64, shape, b)
	if err != nil {
		panic(err) // the sizes are right by construction
	}
	return t
}

// float32Init is a float32 scalar initializer.
func float32Init(name string, x float32) *graph.Tensor {
	t, err := graph.NewTensor(name, graph.Float32, nil, binary.LittleEndian.AppendUint32(nil, math.Float32bits(x)))
	if err != nil {
		panic(err) // the size is right by construction
	}
	return t
}

func producerLabel(v *graph.Value) string {
	if v.Producer == nil {
		return v.Kind.String() + " " + v.Name
	}
	return fmt.Sprintf("%s (%s)", v.Producer.Name, opLabel(v.Producer))
}

// untranspose finds K [B, H, T, D] under K^T [B, H, D, T]. It returns K, or the node to add
// that makes it, or why not.
func untranspose(kt *graph.Value, at string) (*graph.Value, *graph.NodeSpec, string) {
	if len(kt.Shape) != 4 {
		return nil, nil, fmt.Sprintf("K^T %s has rank %d, want 4", kt.Name, len(kt.Shape))
	}
	if t := from(kt, "Transpose"); t != nil {
		perm, x := t.Attrs.Ints("perm"), t.Inputs[0]
		switch {
		case slices.Equal(perm, []int64{0, 1, 3, 2}):
			return x, nil, ""
		case slices.Equal(perm, []int64{0, 2, 3, 1}):
			// x is [B, T, H, D]: K is Transpose(x, [0, 2, 1, 3]); reuse one the graph has
			for _, c := range x.Consumers {
				if is(c, "Transpose") && slices.Equal(c.Attrs.Ints("perm"), []int64{0, 2, 1, 3}) {
					return c.Outputs[0], nil, ""
				}
			}
			out := kt.Name + "/bhtd"
			ns := &graph.NodeSpec{Name: at + "/TransposeK", OpType: "Transpose", Inputs: []string{x.Name}, Outputs: []string{out},
				Attrs: graph.NewAttributes(graph.Attribute{Name: "perm", Kind: graph.AttrInts, Ints: []int64{0, 2, 1, 3}})}
			// the value is made later by Build; describe it for the checks that follow
			return &graph.Value{Name: out, DType: x.DType, Shape: graph.Shape{x.Shape[0], x.Shape[2], x.Shape[1], x.Shape[3]}}, ns, ""
		}
		return nil, nil, fmt.Sprintf("K^T %s is a Transpose with perm %v; the fused forms are [0 1 3 2] of K and [0 2 3 1] of [batch, keys, heads, head]", kt.Name, perm)
	}
	// Reshape(Transpose(Reshape(K, [B*H, T, D]), [0, 2, 1]), [B, H, D, T])
	r2 := from(kt, "Reshape")
	var t, r1 *graph.Node
	if r2 != nil {
		t = from(r2.Inputs[0], "Transpose")
	}
	if t != nil {
		r1 = from(t.Inputs[0], "Reshape")
	}
	if r1 == nil || !slices.Equal(t.Attrs.Ints("perm"), []int64{0, 2, 1}) {
		return nil, nil, fmt.Sprintf("K^T %s (from %s) is not a transpose of K", kt.Name, producerLabel(kt))
	}
	k := r1.Inputs[0]
	ks, ms, ts := k.Shape, r1.Outputs[0].Shape, kt.Shape
	if len(ks) != 4 || len(ms) != 3 || !ms[0].Equal(ks[0].Mul(ks[1])) || !ms[1].Equal(ks[2]) || !ms[2].Equal(ks[3]) ||
		!ts[0].Equal(ks[0]) || !ts[1].Equal(ks[1]) || !ts[2].Equal(ks[3]) || !ts[3].Equal(ks[2]) {
		return nil, nil, fmt.Sprintf("K^T %s is reshaped from %s through shapes that do not prove a transpose of its last two axes", kt.Name, k)
	}
	return k, nil, ""
}

// ungroup finds X under Reshape(Expand(Unsqueeze(X, [2]), [B, H, R, T, D]), [B, H*R, T, D]),
// the exporter's repeat of grouped heads, or returns nil.
func ungroup(v *graph.Value) *graph.Value {
	r := from(v, "Reshape")
	if r == nil {
		return nil
	}
	e := from(r.Inputs[0], "Expand")
	if e == nil {
		return nil
	}
	u := from(e.Inputs[0], "Unsqueeze")
	if u == nil {
		return nil
	}
	if axes, ok := axesOf(u); !ok || len(axes) != 1 || (axes[0] != 2 && axes[0] != -3) {
		return nil
	}
	x := u.Inputs[0]
	xs, es, vs := x.Shape, e.Outputs[0].Shape, v.Shape
	if len(xs) != 4 || len(es) != 5 || len(vs) != 4 {
		return nil
	}
	if !es[0].Equal(xs[0]) || !es[1].Equal(xs[1]) || !es[3].Equal(xs[2]) || !es[4].Equal(xs[3]) ||
		!vs[0].Equal(xs[0]) || !vs[1].Equal(xs[1].Mul(es[2])) || !vs[2].Equal(xs[2]) || !vs[3].Equal(xs[3]) {
		return nil
	}
	return x
}
