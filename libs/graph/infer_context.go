package graph

// What the inference functions share: the context of one node (its inputs, their host data,
// its outputs, the conditions left to Bind) and numpy broadcasting of shapes and host data.

import "fmt"

// ictx is the inference context of one node.
type ictx struct {
	m      *Model
	n      *Node
	checks []check
}

func (c *ictx) errf(format string, args ...any) error {
	return &ModelError{Node: c.n, Problem: fmt.Sprintf(format, args...)}
}

// in returns input i, nil if it is omitted. Inputs the operator's arity requires are never nil
// (see checkArity).
func (c *ictx) in(i int) *Value { return c.n.Input(i) }

// errMissing is the error for an omitted input that is required.
func (c *ictx) errMissing(i int) error { return c.errf("input %d is missing", i) }

// shapesAndData returns the shapes and host data (nil where there is none) of the first n
// inputs, which the arity requires.
func (c *ictx) shapesAndData(n int) ([]Shape, [][]Dim) {
	shapes, data := make([]Shape, n), make([][]Dim, n)
	for i := range n {
		shapes[i] = c.in(i).Shape
		data[i], _ = c.data(i)
	}
	return shapes, data
}

// data returns the host data of input i, if it has any.
func (c *ictx) data(i int) ([]Dim, bool) {
	v := c.n.Input(i)
	if v == nil {
		return nil, false
	}
	d := c.m.hostData[v.ID]
	return d, d != nil
}

// needData returns the host data of input i, or an error saying it must be computable.
func (c *ictx) needData(i int, what string) ([]Dim, error) {
	v := c.in(i)
	if v == nil {
		return nil, c.errMissing(i)
	}
	d, ok := c.data(i)
	if !ok {
		return nil, c.errf("%s (input %d, %q) is not computable on the host: it depends on runtime data, not only on shapes and constants", what, i, v.Name)
	}
	return d, nil
}

// out sets output i's type; a missing optional output is skipped.
func (c *ictx) out(i int, dt DType, shape Shape) *Value {
	v := c.n.Output(i)
	if v == nil {
		return nil
	}
	v.DType, v.Shape = dt, shape
	return v
}

// outData sets output i's type and host data; data is dropped when the shape is not
// constant or too large, and for non-integer types.
func (c *ictx) outData(i int, dt DType, shape Shape, data []Dim) {
	v := c.out(i, dt, shape)
	if v == nil || data == nil || !isIntType(dt) || !shape.IsConst() {
		return
	}
	n, err := NumElements(constVals(shape))
	if err != nil || n != int64(len(data)) || n > maxHostElems {
		return
	}
	c.m.hostData[v.ID] = data
}

// eq requires a == b: an error now if both are constants, otherwise a check at Bind.
func (c *ictx) eq(a, b Dim, what string) error {
	if a.Equal(b) {
		return nil
	}
	if a.IsConst() && b.IsConst() {
		return c.errf("%s: %s != %s", what, a, b)
	}
	c.checks = append(c.checks, check{node: c.n, cond: eqDim(a, b), what: fmt.Sprintf("%s: %s == %s", what, a, b)})
	return nil
}

// require records a condition to be checked at Bind, or fails now if it is a false constant.
func (c *ictx) require(cond Dim, what string) error {
	if v, ok := cond.Value(); ok {
		if v == 0 {
			return c.errf("%s", what)
		}
		return nil
	}
	c.checks = append(c.checks, check{node: c.n, cond: cond, what: what})
	return nil
}

// axesOf returns the axes of Squeeze, Unsqueeze, Reduce*: input idx if present, else the
// "axes" attribute; ok is false when neither is given.
func (c *ictx) axesOf(idx int) ([]int64, bool, error) {
	if c.in(idx) != nil {
		d, err := c.needData(idx, "axes")
		if err != nil {
			return nil, false, err
		}
		vals, ok := dimsConst(d)
		if !ok {
			return nil, false, c.errf("axes depend on dims: %v", d)
		}
		return vals, true, nil
	}
	if c.n.Attrs.Has("axes") {
		return c.n.Attrs.Ints("axes"), true, nil
	}
	return nil, false, nil
}

func axis(a int64, rank int) (int, error) {
	if a < -int64(rank) || a >= int64(rank) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a), nil
}

func constVals(s Shape) []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i], _ = d.Value()
	}
	return out
}

// dimsConst returns the values of dims that are all constants.
func dimsConst(ds []Dim) ([]int64, bool) {
	out := make([]int64, len(ds))
	for i, d := range ds {
		v, ok := d.Value()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

func isIntType(dt DType) bool {
	switch dt {
	case Int64, Int32, Int16, Int8, Uint8, Uint16, Uint32, Uint64, Bool:
		return true
	}
	return false
}

func constDims(vals []int64) []Dim {
	out := make([]Dim, len(vals))
	for i, v := range vals {
		out[i] = Const(v)
	}
	return out
}

func mapDims(d []Dim, f func(Dim) Dim) []Dim {
	out := make([]Dim, len(d))
	for i, x := range d {
		out[i] = f(x)
	}
	return out
}

func shapeOf(v *Value) Shape {
	if v == nil {
		return nil
	}
	return v.Shape
}

// broadcast is numpy broadcasting of shapes. Where one dim is min(x, k) and the other x
// (position embeddings sliced to the sequence, [0:seq] of a table of k rows, added to a
// [batch, seq, hidden] input), the result is x, not broadcast(x, min(x, k)): wherever the two
// broadcast, min(x, k) is x or 1 and the result x. The condition that they broadcast is
// checked at Bind instead, so a binding the exported graph refuses is still refused, and the
// shapes downstream stay polynomials in the named dims (a Reshape's -1 folds, heads split).
func (c *ictx) broadcast(shapes ...Shape) Shape {
	out, conds := broadcastShapes(shapes...)
	for _, cd := range conds {
		// recorded, not failed: a false constant cannot arise (a min of x is never a constant
		// while x is not)
		c.checks = append(c.checks, check{node: c.n, cond: cd.cond, what: cd.what})
	}
	return out
}

// broadcastCond is a condition broadcast leaves to Bind.
type broadcastCond struct {
	cond Dim
	what string
}

func broadcastShapes(shapes ...Shape) (Shape, []broadcastCond) {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make(Shape, r)
	for i := range out {
		out[i] = Const(1)
	}
	var conds []broadcastCond
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			a := out[off+i]
			if x, m, ok := minOf(a, d); ok {
				one, same := eqDim(m, Const(1)), eqDim(m, x)
				conds = append(conds, broadcastCond{cond: one.Add(same).Sub(one.Mul(same)),
					what: fmt.Sprintf("dims %s and %s do not broadcast unless %s is %s or 1", a, d, m, x)})
				out[off+i] = x
				continue
			}
			out[off+i] = broadcastDim(a, d)
		}
	}
	return out, conds
}

// minOf reports whether one of a and b is min(x, k) or min(k, x) and the other x, and returns
// x and the min.
func minOf(a, b Dim) (x, m Dim, ok bool) {
	for _, p := range [2][2]Dim{{a, b}, {b, a}} {
		x, m := p[0], p[1]
		if x.e == nil || m.e == nil || m.e.kind != exFn || m.e.op != fnMin {
			continue
		}
		if m.e.args[0].Equal(x) || m.e.args[1].Equal(x) {
			return x, m, true
		}
	}
	return Dim{}, Dim{}, false
}

// broadcastData evaluates an elementwise function over host data with numpy broadcasting.
// All shapes must be constant; it returns nil if any input has no data.
func broadcastData(out Shape, ins []Shape, data [][]Dim, fn func(x []Dim) Dim) []Dim {
	for _, d := range data {
		if d == nil {
			return nil
		}
	}
	if !out.IsConst() {
		return nil
	}
	os := constVals(out)
	n, err := NumElements(os)
	if err != nil || n > maxHostElems {
		return nil
	}
	res := make([]Dim, n)
	idx := make([]int64, len(os))
	x := make([]Dim, len(ins))
	for k := range res {
		// idx is the multi-index of k in out.
		rem := int64(k)
		for a := len(os) - 1; a >= 0; a-- {
			if os[a] > 0 {
				idx[a] = rem % os[a]
				rem /= os[a]
			}
		}
		for j, s := range ins {
			is := constVals(s)
			off, stride := int64(0), int64(1)
			for a := len(is) - 1; a >= 0; a-- {
				i := idx[len(os)-len(is)+a]
				if is[a] == 1 {
					i = 0
				}
				off += i * stride
				stride *= is[a]
			}
			x[j] = data[j][off]
		}
		res[k] = fn(x)
	}
	return res
}
