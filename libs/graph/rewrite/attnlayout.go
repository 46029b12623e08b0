package rewrite

import (
	"fmt"
	"slices"
	"strings"

	"carve.dev/libs/graph"
)

// The attention-layout fusion: an Attention reads Q, K and V where they lie and writes Y where
// it goes.
//
// nn.MultiheadAttention (torchvision's VisionTransformer, and every encoder built on it) is
// sequence-first: it transposes its input [B, S, E] to [S, B, E], projects it by one packed
// in-projection into [S, B, 3E], takes Q, K and V from that (a Transpose to [3, S, B, E] and
// Gathers, or Slices, or a Split, as the exporter writes it), reshapes each to [S, B*H, D] and
// transposes it to [B*H, S, D]; after the attention it transposes the output back to [S, B, H, D]
// for the out-projection, and that product back to [B, S, E]. Each Transpose and Gather is a
// copy the size of the activations. The candidate is every ai.onnx Attention of 4-D Q, K and V
// without a past or presents and with ONNX's layout (the attention fusion's, or an export's),
// whose Q, K and V come from one value through movement ops (source); an attention over
// separate projections is none.
//
// Inputs: each of Q, K and V is traced back through the movement ops (views.go) to the tensor
// its elements come from. Past a product that computes every row alike (rowOp: the
// projections) the trace goes on along the rows only, their columns opaque: when the rows it
// reaches were moved by a copy (the transpose to sequence-first), the projection is made again
// over the rows where they lie ([B, S, E], unmoved), and the attention reads that. The three
// must end at one tensor (the fusion reads views of one packed projection; separate
// projections are left as they are). Each is then read through its layout (graph.AttrQLayout):
// the tensor is reshaped (a view) so that every axis holds one of batch, heads, sequence and
// head size, or a fixed index (Q, K or V of the packed axis), by the coefficients of its map.
//
// Output: Y is traced forward through its one reader after another, views, Transposes and
// row products (the out-projection), to the last Transpose; the attention writes Y in the order
// that Transpose's output holds it, and the products after it are made again over those rows.
// Without a Transpose after it, Y stays as it was.
//
// What is read and written is what the exported graph computes, element for element (the
// maps prove it); the projections made again compute the same rows, in another order.
func attentionLayoutCandidate(n *graph.Node) bool {
	if !is(n, "Attention") || len(n.Inputs) < 3 || len(n.Outputs) != 1 {
		return false
	}
	for _, a := range []string{graph.AttrQLayout, graph.AttrKLayout, graph.AttrVLayout, graph.AttrYLayout} {
		if n.Attrs.Has(a) {
			return false
		}
	}
	for i := range 3 {
		if x := n.Inputs[i]; x == nil || len(x.Shape) != 4 {
			return false
		}
	}
	if n.Input(4) != nil || n.Input(5) != nil {
		return false
	}
	src := source(n.Inputs[0])
	return src != nil && source(n.Inputs[1]) == src && source(n.Inputs[2]) == src
}

// source is the value x comes from through movement ops (the topmost projection, say), nil
// when x is that value itself (Q, K and V read as they are).
func source(x *graph.Value) *graph.Value {
	v := x
	for {
		p := v.Producer
		if p == nil || v.Kind != graph.KindActivation || v.Host {
			break
		}
		if !isView(p) && !isPick(p) {
			break
		}
		v = p.Inputs[0]
	}
	if v == x {
		return nil
	}
	return v
}

// inTrace is one of Q, K and V traced back to the tensor it is read from.
type inTrace struct {
	m       ixMap
	base    *graph.Value // where the trace stopped
	top     *graph.Value // the topmost row product's output (nil: none was crossed)
	topMap  ixMap
	rows    []*graph.Node  // the row products crossed, the topmost first
	below   int            // copies crossed below the topmost row product
	stopped string         // why the trace stopped there
	passed  []*graph.Value // the values from the attention's input to base, base excluded
}

// traceIn traces attention input x back (see the comment above).
func traceIn(md *graph.Model, x *graph.Value) inTrace {
	t := inTrace{m: newIxMap(x.Shape, "bhsd")}
	v := x
	for {
		p := v.Producer
		if p == nil || v.Kind != graph.KindActivation || v.Host {
			t.stopped = fmt.Sprintf("%s is no activation", v.Name)
			break
		}
		if isView(p) || isPick(p) {
			m, why := t.m.back(md, p, v)
			if why != "" {
				t.stopped = why
				break
			}
			if isPick(p) && t.top != nil {
				t.below++
			}
			t.passed = append(t.passed, v)
			t.m, v = m, p.Inputs[0]
			continue
		}
		in, ok := rowOp(p)
		if !ok {
			t.stopped = fmt.Sprintf("%s (%s) neither moves nor computes rows alike", p.Name, opLabel(p))
			break
		}
		if why := t.m.rowsOnly(v); why != "" {
			t.stopped = fmt.Sprintf("%s computes rows alike, but %s", p.Name, why)
			break
		}
		if t.top == nil {
			t.top, t.topMap = v, t.m.clone()
		}
		t.rows = append(t.rows, p)
		t.passed = append(t.passed, v)
		m := t.m.clone()
		r := len(m.idx) - 1
		m.idx[r] = []ixTerm{{v: m.column(in.Shape[len(in.Shape)-1]), a: graph.Const(1)}}
		t.m, v = m, in
	}
	t.base = v
	return t
}

// rowsOnly says why m, the map of v, does not keep the rows of v apart from their columns:
// the last axis must hold no batch or sequence, the others no heads, head size or columns.
func (m ixMap) rowsOnly(v *graph.Value) string {
	r := len(m.idx) - 1
	if r < 1 {
		return fmt.Sprintf("%s has no rows", v.Name)
	}
	for i, ts := range m.idx {
		for _, t := range ts {
			role := m.vars[t.v].role
			if i == r && (role == 'b' || role == 's') || i < r && (role == 'h' || role == 'd' || role == 'c') {
				return fmt.Sprintf("%s mixes rows and columns (axis %d holds %s)", v.Name, i, m.show(ts))
			}
		}
	}
	return ""
}

// layoutOf reads the layout of a tensor of shape whose elements idx names. Each axis is split
// at its free variables' coefficients (outermost first) into the fine shape, one fine axis a
// variable, with an axis read at 0 wherever a variable does not span its part (the other
// sections of a packed axis, say); the fixed terms' offset is then read as digits of those
// axes (Q, K or V's section of the packed axis). It returns the fine shape and each fine
// axis's role: b, h, s, d, or the digit of the index it is read at.
func (m ixMap) layoutOf(shape graph.Shape, idx [][]ixTerm) (graph.Shape, string, string) {
	var fine graph.Shape
	var roles []byte
	for i, all := range idx {
		var ts []ixTerm
		off := graph.Const(0)
		for _, t := range all {
			switch x := m.vars[t.v]; x.role {
			case '#':
				off = off.Add(t.a.Mul(graph.Const(x.fixed)))
			case 'c':
				return nil, "", fmt.Sprintf("axis %d (%s) holds a row's columns", i, shape[i])
			default:
				ts = append(ts, t)
			}
		}
		// outermost first: each coefficient divides the one before it
		slices.SortStableFunc(ts, func(x, y ixTerm) int {
			if _, ok := x.a.ExactDiv(y.a); ok && !x.a.Equal(y.a) {
				return -1
			}
			if _, ok := y.a.ExactDiv(x.a); ok && !x.a.Equal(y.a) {
				return 1
			}
			return 0
		})
		var f graph.Shape
		var r []byte
		prev := shape[i]
		for j, t := range ts {
			e, ok := prev.ExactDiv(t.a)
			if !ok || j > 0 && t.a.Equal(ts[j-1].a) {
				return nil, "", fmt.Sprintf("axis %d (%s) holds %s, not one part per term", i, shape[i], m.show(all))
			}
			x := m.vars[t.v]
			if !e.Equal(x.n) {
				rest, ok := e.ExactDiv(x.n)
				if !ok {
					return nil, "", fmt.Sprintf("axis %d (%s) holds %s in a part of %s", i, shape[i], x.n, e)
				}
				f, r = append(f, rest), append(r, '0')
			}
			f, r = append(f, x.n), append(r, x.role)
			prev = t.a
		}
		if len(ts) == 0 || !prev.Equal(graph.Const(1)) {
			f, r = append(f, prev), append(r, '0')
		}
		// the fixed offset, as digits of the axes no variable holds
		st := stridesOf(f)
		for k := range f {
			if off.Equal(graph.Const(0)) {
				break
			}
			q, ok := off.ExactDiv(st[k])
			qv, isConst := q.Value()
			if !ok || !isConst {
				if c, okc := off.Value(); okc {
					if sk, oks := st[k].Value(); oks && c >= sk {
						q, qv, ok, isConst = graph.Const(c/sk), c/sk, true, true
					}
				}
			}
			if !ok || !isConst {
				continue
			}
			n, okn := f[k].Value()
			if r[k] != '0' || !okn || qv >= n || qv > 9 {
				return nil, "", fmt.Sprintf("axis %d (%s) is read at offset %s, not at an index of a part no variable holds", i, shape[i], off)
			}
			r[k] = byte('0' + qv)
			off = off.Sub(q.Mul(st[k]))
		}
		if !off.Equal(graph.Const(0)) {
			return nil, "", fmt.Sprintf("axis %d (%s) is read at offset %s, not at an index of a part no variable holds", i, shape[i], off)
		}
		fine, roles = append(fine, f...), append(roles, r...)
	}
	return fine, string(roles), ""
}

// dropOnes drops the fine axes of extent 1 read at 0 (an output's layout names only its four
// axes).
func dropOnes(fine graph.Shape, roles string) (graph.Shape, string) {
	var f graph.Shape
	var r []byte
	for i, d := range fine {
		if roles[i] == '0' && d.Equal(graph.Const(1)) {
			continue
		}
		f, r = append(f, d), append(r, roles[i])
	}
	return f, string(r)
}

// named is a value of the new graph by its name and shape, where a shape's symbolic dims can be
// read.
type named struct {
	name  string
	shape graph.Shape
}

// shapeOf adds the int64 shape tensor of dims, named name: constants as they are, a
// symbolic dim read off values of from (dimPiece), and, unless exact, at most one other as -1
// (the one symbolic dim of a shape is -1: the shape is then a constant, with nothing computed
// on the host).
func (mt *match) shapeOf(name string, dims graph.Shape, from []named, exact bool) (string, string) {
	var parts []string
	var run []int64
	flush := func() {
		if len(run) > 0 {
			parts = append(parts, mt.ints(fmt.Sprintf("rewrite.%v", run), []int64{int64(len(run))}, run...))
			run = nil
		}
	}
	unknown, symbolic := 0, 0
	for _, d := range dims {
		if !d.IsConst() {
			symbolic++
		}
	}
	for _, d := range dims {
		if c, ok := d.Value(); ok {
			run = append(run, c)
			continue
		}
		piece := ""
		if exact || symbolic > 1 { // one symbolic dim is -1: the shape a constant
			piece = mt.dimPiece(d, from, 2)
		}
		if piece == "" {
			if unknown++; exact || unknown > 1 {
				return "", fmt.Sprintf("the dims %s are not read off values the fused graph keeps", dims)
			}
			run = append(run, -1)
			continue
		}
		flush()
		parts = append(parts, piece)
	}
	flush()
	if len(parts) == 1 && !exact {
		return parts[0], ""
	}
	mt.addOnce(graph.NodeSpec{Name: name, OpType: "Concat", Inputs: parts, Outputs: []string{name},
		Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: 0})})
	return name, ""
}

// dimPiece returns an int64 [1] tensor holding the symbolic dim d: an axis of one of from
// (Shape), or the product of one and what divides d by it (depth more products at most); ""
// when none.
func (mt *match) dimPiece(d graph.Dim, from []named, depth int) string {
	for _, f := range from {
		for a, x := range f.shape {
			if x.IsConst() {
				continue
			}
			if x.Equal(d) {
				out := fmt.Sprintf("%s/shape[%d]", f.name, a)
				mt.addOnce(graph.NodeSpec{Name: out, OpType: "Shape", Inputs: []string{f.name}, Outputs: []string{out},
					Attrs: graph.NewAttributes(graph.Attribute{Name: "start", Kind: graph.AttrInt, Int: int64(a)}, graph.Attribute{Name: "end", Kind: graph.AttrInt, Int: int64(a + 1)})})
				return out
			}
		}
	}
	if depth == 0 {
		return ""
	}
	for _, f := range from {
		for _, x := range f.shape {
			q, ok := d.ExactDiv(x)
			if x.IsConst() || !ok {
				continue
			}
			a := mt.dimPiece(x, from, 0)
			b := ""
			if c, ok := q.Value(); ok {
				b = mt.ints(fmt.Sprintf("rewrite.[%d]", c), []int64{1}, c)
			} else {
				b = mt.dimPiece(q, from, depth-1)
			}
			if a != "" && b != "" {
				out := fmt.Sprintf("rewrite.dim(%s)", d)
				mt.addOnce(graph.NodeSpec{Name: out, OpType: "Mul", Inputs: []string{a, b}, Outputs: []string{out}})
				return out
			}
		}
	}
	return ""
}

// shapesAgain makes again, over values the fused graph keeps, the Shape nodes that read the
// values vs (which the match removes), and adds them to the match's also. It says why not.
func (mt *match) shapesAgain(vs []*graph.Value, from []named) string {
	for _, v := range vs {
		for _, c := range v.Consumers {
			if !is(c, "Shape") || slices.Contains(mt.also, c) {
				continue
			}
			r := len(v.Shape)
			lo, hi := int(c.Attrs.Int("start", 0)), int(c.Attrs.Int("end", int64(r)))
			lo, hi = min(max(lo+r*b2i(lo < 0), 0), r), min(max(hi+r*b2i(hi < 0), 0), r)
			if _, why := mt.shapeOf(c.Outputs[0].Name, v.Shape[lo:max(lo, hi)], from, true); why != "" {
				return fmt.Sprintf("%s reads the shape of %s: %s", c.Name, v.Name, why)
			}
			mt.also = append(mt.also, c)
		}
	}
	return ""
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// addOnce adds ns unless a node of its name is added already.
func (mt *match) addOnce(ns graph.NodeSpec) {
	if !slices.ContainsFunc(mt.add, func(x graph.NodeSpec) bool { return x.Name == ns.Name }) {
		mt.add = append(mt.add, ns)
	}
}

// reshaped is v viewed as fine (v itself when its shape is fine), with the nodes that do it.
func (mt *match) reshaped(v named, fine graph.Shape, out string, from []named) (string, string) {
	if slices.EqualFunc(v.shape, fine, graph.Dim.Equal) {
		return v.name, ""
	}
	shape, why := mt.shapeOf(out+"/shape", fine, from, false)
	if why != "" {
		return "", why
	}
	mt.addOnce(graph.NodeSpec{Name: out, OpType: "Reshape", Inputs: []string{v.name, shape}, Outputs: []string{out}})
	return out, ""
}

// remakeRows adds the row products rows (the first the last one made) over the rows of x (its
// last axis their columns), named after each product's output with suffix, and returns the
// last output and its shape: x's leading dims, or their product when a Gemm needed them
// flattened.
func (mt *match) remakeRows(x named, rows []*graph.Node, suffix string) named {
	cur := x
	for i := len(rows) - 1; i >= 0; i-- {
		p := rows[i]
		if is(p, "Gemm") && len(cur.shape) != 2 {
			f := cur.name + "/rows"
			mt.addOnce(graph.NodeSpec{Name: f, OpType: "Flatten", Inputs: []string{cur.name}, Outputs: []string{f},
				Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: int64(len(cur.shape) - 1)})})
			r := len(cur.shape) - 1
			cur = named{f, graph.Shape{graph.Shape(cur.shape[:r]).NumElements(), cur.shape[r]}}
		}
		ins := make([]string, len(p.Inputs))
		for j, in := range p.Inputs {
			if in != nil {
				ins[j] = in.Name
			}
		}
		src, _ := rowOp(p)
		ins[slices.Index(p.Inputs, src)] = cur.name
		out := p.Outputs[0].Name + suffix
		mt.addOnce(graph.NodeSpec{Name: out, OpType: p.OpType, Domain: p.Domain, Inputs: ins, Outputs: []string{out}, Attrs: p.Attrs})
		o := p.Outputs[0].Shape
		cur = named{out, append(slices.Clone(cur.shape[:len(cur.shape)-1]), o[len(o)-1])}
	}
	return cur
}

// matchAttentionLayout matches Attention node n (attentionLayoutCandidate).
func matchAttentionLayout(md *graph.Model, n *graph.Node) (*match, string) {
	mt := &match{kind: AttentionLayout, interior: []*graph.Node{n}, root: n}
	mt.fused = n.Name + "/Layout"
	alive := []named{}
	for _, in := range md.Inputs {
		alive = append(alive, named{in.Name, in.Shape})
	}

	// Q, K and V: one tensor's views
	var traces [3]inTrace
	for i := range traces {
		traces[i] = traceIn(md, n.Inputs[i])
	}
	remake := traces[0].top != nil
	for _, t := range traces {
		if t.base != traces[0].base || t.top != traces[0].top || !slices.Equal(t.rows, traces[0].rows) {
			return nil, fmt.Sprintf("Q, K and V are not views of one tensor (Q's trace stops at %s: %s; K's at %s; V's at %s)",
				traces[0].base.Name, traces[0].stopped, traces[1].base.Name, traces[2].base.Name)
		}
		remake = remake && t.below > 0 && t.m.rowsIntact(t.base)
	}
	var base named
	var maps [3][][]ixTerm
	var vars [3]ixMap
	var details []string
	switch t := traces[0]; {
	case remake:
		// the projection made again over the rows where they lie: P' = rows(X), its rows X's
		// and its columns P's
		x := t.base
		alive = append(alive, named{x.Name, x.Shape})
		base = mt.remakeRows(named{x.Name, x.Shape}, t.rows, "/rows")
		for i, tr := range traces {
			lead := tr.m.idx[:len(tr.m.idx)-1]
			cols := tr.topMap.idx[len(tr.topMap.idx)-1]
			if len(base.shape) == 2 && len(x.Shape) != 2 {
				maps[i] = [][]ixTerm{flat(lead, x.Shape[:len(x.Shape)-1]), cols}
			} else {
				maps[i] = append(slices.Clone(lead), cols)
			}
			vars[i] = tr.m
		}
		details = append(details, fmt.Sprintf("Q, K and V views of %s, made again over the rows of %s", t.top.Name, x.Name))
	case t.top != nil:
		base = named{t.top.Name, t.top.Shape}
		for i, tr := range traces {
			maps[i], vars[i] = tr.topMap.idx, tr.topMap
		}
		details = append(details, "Q, K and V views of "+base.name)
	default:
		base = named{t.base.Name, t.base.Shape}
		for i, tr := range traces {
			maps[i], vars[i] = tr.m.idx, tr.m
		}
		details = append(details, "Q, K and V views of "+base.name)
	}
	// the Shape nodes that read the values removed are made again over values upstream of them
	// all (graph inputs, and where the trace stopped), whose shapes the new nodes then read
	upstream := slices.Clone(alive)
	if t := traces[0]; !remake && t.top == nil {
		upstream = append(upstream, base)
	}
	var gone []*graph.Value
	for _, t := range traces {
		for _, v := range t.passed {
			if !remake && v == t.top {
				break // the tensor read: it stays, and what it is computed from
			}
			gone = append(gone, v)
		}
	}
	// the copies must go: a copy something else reads stays, and reading the projection in place
	// beside it would only keep both
	mine := map[*graph.Node]bool{n: true}
	for _, v := range gone {
		mine[v.Producer] = true
	}
	for _, v := range gone {
		for _, c := range v.Consumers {
			if !mine[c] && !is(c, "Shape") {
				return nil, fmt.Sprintf("%s, which the attention would read in place, is read by %s (%s) too", v.Name, c.Name, opLabel(c))
			}
		}
		if v.Output {
			return nil, fmt.Sprintf("%s, which the attention would read in place, is a graph output", v.Name)
		}
	}
	alive = append(alive, base)
	inputs := make([]string, len(n.Inputs))
	for i, in := range n.Inputs {
		if in != nil {
			inputs[i] = in.Name
		}
	}
	var attrs []graph.Attribute
	var lays []string
	for i, name := range []string{graph.AttrQLayout, graph.AttrKLayout, graph.AttrVLayout} {
		fine, roles, why := vars[i].layoutOf(base.shape, maps[i])
		if why == "" {
			_, err := graph.ParseAttentionLayout(roles, false)
			if err != nil {
				why = err.Error()
			}
		}
		if why != "" {
			return nil, fmt.Sprintf("%s as a view of %s: %s", "QKV"[i:i+1], base.name, why)
		}
		view := fmt.Sprintf("%s/view%s", base.name, fine)
		if inputs[i], why = mt.reshaped(base, fine, view, alive); why != "" {
			return nil, why
		}
		attrs = append(attrs, graph.Attribute{Name: name, Kind: graph.AttrString, String: roles})
		lays = append(lays, roles)
	}
	details = append(details, "layouts "+strings.Join(lays, ", "))

	// Y: written where the last Transpose after it puts it
	y := n.Outputs[0]
	out := y.Name
	added, inits, also := len(mt.add), len(mt.inits), len(mt.also)
	if yo := traceOut(y); yo.v != nil {
		r := len(yo.m.idx)
		shape, idx := yo.v.Shape, yo.m.idx
		if len(yo.rows) > 0 {
			shape, idx = shape[:r-1], idx[:r-1]
		}
		fine, roles, why := yo.m.layoutOf(shape, idx)
		if why == "" {
			fine, roles = dropOnes(fine, roles)
			if len(yo.rows) > 0 {
				fine, roles = append(fine, y.Shape[1], y.Shape[3]), roles+"hd"
			}
			if _, err := graph.ParseAttentionLayout(roles, true); err != nil {
				why = err.Error()
			}
		}
		if why != "" {
			details = append(details, fmt.Sprintf("Y written as exported (as the order of %s: %s)", yo.v.Name, why))
		} else {
			raw := named{yo.v.Name, fine}
			if len(yo.rows) > 0 || !slices.EqualFunc(fine, yo.v.Shape, graph.Dim.Equal) {
				raw.name = yo.v.Name + "/attention"
			}
			cur := raw
			if len(yo.rows) > 0 {
				f := raw.name + "/rows"
				mt.addOnce(graph.NodeSpec{Name: f, OpType: "Flatten", Inputs: []string{raw.name}, Outputs: []string{f},
					Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: int64(len(fine) - 2)})})
				cur = named{f, graph.Shape{graph.Shape(fine[:len(fine)-2]).NumElements(), y.Shape[1].Mul(y.Shape[3])}}
				rows := slices.Clone(yo.rows)
				slices.Reverse(rows) // remakeRows takes the last made first
				cur = mt.remakeRows(cur, rows, "/rows")
			}
			ok := true
			if why := mt.shapesAgain(yo.passed, upstream); why != "" {
				details = append(details, "Y written as exported: "+why)
				ok = false
			} else if cur.name != yo.v.Name {
				// a view back to the shape of the Transpose's output
				shape, why := mt.shapeOf(yo.v.Name+"/shape", yo.v.Shape, append(alive, raw), false)
				if why != "" {
					details = append(details, "Y written as exported: "+why)
					ok = false
				} else {
					mt.add = append(mt.add, graph.NodeSpec{Name: yo.v.Name + "/View", OpType: "Reshape", Inputs: []string{cur.name, shape}, Outputs: []string{yo.v.Name}})
				}
			}
			if ok {
				out = raw.name
				mt.root = yo.nodes[len(yo.nodes)-1]
				mt.interior = append(mt.interior, yo.nodes...)
				attrs = append(attrs, graph.Attribute{Name: graph.AttrYLayout, Kind: graph.AttrString, String: roles})
				d := "Y written " + roles
				if len(yo.rows) > 0 {
					d += fmt.Sprintf(", %d row products after it made again over its rows", len(yo.rows))
				}
				details = append(details, d)
			} else {
				mt.add, mt.inits, mt.also = mt.add[:added], mt.inits[:inits], mt.also[:also]
			}
		}
	}
	if mt.root == n && slices.Equal(inputs[:3], []string{n.Inputs[0].Name, n.Inputs[1].Name, n.Inputs[2].Name}) {
		return nil, "Q, K and V are read as they are and Y has no Transpose after it: nothing to absorb"
	}
	if why := mt.shapesAgain(gone, upstream); why != "" {
		return nil, why
	}
	mt.add = append(mt.add, graph.NodeSpec{Name: mt.fused, OpType: "Attention", Inputs: inputs, Outputs: []string{out},
		Attrs: withAttrs(n.Attrs, attrs...)})
	mt.detail = strings.Join(details, "; ")
	return mt, ""
}

// withAttrs is a plus extra.
func withAttrs(a graph.Attributes, extra ...graph.Attribute) graph.Attributes {
	var list []graph.Attribute
	for _, name := range a.Names() {
		at, _ := a.Get(name)
		list = append(list, at)
	}
	return graph.NewAttributes(append(list, extra...)...)
}

// rowsIntact reports whether the last axis of x, whose map m is, holds its rows' columns
// alone and whole, the other axes no columns.
func (m ixMap) rowsIntact(x *graph.Value) bool {
	r := len(m.idx) - 1
	if r < 1 || m.rowsOnly(x) != "" || len(m.idx[r]) != 1 {
		return false
	}
	t := m.idx[r][0]
	c := m.vars[t.v]
	return c.role == 'c' && c.n.Equal(x.Shape[r]) && t.a.Equal(graph.Const(1))
}

// outTrace is Y traced forward to the last Transpose after it.
type outTrace struct {
	v      *graph.Value // the last Transpose's output; nil when there is none
	m      ixMap
	rows   []*graph.Node  // the row products before it, in graph order
	nodes  []*graph.Node  // the nodes from Y to it
	passed []*graph.Value // the values from Y to it, it excluded
}

// traceOut traces Y forward through its one reader after another.
func traceOut(y *graph.Value) outTrace {
	var best outTrace
	m, v := newIxMap(y.Shape, "bhsd"), y
	var rows, nodes []*graph.Node
	var passed []*graph.Value
	for {
		r := readerBesidesShapes(v)
		if r == nil || r.Inputs[0] != v {
			break
		}
		passed = append(passed, v)
		if isView(r) || is(r, "Transpose") {
			m2, why := m.forward(r)
			if why != "" {
				break
			}
			m, v = m2, r.Outputs[0]
			nodes = append(nodes, r)
			if is(r, "Transpose") {
				best = outTrace{v: v, m: m.clone(), rows: slices.Clone(rows), nodes: slices.Clone(nodes), passed: slices.Clone(passed)}
			}
			continue
		}
		if x, ok := rowOp(r); !ok || x != v || !m.wholeRows(v, y) {
			break
		}
		m = m.clone()
		o := r.Outputs[0]
		m.idx[len(m.idx)-1] = []ixTerm{{v: m.column(o.Shape[len(o.Shape)-1]), a: graph.Const(1)}}
		rows, nodes = append(rows, r), append(nodes, r)
		v = o
	}
	return best
}

// readerBesidesShapes returns the one node that reads v besides Shape nodes (which read its
// shape only), nil if v has more or none or is a graph output.
func readerBesidesShapes(v *graph.Value) *graph.Node {
	if v.Output {
		return nil
	}
	var r *graph.Node
	for _, c := range v.Consumers {
		switch {
		case is(c, "Shape"):
		case r != nil:
			return nil
		default:
			r = c
		}
	}
	return r
}

// wholeRows reports whether each row of v (its last axis) is one whole row of the attention's
// output y [B, H, S, Dv] in the order h*Dv + d, or the columns of a row product's, and the other
// axes hold batch and sequence only.
func (m ixMap) wholeRows(v, y *graph.Value) bool {
	if m.rowsOnly(v) != "" {
		return false
	}
	r := len(v.Shape) - 1
	last := v.Shape[r]
	ts := m.idx[r]
	switch len(ts) {
	case 1:
		x := m.vars[ts[0].v]
		return x.role == 'c' && x.n.Equal(last) && ts[0].a.Equal(graph.Const(1))
	case 2:
		h, d := ts[0], ts[1]
		if m.vars[h.v].role == 'd' {
			h, d = d, h
		}
		dv := y.Shape[3]
		return m.vars[h.v].role == 'h' && m.vars[d.v].role == 'd' && h.a.Equal(dv) && d.a.Equal(graph.Const(1)) && last.Equal(y.Shape[1].Mul(dv))
	}
	return false
}
