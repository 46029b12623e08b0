package rewrite

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"carve.dev/libs/graph"
)

// An attention mask as exporters write it is added to the scores: Where(keep, 0, fill), with
// keep a bool [batch, 1, queries, keys] that is often And(causal, padding), causal being
// LessOrEqual(key index, query index) over Range(0, n, 1) and padding gathered from the
// attention_mask input.
//
// With fill = -inf, the mask is a bool mask: the fused op reads keep itself, or, when keep has
// a causal part, sets is_causal and reads the rest (often padding [batch, 1, 1, keys]): no
// queries x keys tensor is left.
//
// With a finite fill (PyTorch exports of HuggingFace models use the float minimum) a masked
// score becomes exactly fill, so a row with any key kept is the same as with -inf, but a row
// whose keys are all masked is spread uniformly over every key: its output is the mean of V.
// When keep is causal & padding [batch, 1, 1, keys] over as many queries as keys (a prompt),
// the fused op sets is_causal and reads the float padding mask Where(padding, 0, fill), and
// rows with no key kept (a prefix of padding) are set to the mean of V after it (emptyRows).
// Otherwise the float mask is read whole, less the parts of keep that are always true. Any
// other mask is read as it is.

// maskPlan is how the fused op reads a mask.
type maskPlan struct {
	value  string // the attn_mask input, "" for none
	causal bool
	// window is the keys' band when a sliding window bounds it besides causality (Right 0
	// when causal); nil for none.
	window *graph.AttentionBand
	isBool bool // the attn_mask input is a bool mask (true keeps)
	add    []graph.NodeSpec
	inits  []*graph.Tensor
	detail string
	// emptyRows names the bool padding [batch, 1, 1, keys] whose query rows with no key kept
	// must be set to the mean of V after the fused op; "" for none.
	emptyRows string
	// padQueries names the bool padding [batch, 1, 1, keys] of a prompt whose padded queries'
	// rows must be set to the mean of V after the fused op (zero, padQueriesZero); "" for none.
	padQueries     string
	padQueriesZero bool
}

// planMask plans the mask m added to scores [.., s, t] of type dt; at names the fusion for the
// names of new nodes.
func planMask(m *graph.Value, dt graph.DType, s, t graph.Dim, at string) (maskPlan, string) {
	if m.DType != dt {
		return maskPlan{}, fmt.Sprintf("the mask %s is %s, the scores %s", m.Name, m.DType, dt)
	}
	if len(m.Shape) > 4 {
		return maskPlan{}, fmt.Sprintf("the mask %s has rank %d", m.Name, len(m.Shape))
	}
	rec, unrecognised := recogniseMask(m, s, t)
	if unrecognised == "" {
		p, why := rec.plan(dt, s, t)
		if why == "" {
			return p, ""
		}
		unrecognised = why
	}
	p, why := matchMask(m, s, t, at)
	if why == "" && (p.value != "" || p.causal) {
		p.detail += " (not recognised by evaluation: " + unrecognised + ")"
	}
	return p, why
}

// matchMask plans a mask recogniseMask could not decide by the forms it is known to take.
func matchMask(m *graph.Value, s, t graph.Dim, at string) (maskPlan, string) {
	whole := maskPlan{value: m.Name, detail: fmt.Sprintf("float mask %s %s", m.Name, m.Shape)}
	w := from(m, "Where")
	if w == nil {
		return whole.check(m, t)
	}
	zero, ok0 := scalar(w.Inputs[1])
	fill, ok1 := scalar(w.Inputs[2])
	if !ok0 || !ok1 || zero != 0 || w.Inputs[0].DType != graph.Bool {
		return whole.check(m, t)
	}
	keep := w.Inputs[0]
	var causal bool
	var rest []*graph.Value
	dropped := false
	for _, term := range andTerms(keep) {
		switch {
		case allBool(term, true) || alwaysTrue(term):
			dropped = true
		case isCausal(term, s, t):
			causal = true
		default:
			rest = append(rest, term)
		}
	}
	if math.IsInf(fill, -1) {
		p := maskPlan{causal: causal}
		var parts []string
		if causal {
			parts = append(parts, "causal")
		}
		if len(rest) > 0 {
			v, add := and(rest, at)
			p.value, p.isBool, p.add = v.name, true, add
			parts = append(parts, fmt.Sprintf("bool mask %s %s", v.name, v.shape))
			if _, why := (maskPlan{}).check(&graph.Value{Name: v.name, Shape: v.shape}, t); why != "" {
				return maskPlan{}, why
			}
		}
		p.detail = strings.Join(parts, ", ")
		if p.detail == "" {
			p.detail = "mask always true"
		}
		return p, ""
	}
	// a finite fill
	if causal && len(rest) == 1 && s.Equal(t) && queryFree(rest[0], t) {
		r := rest[0]
		name := fmt.Sprintf("%s/%s", m.Name, r.Name)
		return maskPlan{
			value: name, causal: true, emptyRows: r.Name,
			add:    []graph.NodeSpec{{Name: at + "/Mask", OpType: "Where", Inputs: []string{r.Name, w.Inputs[1].Name, w.Inputs[2].Name}, Outputs: []string{name}}},
			detail: fmt.Sprintf("causal, float mask Where(%s %s, 0, %s), rows with no key kept set to the mean of V", r.Name, r.Shape, f32(fill)),
		}, ""
	}
	if !dropped || causal || len(rest) != 1 {
		return whole.check(m, t)
	}
	r := rest[0]
	if len(r.Shape) == 0 || !r.Shape[len(r.Shape)-1].Equal(t) {
		return whole.check(m, t)
	}
	name := fmt.Sprintf("%s/%s", m.Name, r.Name)
	return maskPlan{
		value:  name,
		add:    []graph.NodeSpec{{Name: at + "/Mask", OpType: "Where", Inputs: []string{r.Name, w.Inputs[1].Name, w.Inputs[2].Name}, Outputs: []string{name}}},
		detail: fmt.Sprintf("float mask Where(%s %s, 0, %s)", r.Name, r.Shape, f32(fill)),
	}, ""
}

// filledFrom adds to p what it reads of masked_fill term f, a value of no model: the term
// itself, or its zero.
func (p *maskPlan) filledFrom(f *maskedFill) {
	uses := func(name string) bool {
		return p.value == name || slices.ContainsFunc(p.add, func(n graph.NodeSpec) bool { return slices.Contains(n.Inputs, name) })
	}
	switch {
	case uses(f.node.Outputs[0]):
		p.add = append([]graph.NodeSpec{f.node}, p.add...)
		p.inits = append(p.inits, f.zero)
	case uses(f.zero.Name):
		p.inits = append(p.inits, f.zero)
	}
}

// check accepts a mask whose last axis spans the keys: an ONNX attn_mask broadcasts over
// heads and queries but not over keys (a shorter last axis masks the keys past it). A last
// dim that is a constant 1 while the keys are more is refused; a symbolic one that the
// exported Add broadcast against the keys is taken to equal them (exporters write a mask
// broadcast over keys with a constant 1).
func (p maskPlan) check(m *graph.Value, t graph.Dim) (maskPlan, string) {
	if len(m.Shape) == 0 {
		return maskPlan{}, fmt.Sprintf("the mask %s is a scalar", m.Name)
	}
	last := m.Shape[len(m.Shape)-1]
	if differ(last, t) || (last.IsConst() && !t.IsConst()) {
		return maskPlan{}, fmt.Sprintf("the mask %s %s does not span the %s keys on its last axis (an attn_mask broadcasts over heads and queries, not keys)", m.Name, m.Shape, t)
	}
	return p, ""
}

// queryFree reports whether v is a [batch or 1, 1, 1, t] mask: the same for every head and query.
func queryFree(v *graph.Value, t graph.Dim) bool {
	one := graph.Const(1)
	return v.DType == graph.Bool && len(v.Shape) == 4 && v.Shape[1].Equal(one) && v.Shape[2].Equal(one) && v.Shape[3].Equal(t)
}

// andTerms flattens a tree of And into its terms.
func andTerms(v *graph.Value) []*graph.Value {
	if a := from(v, "And"); a != nil {
		return append(andTerms(a.Inputs[0]), andTerms(a.Inputs[1])...)
	}
	return []*graph.Value{v}
}

type newValue struct {
	name  string
	shape graph.Shape
}

// and returns the And of terms: the term itself, or new And nodes named after their inputs
// (so that fusions sharing a mask share the nodes).
func and(terms []*graph.Value, at string) (newValue, []graph.NodeSpec) {
	cur := newValue{terms[0].Name, terms[0].Shape}
	var add []graph.NodeSpec
	for i, t := range terms[1:] {
		name := cur.name + "&" + t.Name
		add = append(add, graph.NodeSpec{Name: fmt.Sprintf("%s/And%d", at, i), OpType: "And", Inputs: []string{cur.name, t.Name}, Outputs: []string{name}})
		cur = newValue{name, broadcastShape(cur.shape, t.Shape)}
	}
	return cur, add
}

// broadcastShape is numpy broadcasting where it is decidable: a dim of 1 yields to the other.
func broadcastShape(a, b graph.Shape) graph.Shape {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := append(graph.Shape(nil), a...)
	off := len(a) - len(b)
	for i, d := range b {
		if out[off+i].Equal(graph.Const(1)) {
			out[off+i] = d
		}
	}
	return out
}

// index describes a value that holds Range(0, n, 1) along one axis, every other dim 1.
type index struct {
	axis, rank int
	n          graph.Dim
}

// indexOf recognises v as an index: Range(0, n, 1) under Unsqueeze, Reshape or Cast to an
// integer type.
func indexOf(v *graph.Value) (index, bool) {
	x := v
	for x.Producer != nil && (is(x.Producer, "Unsqueeze") || is(x.Producer, "Reshape") || is(x.Producer, "Cast")) {
		if is(x.Producer, "Cast") && !isInt(x.DType) {
			return index{}, false
		}
		x = x.Producer.Inputs[0]
	}
	r := from(x, "Range")
	if r == nil || len(x.Shape) != 1 || !isInt(x.DType) {
		return index{}, false
	}
	start, ok0 := constInts(r.Inputs[0])
	delta, ok1 := constInts(r.Inputs[2])
	if !ok0 || !ok1 || len(start) != 1 || len(delta) != 1 || start[0] != 0 || delta[0] != 1 {
		return index{}, false
	}
	n := x.Shape[0]
	if n.Equal(graph.Const(1)) {
		return index{}, false
	}
	idx := index{axis: -1, rank: len(v.Shape), n: n}
	for i, d := range v.Shape {
		switch {
		case d.Equal(graph.Const(1)):
		case d.Equal(n) && idx.axis < 0:
			idx.axis = i
		default:
			return index{}, false
		}
	}
	return idx, idx.axis >= 0
}

func isInt(dt graph.DType) bool {
	switch dt {
	case graph.Int64, graph.Int32, graph.Int16, graph.Int8, graph.Uint64, graph.Uint32, graph.Uint16, graph.Uint8:
		return true
	}
	return false
}

// alwaysTrue recognises index >= 0 and 0 <= index: true for every element.
func alwaysTrue(v *graph.Value) bool {
	var idx, zero *graph.Value
	if n := from(v, "GreaterOrEqual"); n != nil {
		idx, zero = n.Inputs[0], n.Inputs[1]
	} else if n := from(v, "LessOrEqual"); n != nil {
		idx, zero = n.Inputs[1], n.Inputs[0]
	} else {
		return false
	}
	z, ok := constInts(zero)
	if !ok || len(z) != 1 || z[0] != 0 {
		return false
	}
	_, ok = indexOf(idx)
	return ok
}

// isCausal recognises LessOrEqual(key index, query index) or GreaterOrEqual(query index, key
// index) over scores [.., s, t]: true where key j <= query i, the ONNX is_causal rule without
// a past.
func isCausal(v *graph.Value, s, t graph.Dim) bool {
	var kv, qv *graph.Value
	if n := from(v, "LessOrEqual"); n != nil {
		kv, qv = n.Inputs[0], n.Inputs[1]
	} else if n := from(v, "GreaterOrEqual"); n != nil {
		qv, kv = n.Inputs[0], n.Inputs[1]
	} else {
		return false
	}
	k, ok1 := indexOf(kv)
	q, ok2 := indexOf(qv)
	r := len(v.Shape)
	if !ok1 || !ok2 || r < 2 {
		return false
	}
	// positions in v's axes (inputs broadcast from the right)
	ka, qa := r-k.rank+k.axis, r-q.rank+q.axis
	return ka == r-1 && qa == r-2 && k.n.Equal(t) && q.n.Equal(s)
}

// planTerms plans the terms added to the scores as the fused op's attn_mask, is_causal and
// window: one term as planMask plans it; several as the sum of their plans, of which one at
// most may have a band, padding or rows to fix (the others are read whole: biases, as ALiBi's
// per-key one, or masks not recognised). A term of the batch·heads form is read in
// [batch, heads, ., .]: as it is when it is broadcast over batch·heads (its first dim 1, or
// fewer than 3 dims), else split (frame fr). s and t are the scores' queries and keys; at
// names the fusion for the names of new nodes.
//
// The sum is sound where the terms' plans are: the exported graph adds the terms one by one,
// the fused op their sum, which differs from it by float rounding only, except where a term
// masks with a finite fill f: there the exported graph has score + bias + f and the fused op
// f + bias, both f when score and bias are small beside |f| (the float minimum), and the rows
// with no key kept are set to the mean of V either way (see planMask). A bool mask joins the
// sum as Where(keep, 0, -inf), which -inf + bias keeps masked.
func (mt *match) planTerms(terms []term, fr frame, dt graph.DType, s, t graph.Dim, at string) (maskPlan, string) {
	plans := make([]maskPlan, len(terms))
	whole := make([]bool, len(terms))
	for i, tm := range terms {
		v, made := tm.v, false
		if tm.threeD && len(v.Shape) == 3 && !v.Shape[0].Equal(graph.Const(1)) {
			var why string
			if tm.fill != nil { // the split reads the term: make it
				mt.add, mt.inits = append(mt.add, tm.fill.node), append(mt.inits, tm.fill.zero)
			}
			if v, made, why = mt.split(v, fr); why != "" {
				return maskPlan{}, fmt.Sprintf("%s is added to the [batch·heads, queries, keys] scores but neither broadcast over batch·heads nor of batch·heads: %s", tm.v.Name, why)
			}
		}
		if !made {
			p, why := planMask(v, dt, s, t, at)
			if why != "" {
				return maskPlan{}, why
			}
			if tm.fill != nil {
				p.filledFrom(tm.fill)
			}
			plans[i] = p
			whole[i] = p.value == v.Name && !p.isBool && !p.causal && p.window == nil && p.emptyRows == "" && len(p.add) == 0
			if whole[i] && len(terms) > 1 {
				plans[i].detail = fmt.Sprintf("bias %s %s", v.Name, v.Shape)
			}
			continue
		}
		if v.DType != dt {
			return maskPlan{}, fmt.Sprintf("the term %s is %s, the scores %s", tm.v.Name, v.DType, dt)
		}
		what := "float mask"
		if len(terms) > 1 {
			what = "bias"
		}
		p, why := maskPlan{value: v.Name, detail: fmt.Sprintf("%s %s %s split to %s", what, tm.v.Name, tm.v.Shape, v.Shape)}.check(v, t)
		if why != "" {
			return maskPlan{}, why
		}
		plans[i], whole[i] = p, true
	}
	if len(plans) == 1 {
		return plans[0], ""
	}
	var main *maskPlan
	var sum, biases []string
	mainAt := ""
	for i := range plans {
		p := &plans[i]
		switch {
		case whole[i]:
			sum = append(sum, p.value)
			biases = append(biases, p.detail)
		case p.value == "" && !p.causal && p.window == nil:
			// always true: nothing to add
		case main != nil:
			return maskPlan{}, fmt.Sprintf("the scores get two masks, %s and %s; the fused Attention reads one besides biases", mainAt, terms[i].v.Name)
		default:
			main, mainAt = p, terms[i].v.Name
		}
	}
	var res maskPlan
	var parts []string
	if main != nil {
		res = *main
		parts = append(parts, main.detail)
		if main.value != "" {
			v := main.value
			if main.isBool && len(sum) > 0 {
				zero, inf := res.floatConst(0, dt, nil), res.floatConst(math.Inf(-1), dt, nil)
				f := v + "/as_float"
				res.add = append(res.add, graph.NodeSpec{Name: f, OpType: "Where", Inputs: []string{v, zero, inf}, Outputs: []string{f}})
				v, res.isBool = f, false
			}
			sum = append([]string{v}, sum...)
		}
	}
	res.value = ""
	if len(sum) > 0 {
		res.value = sum[0]
	}
	for _, x := range sum[1:] {
		next := res.value + "+" + x
		res.add = append(res.add, graph.NodeSpec{Name: next, OpType: "Add", Inputs: []string{res.value, x}, Outputs: []string{next}})
		res.value = next
	}
	res.detail = strings.Join(append(parts, biases...), ", ")
	if res.detail == "" {
		res.detail = "mask always true"
	}
	return res, ""
}
