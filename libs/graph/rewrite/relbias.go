package rewrite

import (
	"fmt"
	"slices"
	"strings"

	"carve.dev/libs/graph"
)

// Relative-position biases gathered by index: DeBERTa-v2's disentangled attention.
//
// DeBERTa adds to its scores Q K^T / s two terms gathered from tables linear in the sequence:
//
//	c2p[n, i, j] = GatherElements(Q posK^T / s, Expand(idx), axis -1)[n, i, j]   = c2pT[n, i, idx[i, j]]
//	p2c[n, i, j] = Transpose(GatherElements(K posQ^T / s, Expand(idx')))[n, i, j] = p2cT[n, j, idx'[j, i]]
//
// with idx[i, j] = clamp(bucket(i - j) + k, 0, 2k - 1), bucket a log-bucketed relative position
// written out in some twenty ops (Sub, Sign, Abs, Where, Log, Ceil, Clip, Cast, ...). Exported,
// each gathered term is a [batch·heads, seq, seq] tensor, and so is the index. But an index of
// i - j alone is one value per diagonal: the fused Attention reads the tables and one index
// entry per diagonal (graph.AttnRelC2P), and adds the terms to each tile of scores, so no
// [seq, seq] value is left.
//
// The index is recognised by what it computes, not by its ops: it must be a function of r - c
// only (a Toeplitz matrix; r the table's row, c the other axis), and that is proven by
// construction (toeplitzFinder):
//
//   - a leaf: a value whose every element is a (r - c) + off, a = 1 or -1 and off an integer.
//     Its cone may only move positions (Range of a constant start and step 1 or -1, Unsqueeze,
//     Squeeze, Expand, Identity, Cast, Reshapes that only add or drop dims of 1) and add them
//     and integer constants (Add, Sub, Neg): every element is then an integer sum of positions
//     and constants, affine in (r, c) with coefficients that no binding changes, and the mask
//     evaluator, probing it at three bindings, reads a and off off it (maskeval.go's evaluator,
//     which refuses anything else);
//   - an elementwise op (Where, Clip, Log, Ceil, Sign, Abs, comparisons, arithmetic, Cast, ...)
//     whose every input is Toeplitz or one element: it is applied to each element alone, so
//     equal inputs on a diagonal give equal outputs;
//   - a reshape that only adds or drops leading dims of 1 of a Toeplitz value.
//
// Every Toeplitz value is [1, .., 1, rows, cols], like the index. The index entry of diagonal
// i - j is then the same chain of elementwise ops applied to a (i - j) + off (a (j - i) + off
// for a transposed gather): the fused graph computes it over the vector i - j =
// Range(1 - T, S) (S + T - 1 entries) with the exported ops themselves, on the device, as
// the exported graph computed its [seq, seq] index, and casts it to int32. A scale of the
// gathered term (Mul or Div by a scalar known at load) is applied to its table.
//
// A GatherElements that does not match (another axis, an index that is not Toeplitz, a table
// whose rows are not the scores') stays a term of the scores, read whole, and the fusion's
// detail says why.

// relTerm is a term of the scores recognised as a gathered relative-position bias.
type relTerm struct {
	v      *graph.Value // the term
	table  *graph.Value // [N, rows, R] (the batch·heads form) or [B, H, rows, R]
	p2c    bool         // the table's rows are the keys (the gather is transposed), else the queries
	scale  float64      // the product of the scalars the gathered term is scaled by
	index  *toeplitz    // the index [.., rows, cols], as a function of row - col
	idx    *graph.Value // the index before its Expand
	threeD bool
}

func (r *relTerm) kind() string {
	if r.p2c {
		return "position-to-content"
	}
	return "content-to-position"
}

// relativeTerm recognises v, a term of scores [.., s, t] of type dt, as a gathered
// relative-position bias. gather reports whether v is a (scaled, transposed) GatherElements
// at all: why explains a refusal only then.
func relativeTerm(m *graph.Model, v *graph.Value, s, t graph.Dim) (rt *relTerm, gather bool, why string) {
	x, scale, transposed := v, 1.0, false
	for {
		if inner, f, nodes, _ := scaleChain(m, x, nil, false); len(nodes) > 0 {
			x, scale = inner, scale*f
			continue
		}
		if tr := from(x, "Transpose"); tr != nil && swapsLastTwo(tr.Attrs.Ints("perm"), len(x.Shape)) {
			x, transposed = tr.Inputs[0], !transposed
			continue
		}
		break
	}
	g := from(x, "GatherElements")
	if g == nil {
		return nil, false, ""
	}
	r := len(x.Shape)
	table, ix := g.Inputs[0], g.Inputs[1]
	if a := g.Attrs.Int("axis", 0); r < 3 || (a != -1 && a != int64(r-1)) {
		return nil, true, fmt.Sprintf("%s gathers %s along axis %d; a relative bias gathers a [.., rows, R] table along its last", g.Name, x, a)
	}
	if len(table.Shape) != r || table.DType != v.DType {
		return nil, true, fmt.Sprintf("%s gathers from %s, not a table of %s like the scores", g.Name, table, v.DType)
	}
	rows, cols := x.Shape[r-2], x.Shape[r-1]
	for a := 0; a < r-1; a++ {
		if differ(table.Shape[a], x.Shape[a]) {
			return nil, true, fmt.Sprintf("%s gathers %s from %s, whose dim %d differs", g.Name, x, table, a)
		}
	}
	wantRows, wantCols := s, t
	if transposed {
		wantRows, wantCols = t, s
	}
	if differ(rows, wantRows) || differ(cols, wantCols) {
		return nil, true, fmt.Sprintf("%s gathers %s, whose rows and columns are not the scores' %s and %s", g.Name, x, wantRows, wantCols)
	}
	idx := ix
	if e := from(ix, "Expand"); e != nil {
		idx = e.Inputs[0]
	}
	if !isInt(idx.DType) {
		return nil, true, fmt.Sprintf("%s gathers by %s", g.Name, idx)
	}
	f := &toeplitzFinder{m: m, rows: rows, cols: cols, memo: map[*graph.Value]*toeplitz{}, why: map[*graph.Value]string{}}
	tz, why := f.find(idx)
	if why != "" {
		return nil, true, fmt.Sprintf("the index %s of %s is not shown to depend on row - column alone: %s", idx.Name, g.Name, why)
	}
	return &relTerm{v: v, table: table, p2c: transposed, scale: scale, index: tz, idx: idx, threeD: r == 3}, true, ""
}

// swapsLastTwo reports whether perm swaps the last two of r axes and keeps the others.
func swapsLastTwo(perm []int64, r int) bool {
	if len(perm) != r || r < 2 {
		return false
	}
	for a := 0; a < r-2; a++ {
		if perm[a] != int64(a) {
			return false
		}
	}
	return perm[r-2] == int64(r-1) && perm[r-1] == int64(r-2)
}

// toeplitz is a value [1, .., 1, rows, cols] shown to depend on row - col alone, and how.
type toeplitz struct {
	v *graph.Value
	// node is an elementwise op over args, one per input: nil for an omitted input or one of
	// one element (read as it is).
	node *graph.Node
	args []*toeplitz
	pass *toeplitz // a reshape of pass
	// a leaf: v[r, c] = a (r - c) + off
	leaf   bool
	a, off int64
}

// toeplitzFinder finds how values [1, .., 1, rows, cols] of model m depend on row - col.
type toeplitzFinder struct {
	m          *graph.Model
	rows, cols graph.Dim
	memo       map[*graph.Value]*toeplitz
	why        map[*graph.Value]string
}

// elementwiseOps are the ops that compute each element of their output from the elements of
// their inputs at the same (broadcast) position alone.
var elementwiseOps = map[string]bool{
	"Abs": true, "Ceil": true, "Floor": true, "Round": true, "Sign": true, "Neg": true, "Log": true, "Exp": true,
	"Sqrt": true, "Reciprocal": true, "Erf": true, "Tanh": true, "Sigmoid": true, "Relu": true, "Not": true,
	"IsNaN": true, "IsInf": true, "Cast": true, "Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true,
	"Mod": true, "Min": true, "Max": true, "Sum": true, "And": true, "Or": true, "Xor": true, "Equal": true,
	"Less": true, "LessOrEqual": true, "Greater": true, "GreaterOrEqual": true, "BitwiseAnd": true,
	"BitwiseOr": true, "BitwiseXor": true, "BitwiseNot": true, "Where": true, "Clip": true,
}

// reshapeOps move a tensor's elements without changing them; one that only adds or drops
// leading dims of 1 keeps every element's (row, col).
var reshapeOps = map[string]bool{"Identity": true, "Unsqueeze": true, "Squeeze": true, "Reshape": true, "Flatten": true, "Expand": true}

// shaped returns "" if v is [1, .., 1, rows, cols], else why not.
func (f *toeplitzFinder) shaped(v *graph.Value) string {
	r := len(v.Shape)
	if r < 2 || !v.Shape[r-2].Equal(f.rows) || !v.Shape[r-1].Equal(f.cols) {
		return fmt.Sprintf("%s is not [.., %s, %s]", v, f.rows, f.cols)
	}
	for _, d := range v.Shape[:r-2] {
		if !d.Equal(graph.Const(1)) {
			return fmt.Sprintf("%s is not [1, .., 1, %s, %s]", v, f.rows, f.cols)
		}
	}
	return ""
}

// one reports whether v has one element (it broadcasts over rows and columns).
func one(v *graph.Value) bool {
	n, ok := v.Shape.NumElements().Value()
	return ok && n == 1
}

// find returns how v depends on row - col, or why it is not shown to.
func (f *toeplitzFinder) find(v *graph.Value) (*toeplitz, string) {
	if t, ok := f.memo[v]; ok {
		return t, ""
	}
	if why, ok := f.why[v]; ok {
		return nil, why
	}
	t, why := f.findValue(v)
	if why != "" {
		f.why[v] = why
		return nil, why
	}
	f.memo[v] = t
	return t, ""
}

func (f *toeplitzFinder) findValue(v *graph.Value) (*toeplitz, string) {
	if why := f.shaped(v); why != "" {
		return nil, why
	}
	n := v.Producer
	if n == nil || n.Domain != "" || len(n.Outputs) != 1 {
		return f.leaf(v)
	}
	switch {
	case reshapeOps[n.OpType]:
		if f.shaped(n.Inputs[0]) == "" {
			p, why := f.find(n.Inputs[0])
			if why != "" {
				return nil, why
			}
			return &toeplitz{v: v, pass: p}, ""
		}
	case elementwiseOps[n.OpType]:
		t := &toeplitz{v: v, node: n, args: make([]*toeplitz, len(n.Inputs))}
		why, shapes := "", false
		for i, in := range n.Inputs {
			if in == nil || one(in) {
				continue
			}
			if t.args[i], why = f.find(in); why != "" {
				shapes = f.shaped(in) != ""
				break
			}
		}
		if why == "" {
			return t, ""
		}
		// a difference of positions is a leaf, not an op of Toeplitz inputs
		l, lwhy := f.leaf(v)
		switch {
		case lwhy == "":
			return l, ""
		case shapes: // the op broadcasts: the leaf's reason says more
			return nil, lwhy
		}
		return nil, why
	}
	return f.leaf(v)
}

// leaf returns v as a (r - c) + off, or why it is not shown to be.
func (f *toeplitzFinder) leaf(v *graph.Value) (*toeplitz, string) {
	if _, why := f.affine(v, map[*graph.Value]affKind{}); why != "" {
		return nil, fmt.Sprintf("%s is no op of values that depend on row - column alone, nor a sum of positions (%s)", v.Name, why)
	}
	c, why := coneOf(v)
	if why != "" {
		return nil, why
	}
	if len(c.inputs) > 0 {
		return nil, fmt.Sprintf("%s reads the data of %s", v.Name, c.inputs[0].Name)
	}
	dims := f.cols.Syms(f.rows.Syms(c.dims))
	l := &toeplitz{v: v, leaf: true}
	seen := false
	for probe := range 3 {
		env := map[string]int64{}
		for i, d := range dims {
			env[d] = int64(3 + probe + i)
		}
		ev := &evaluator{env: env, memo: map[*graph.Value]*etensor{}}
		x, err := ev.eval(v)
		if err != nil {
			return nil, fmt.Sprintf("%s cannot be evaluated at %v: %v", v.Name, env, err)
		}
		k := len(x.shape)
		if k < 2 || len(x.data) == 0 {
			return nil, fmt.Sprintf("%s evaluates to shape %v at %v", v.Name, x.shape, env)
		}
		rows, cols := x.shape[k-2], x.shape[k-1]
		if int64(len(x.data)) != rows*cols {
			return nil, fmt.Sprintf("%s evaluates to shape %v at %v", v.Name, x.shape, env)
		}
		at := func(r, c int64) float64 { return x.data[r*cols+c] }
		if rows < 2 || cols < 2 {
			continue
		}
		a, off := at(1, 0)-at(0, 0), at(0, 0)
		if (a != 1 && a != -1) || at(0, 1)-at(0, 0) != -a || off != float64(int64(off)) {
			return nil, fmt.Sprintf("%s is not ±(row - column) plus a constant at %v", v.Name, env)
		}
		if seen && (int64(a) != l.a || int64(off) != l.off) {
			return nil, fmt.Sprintf("%s is %g (row - column) + %g at %v, %d (row - column) + %d at smaller dims", v.Name, a, off, env, l.a, l.off)
		}
		l.a, l.off, seen = int64(a), int64(off), true
		for r := range rows {
			for c := range cols {
				if at(r, c) != a*float64(r-c)+off {
					return nil, fmt.Sprintf("%s is not ±(row - column) plus a constant at %v", v.Name, env)
				}
			}
		}
	}
	if !seen {
		return nil, fmt.Sprintf("%s has fewer than two rows or columns at every probe", v.Name)
	}
	return l, ""
}

// affKind is what a value of a leaf's cone is: an integer constant, a length (a host value
// of the dims), or positions (integer sums of positions and constants).
type affKind int

const (
	affConst affKind = iota
	affLength
	affPositions
)

// affine says what v is in a leaf's cone, or why it is none of those (memo: the values seen).
func (f *toeplitzFinder) affine(v *graph.Value, memo map[*graph.Value]affKind) (affKind, string) {
	if k, ok := memo[v]; ok {
		return k, ""
	}
	k, why := f.affineValue(v, memo)
	if why == "" {
		memo[v] = k
	}
	return k, why
}

func (f *toeplitzFinder) affineValue(v *graph.Value, memo map[*graph.Value]affKind) (affKind, string) {
	if !isInt(v.DType) && !isFloat(v.DType) && v.DType != graph.Float64 {
		return 0, fmt.Sprintf("%s is %s", v.Name, v.DType)
	}
	if d, ok := f.m.HostData(v); ok {
		for _, x := range d {
			if !x.IsConst() {
				return affLength, ""
			}
		}
		return affConst, ""
	}
	if t, ok := constData(v); ok {
		if isInt(t.DType) {
			return affConst, ""
		}
		x, ok := scalar(v)
		if !ok || x != float64(int64(x)) {
			return 0, fmt.Sprintf("%s is a constant that is not an integer", v.Name)
		}
		return affConst, ""
	}
	n := v.Producer
	if n == nil || n.Domain != "" {
		return 0, fmt.Sprintf("%s is not computed by the graph's ops from constants and shapes", v.Name)
	}
	input := func(i int) (affKind, string) { return f.affine(n.Inputs[i], memo) }
	switch n.OpType {
	case "Range":
		for i, what := range []string{"start", "step"} {
			in := n.Inputs[2*i]
			k, why := f.affine(in, memo)
			if why != "" || k != affConst || !one(in) {
				return 0, fmt.Sprintf("the %s of %s is not an integer constant", what, n.Name)
			}
		}
		if st, ok := intsOf(f.m, n.Inputs[2]); !ok || len(st) != 1 || (st[0] != 1 && st[0] != -1) {
			return 0, fmt.Sprintf("%s does not step by 1 or -1", n.Name)
		}
		if _, why := input(1); why != "" {
			return 0, why
		}
		return affPositions, ""
	case "Identity", "Unsqueeze", "Squeeze", "Expand", "Neg":
		return input(0)
	case "Cast":
		if v.DType == graph.Bool {
			return 0, fmt.Sprintf("%s casts to bool", n.Name)
		}
		return input(0)
	case "Reshape", "Flatten":
		if !slices.EqualFunc(nonOnes(n.Inputs[0].Shape), nonOnes(v.Shape), graph.Dim.Equal) {
			return 0, fmt.Sprintf("%s reshapes %s to %s, not only adding or dropping dims of 1", n.Name, n.Inputs[0].Shape, v.Shape)
		}
		return input(0)
	case "Add", "Sub":
		k := affConst
		for i, in := range n.Inputs {
			ki, why := input(i)
			if why != "" {
				return 0, why
			}
			if ki != affPositions && !one(in) {
				return 0, fmt.Sprintf("%s adds %s, which is neither positions nor one element", n.Name, in)
			}
			k = max(k, ki)
		}
		return k, ""
	}
	return 0, fmt.Sprintf("%s is computed by %s (%s)", v.Name, n.Name, opLabel(n))
}

// intsOf returns the integers of a constant, or of a host value that depends on no dim.
func intsOf(m *graph.Model, v *graph.Value) ([]int64, bool) {
	if x, ok := constInts(v); ok {
		return x, true
	}
	d, ok := m.HostData(v)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(d))
	for i, x := range d {
		if out[i], ok = x.Value(); !ok {
			return nil, false
		}
	}
	return out, true
}

// nonOnes is s without its dims of 1.
func nonOnes(s graph.Shape) graph.Shape {
	var out graph.Shape
	for _, d := range s {
		if !d.Equal(graph.Const(1)) {
			out = append(out, d)
		}
	}
	return out
}

// relEmitter adds to a match the nodes that compute an index's diagonal vector over delta, the
// int64 vector of i - j (query i, key j) for entries p = i - j + T - 1. sign is 1 where the
// index's row is the query (content-to-position), -1 where it is the key.
type relEmitter struct {
	mt     *match
	prefix string
	delta  string
	sign   int64
	memo   map[*toeplitz]string
	rank   int // the largest rank of an operand read as it is
}

func (e *relEmitter) emit(t *toeplitz) string {
	if name, ok := e.memo[t]; ok {
		return name
	}
	name := e.emitValue(t)
	e.memo[t] = name
	return name
}

func (e *relEmitter) node(op string, out string, attrs graph.Attributes, ins ...string) string {
	if !slices.ContainsFunc(e.mt.add, func(n graph.NodeSpec) bool { return n.Outputs[0] == out }) {
		e.mt.add = append(e.mt.add, graph.NodeSpec{Name: out, OpType: op, Inputs: ins, Outputs: []string{out}, Attrs: attrs})
	}
	return out
}

func (e *relEmitter) emitValue(t *toeplitz) string {
	out := e.prefix + "/" + t.v.Name
	switch {
	case t.pass != nil:
		return e.emit(t.pass)
	case t.leaf:
		x := e.delta
		switch k := t.a * e.sign; {
		case k == 1 && t.off != 0:
			x = e.node("Add", out+"/int64", graph.Attributes{}, x, e.mt.ints(fmt.Sprintf("rewrite.%d", t.off), nil, t.off))
		case k == -1:
			x = e.node("Sub", out+"/int64", graph.Attributes{}, e.mt.ints(fmt.Sprintf("rewrite.%d", t.off), nil, t.off), x)
		}
		if t.v.DType == graph.Int64 {
			return x
		}
		return e.node("Cast", out, graph.NewAttributes(graph.Attribute{Name: "to", Kind: graph.AttrInt, Int: int64(t.v.DType)}), x)
	}
	ins := make([]string, len(t.node.Inputs))
	for i, in := range t.node.Inputs {
		switch {
		case in == nil:
		case t.args[i] != nil:
			ins[i] = e.emit(t.args[i])
		default:
			ins[i] = in.Name
			e.rank = max(e.rank, len(in.Shape))
		}
	}
	e.mt.add = append(e.mt.add, graph.NodeSpec{Name: out, OpType: t.node.OpType, Inputs: ins, Outputs: []string{out}, Attrs: t.node.Attrs})
	return out
}

// relInputs adds the nodes the fused Attention at reads its relative bias by (rels, at most
// one of each kind) and returns its inputs graph.AttnRelC2P to AttnRelP2CIndex ("" where
// absent): delta = Range(1 - T, S) from Q's and K's shapes, each index's chain over it cast to
// int32, each table scaled and in [B, H, rows, R] (frame fr for the batch·heads form).
func (mt *match) relInputs(rels []*relTerm, q, k string, fr frame, dt graph.DType, at string) ([]string, string) {
	sq := mt.shapeAt(q, 2)
	sk := mt.shapeAt(k, 2)
	sqz := func(x string) string {
		out := x + "/scalar"
		if !slices.ContainsFunc(mt.add, func(n graph.NodeSpec) bool { return n.Outputs[0] == out }) {
			mt.add = append(mt.add, graph.NodeSpec{Name: out, OpType: "Squeeze", Inputs: []string{x, mt.ints("rewrite.[0]", []int64{1}, 0)}, Outputs: []string{out}})
		}
		return out
	}
	start := at + "/rel_delta_start"
	mt.add = append(mt.add, graph.NodeSpec{Name: start, OpType: "Sub", Inputs: []string{mt.ints("rewrite.[1]", []int64{1}, 1), sk}, Outputs: []string{start}})
	delta := at + "/rel_delta"
	mt.add = append(mt.add, graph.NodeSpec{Name: delta, OpType: "Range", Inputs: []string{sqz(start), sqz(sq), mt.ints("rewrite.1", nil, 1)}, Outputs: []string{delta}})
	ins := make([]string, 4)
	for _, r := range rels {
		slot, sign, name := 0, int64(1), "rel_c2p"
		if r.p2c {
			slot, sign, name = 2, -1, "rel_p2c"
		}
		e := &relEmitter{mt: mt, prefix: at + "/" + name, delta: delta, sign: sign, memo: map[*toeplitz]string{}}
		idx := e.emit(r.index)
		if e.rank > 1 {
			flat := at + "/" + name + "_index/flat"
			mt.add = append(mt.add, graph.NodeSpec{Name: flat, OpType: "Reshape", Inputs: []string{idx, mt.ints("rewrite.[-1]", []int64{1}, -1)}, Outputs: []string{flat}})
			idx = flat
		}
		if r.index.v.DType != graph.Int32 {
			cast := at + "/" + name + "_index"
			mt.add = append(mt.add, graph.NodeSpec{Name: cast, OpType: "Cast", Inputs: []string{idx}, Outputs: []string{cast},
				Attrs: graph.NewAttributes(graph.Attribute{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Int32)})})
			idx = cast
		}
		table := r.table
		if r.scale != 1 {
			var p maskPlan
			c := p.floatConst(r.scale, dt, nil)
			mt.add, mt.inits = append(mt.add, p.add...), append(mt.inits, p.inits...)
			scaled := fmt.Sprintf("%s/scaled(%s)", table.Name, f32(r.scale))
			mt.add = append(mt.add, graph.NodeSpec{Name: scaled, OpType: "Mul", Inputs: []string{table.Name, c}, Outputs: []string{scaled}})
			table = &graph.Value{Name: scaled, DType: table.DType, Shape: table.Shape}
		}
		if r.threeD {
			if table.Shape[0].Equal(graph.Const(1)) {
				t4 := table.Name + "/heads"
				mt.add = append(mt.add, graph.NodeSpec{Name: t4, OpType: "Unsqueeze", Inputs: []string{table.Name, mt.ints("rewrite.[0]", []int64{1}, 0)}, Outputs: []string{t4}})
				table = &graph.Value{Name: t4, DType: table.DType, Shape: append(graph.Shape{graph.Const(1)}, table.Shape...)}
			} else {
				t4, _, why := mt.split(table, fr)
				if why != "" {
					return nil, fmt.Sprintf("the %s table %s", r.kind(), why)
				}
				table = t4
			}
		}
		ins[slot], ins[slot+1] = table.Name, idx
	}
	return ins, ""
}

// shapeAt adds Shape(v)[a:a+1].
func (mt *match) shapeAt(v string, a int64) string {
	out := fmt.Sprintf("%s/shape[%d]", v, a)
	if !slices.ContainsFunc(mt.add, func(n graph.NodeSpec) bool { return n.Outputs[0] == out }) {
		mt.add = append(mt.add, graph.NodeSpec{Name: out, OpType: "Shape", Inputs: []string{v}, Outputs: []string{out},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "start", Kind: graph.AttrInt, Int: a}, graph.Attribute{Name: "end", Kind: graph.AttrInt, Int: a + 1})})
	}
	return out
}

// relativeTerms finds the gathered relative-position biases among terms, added to scores
// [.., s, t]: a term that is a sum of several (each read by the sum alone) is taken apart, and
// at most one of each kind is recognised. It returns the terms left, the biases and, for the
// detail, what was not recognised and why.
func relativeTerms(m *graph.Model, terms []term, s, t graph.Dim) ([]term, []*relTerm, []string) {
	var left []term
	var rels []*relTerm
	var notes []string
	have := map[bool]*relTerm{}
	for _, tm := range terms {
		if tm.fill != nil {
			left = append(left, tm)
			continue
		}
		parts := addends(tm.v)
		var found []*relTerm
		var rest []*graph.Value
		for _, p := range parts {
			r, gather, why := relativeTerm(m, p, s, t)
			switch {
			case r != nil && have[r.p2c] != nil:
				notes = append(notes, fmt.Sprintf("%s is a second %s bias, read whole", p.Name, r.kind()))
				rest = append(rest, p)
			case r != nil:
				have[r.p2c] = r
				found = append(found, r)
			default:
				if gather {
					notes = append(notes, fmt.Sprintf("%s not read as a relative bias: %s", p.Name, why))
				}
				rest = append(rest, p)
			}
		}
		if len(found) == 0 {
			left = append(left, tm)
			continue
		}
		rels = append(rels, found...)
		for _, p := range rest {
			left = append(left, term{v: p, threeD: tm.threeD && len(p.Shape) == 3})
		}
	}
	return left, rels, notes
}

// addends are the values a sum v adds, through Adds read by the sum alone (v itself if it is
// no such sum).
func addends(v *graph.Value) []*graph.Value {
	a := from(v, "Add")
	if a == nil {
		return []*graph.Value{v}
	}
	var out []*graph.Value
	for _, in := range a.Inputs {
		if only(in, a) && in.DType == v.DType && sameShape(in, v) {
			out = append(out, addends(in)...)
		} else {
			out = append(out, in)
		}
	}
	return out
}

// relDetail says what rels are, for --explain-fusion.
func relDetail(rels []*relTerm) string {
	var parts []string
	for _, r := range rels {
		parts = append(parts, fmt.Sprintf("%s bias %s gathered from %s by %s, a function of %s (recognised by construction)",
			r.kind(), r.v.Name, r.table, r.idx.Name, map[bool]string{false: "query - key", true: "key - query"}[r.p2c]))
	}
	return strings.Join(parts, ", ")
}
