package rewrite

import (
	"fmt"
	"slices"
	"strings"

	"carve.dev/libs/graph"
)

// Index maps: where the elements of a value come from, or go to, through movement ops.
//
// A movement op moves elements without computing: views (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity) keep the row-major order and only rename indices; Transpose permutes the axes;
// Gather of a constant index, Slice by constants and Split pick a part of an axis. Each of them
// maps an element's index in its output to one in its input by affine functions, so a chain of
// them does too: element (b, h, s, d) of an attention's Q is element idx(b, h, s, d) of the
// tensor the chain started from, idx giving every axis of that tensor as a sum of terms, a
// coefficient times a variable. The variables are the attention's axes (each over its range),
// the indices the chain fixed (a constant, from a Gather, a Slice's start or a Split's offset)
// and, past an op that computes each row alike (rowOp), the row's columns. Views go through
// the flat offset: the sum of the terms times the axes' strides, split back into the axes of the
// other side by the strides that divide each coefficient (split). The map is what the graph
// computes, whatever ops spelled it; the fused op then reads (or writes) the tensor at the
// chain's end through strides instead of the copies the Transposes and Gathers made.

// ixVar is a variable of an index map.
type ixVar struct {
	role  byte      // 'b', 'h', 's', 'd' (an attention's axes), 'c' (a row's columns) or '#' (fixed)
	n     graph.Dim // the range of a free variable
	fixed int64     // the index of a fixed one
}

// ixTerm is a coefficient times a variable.
type ixTerm struct {
	v int
	a graph.Dim
}

// ixMap is an index map: the variables, and per axis of the value the sum giving its index.
type ixMap struct {
	vars []ixVar
	idx  [][]ixTerm
}

// newIxMap is the identity map of a value of shape over the attention's axes roles (one per
// axis, "bhsd").
func newIxMap(shape graph.Shape, roles string) ixMap {
	var m ixMap
	for i := range shape {
		m.vars = append(m.vars, ixVar{role: roles[i], n: shape[i]})
		m.idx = append(m.idx, []ixTerm{{v: i, a: graph.Const(1)}})
	}
	return m
}

// clone copies m so that the copy's axes can change.
func (m ixMap) clone() ixMap {
	c := ixMap{vars: slices.Clone(m.vars), idx: make([][]ixTerm, len(m.idx))}
	for i, ts := range m.idx {
		c.idx[i] = slices.Clone(ts)
	}
	return c
}

// fix adds a fixed variable of index k.
func (m *ixMap) fix(k int64) int {
	m.vars = append(m.vars, ixVar{role: '#', fixed: k})
	return len(m.vars) - 1
}

// column adds a row's columns, of width n.
func (m *ixMap) column(n graph.Dim) int {
	m.vars = append(m.vars, ixVar{role: 'c', n: n})
	return len(m.vars) - 1
}

// maxOf is the largest value of sum ts.
func (m ixMap) maxOf(ts []ixTerm) graph.Dim {
	mx := graph.Const(0)
	for _, t := range ts {
		x := m.vars[t.v]
		top := graph.Const(x.fixed)
		if x.role != '#' {
			top = x.n.Sub(graph.Const(1))
		}
		mx = mx.Add(t.a.Mul(top))
	}
	return mx
}

// stridesOf is the row-major element strides of shape.
func stridesOf(shape graph.Shape) []graph.Dim {
	st := make([]graph.Dim, len(shape))
	acc := graph.Const(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc = acc.Mul(shape[i])
	}
	return st
}

// flat is the flat offset of idx over a value of shape: every term times its axis's stride,
// the terms of one variable summed.
func flat(idx [][]ixTerm, shape graph.Shape) []ixTerm {
	st := stridesOf(shape)
	var out []ixTerm
	for i, ts := range idx {
		for _, t := range ts {
			a := t.a.Mul(st[i])
			if j := slices.IndexFunc(out, func(u ixTerm) bool { return u.v == t.v }); j >= 0 {
				out[j].a = out[j].a.Add(a)
				continue
			}
			out = append(out, ixTerm{v: t.v, a: a})
		}
	}
	return out
}

// split splits a flat offset into the axes of shape: each term goes to the outermost axis whose
// stride divides its coefficient, and every axis's sum must stay below its dim (then the sums
// are the offset's row-major digits, whatever the variables' values). It says why not.
func (m ixMap) split(off []ixTerm, shape graph.Shape) ([][]ixTerm, string) {
	st := stridesOf(shape)
	idx := make([][]ixTerm, len(shape))
	for _, t := range off {
		if t.a.IsConst() {
			if c, _ := t.a.Value(); c == 0 {
				continue
			}
		}
		placed := false
		for i := range shape {
			if q, ok := t.a.ExactDiv(st[i]); ok {
				idx[i] = append(idx[i], ixTerm{v: t.v, a: q})
				placed = true
				break
			}
		}
		if !placed {
			return nil, fmt.Sprintf("no axis of %s holds a step of %s elements", shape, t.a)
		}
	}
	for i, ts := range idx {
		if room := shape[i].Sub(graph.Const(1)).Sub(m.maxOf(ts)); !room.IsConst() || neg(room) {
			return nil, fmt.Sprintf("axis %d of %s (%s) does not hold the index %s of its elements", i, shape, shape[i], m.show(ts))
		}
	}
	return idx, ""
}

func neg(d graph.Dim) bool { v, _ := d.Value(); return v < 0 }

// show describes a sum, for reasons.
func (m ixMap) show(ts []ixTerm) string {
	var parts []string
	for _, t := range ts {
		x := m.vars[t.v]
		name := string(x.role)
		if x.role == '#' {
			name = fmt.Sprint(x.fixed)
		}
		parts = append(parts, t.a.String()+"*"+name)
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, " + ")
}

// isView reports whether n is a view: its output holds its input's elements in the same order.
func isView(n *graph.Node) bool {
	return is(n, "Reshape") || is(n, "Flatten") || is(n, "Squeeze") || is(n, "Unsqueeze") || is(n, "Identity")
}

// isPick reports whether n is a movement op that copies: Transpose, Gather, Slice or Split.
func isPick(n *graph.Node) bool {
	return is(n, "Transpose") || is(n, "Gather") || is(n, "Slice") || is(n, "Split")
}

// permOf is a Transpose's perm (the axes reversed when absent).
func permOf(n *graph.Node) []int64 {
	perm := n.Attrs.Ints("perm")
	if perm == nil {
		r := len(n.Inputs[0].Shape)
		for i := range r {
			perm = append(perm, int64(r-1-i))
		}
	}
	return perm
}

// back maps m, the map of output out of movement op n, to n's input: the index of every element
// of out in n.Inputs[0]. It says why not.
func (m ixMap) back(md *graph.Model, n *graph.Node, out *graph.Value) (ixMap, string) {
	x := n.Inputs[0]
	r := m.clone()
	switch {
	case isView(n):
		idx, why := r.split(flat(m.idx, out.Shape), x.Shape)
		if why != "" {
			return ixMap{}, fmt.Sprintf("%s views %s as %s: %s", n.Name, x.Shape, out.Shape, why)
		}
		r.idx = idx
	case is(n, "Transpose"):
		perm := permOf(n)
		r.idx = make([][]ixTerm, len(perm))
		for i, p := range perm {
			r.idx[p] = m.idx[i]
		}
	case is(n, "Gather"):
		axis, err := normAxis(n.Attrs.Int("axis", 0), len(x.Shape))
		ks, ok := hostInts(md, n.Inputs[1])
		if err != nil || !ok || len(ks) != 1 || len(n.Inputs[1].Shape) > 1 {
			return ixMap{}, fmt.Sprintf("%s gathers by %s, not by one constant index", n.Name, n.Inputs[1].Name)
		}
		k, ok := nonNegIndex(ks[0], x.Shape[axis])
		if !ok {
			return ixMap{}, fmt.Sprintf("%s gathers index %d of a dim %s", n.Name, ks[0], x.Shape[axis])
		}
		f := r.fix(k)
		if len(n.Inputs[1].Shape) == 0 { // the axis goes
			r.idx = slices.Insert(slices.Clone(m.idx), axis, []ixTerm{{v: f, a: graph.Const(1)}})
		} else { // one entry kept
			r.idx[axis] = append(r.idx[axis], ixTerm{v: f, a: graph.Const(1)})
		}
	case is(n, "Slice"):
		starts, ok1 := hostInts(md, n.Input(1))
		var axes, steps []int64
		ok2, ok3 := true, true
		if a := n.Input(3); a != nil {
			axes, ok2 = hostInts(md, a)
		}
		if s := n.Input(4); s != nil {
			steps, ok3 = hostInts(md, s)
		}
		if !ok1 || !ok2 || !ok3 {
			return ixMap{}, fmt.Sprintf("%s slices by values not known at load", n.Name)
		}
		for i, s := range starts {
			ax := int64(i)
			if axes != nil {
				ax = axes[i]
			}
			a, err := normAxis(ax, len(x.Shape))
			step := int64(1)
			if steps != nil {
				step = steps[i]
			}
			if err != nil || step < 1 {
				return ixMap{}, fmt.Sprintf("%s slices axis %d by step %d", n.Name, ax, step)
			}
			start, ok := nonNegIndex(s, x.Shape[a])
			if !ok {
				return ixMap{}, fmt.Sprintf("%s slices from %d of a dim %s", n.Name, s, x.Shape[a])
			}
			for j := range r.idx[a] {
				r.idx[a][j].a = r.idx[a][j].a.Mul(graph.Const(step))
			}
			if start > 0 {
				r.idx[a] = append(r.idx[a], ixTerm{v: r.fix(start), a: graph.Const(1)})
			}
		}
	case is(n, "Split"):
		axis, err := normAxis(n.Attrs.Int("axis", 0), len(x.Shape))
		k := slices.Index(n.Outputs, out)
		if err != nil || k < 0 {
			return ixMap{}, fmt.Sprintf("%s splits axis %d", n.Name, n.Attrs.Int("axis", 0))
		}
		var off int64
		for _, o := range n.Outputs[:k] {
			d, ok := o.Shape[axis].Value()
			if !ok {
				return ixMap{}, fmt.Sprintf("%s splits axis %d into parts that are not constants", n.Name, axis)
			}
			off += d
		}
		if off > 0 {
			r.idx[axis] = append(r.idx[axis], ixTerm{v: r.fix(off), a: graph.Const(1)})
		}
	default:
		return ixMap{}, fmt.Sprintf("%s (%s) is not a movement op", n.Name, opLabel(n))
	}
	return r, ""
}

// forward maps m, the map of n's input 0, to n's output, n a view or a Transpose.
func (m ixMap) forward(n *graph.Node) (ixMap, string) {
	x, out := n.Inputs[0], n.Outputs[0]
	r := m.clone()
	switch {
	case isView(n):
		idx, why := r.split(flat(m.idx, x.Shape), out.Shape)
		if why != "" {
			return ixMap{}, fmt.Sprintf("%s views %s as %s: %s", n.Name, x.Shape, out.Shape, why)
		}
		r.idx = idx
	case is(n, "Transpose"):
		perm := permOf(n)
		r.idx = make([][]ixTerm, len(perm))
		for i, p := range perm {
			r.idx[i] = m.idx[p]
		}
	default:
		return ixMap{}, fmt.Sprintf("%s (%s) is not a view or a Transpose", n.Name, opLabel(n))
	}
	return r, ""
}

// nonNegIndex resolves an index that may count from the end of an axis of dim d.
func nonNegIndex(k int64, d graph.Dim) (int64, bool) {
	if k >= 0 {
		if n, ok := d.Value(); ok && k >= n {
			return 0, false
		}
		return k, true
	}
	n, ok := d.Value()
	if !ok || k+n < 0 {
		return 0, false
	}
	return k + n, true
}

// hostInts returns the entries of an integer value known at load: a constant, or host data
// (a shape computation) whose every entry is a constant dim.
func hostInts(m *graph.Model, v *graph.Value) ([]int64, bool) {
	if v == nil {
		return nil, false
	}
	if x, ok := constInts(v); ok {
		return x, true
	}
	ds, ok := m.HostData(v)
	if !ok {
		return nil, false
	}
	out := make([]int64, len(ds))
	for i, d := range ds {
		if out[i], ok = d.Value(); !ok {
			return nil, false
		}
	}
	return out, true
}

// rowOp reports whether n computes each row of its input x alike (a row: the last axis),
// each output row from the input's row of the same index: MatMul(x, W) by a 2-D weight, Gemm(x,
// B[, C]) without transA by a constant B and a bias C of one row (or a scalar), Add(x, bias) (or
// Add(bias, x)) of a constant bias that varies along the last axis at most. It returns x.
func rowOp(n *graph.Node) (*graph.Value, bool) {
	konst := func(v *graph.Value) bool {
		for v != nil && v.Kind == graph.KindActivation && is(v.Producer, "Identity") {
			v = v.Producer.Inputs[0]
		}
		return v != nil && (v.Kind == graph.KindInitializer || v.Kind == graph.KindConstant)
	}
	out := n.Outputs[0]
	switch {
	case is(n, "MatMul"):
		x, w := n.Inputs[0], n.Inputs[1]
		if len(x.Shape) >= 2 && len(w.Shape) == 2 && konst(w) && len(out.Shape) == len(x.Shape) {
			return x, true
		}
	case is(n, "Gemm"):
		x := n.Inputs[0]
		if n.Attrs.Int("transA", 0) != 0 || len(x.Shape) != 2 || !konst(n.Inputs[1]) {
			return nil, false
		}
		if c := n.Input(2); c != nil {
			if !konst(c) || len(c.Shape) > 2 || len(c.Shape) == 2 && !c.Shape[0].Equal(graph.Const(1)) {
				return nil, false
			}
		}
		return x, true
	case is(n, "Add"):
		for i := range 2 {
			x, b := n.Inputs[i], n.Inputs[1-i]
			if !konst(b) || !sameShape(x, out) || len(b.Shape) > len(x.Shape) {
				continue
			}
			row := true
			for _, d := range b.Shape[:max(len(b.Shape)-1, 0)] {
				row = row && d.Equal(graph.Const(1))
			}
			if row {
				return x, true
			}
		}
	}
	return nil, false
}

// normAxis resolves a possibly negative axis of a rank-r tensor.
func normAxis(a int64, r int) (int, error) {
	if a < -int64(r) || a >= int64(r) {
		return 0, fmt.Errorf("axis %d of rank %d", a, r)
	}
	if a < 0 {
		a += int64(r)
	}
	return int(a), nil
}
