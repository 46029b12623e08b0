package graph

// Shape inference of elementwise operators: unary, binary and variadic arithmetic, comparisons
// and logic, Where, Clip, Cast. Integer host data is evaluated through them symbolically.

import "fmt"

func inferUnary(c *ictx) error {
	x := c.in(0)
	dt := x.DType
	switch c.n.OpType {
	case "IsNaN", "IsInf":
		dt = Bool
	}
	var data []Dim
	if d, ok := c.data(0); ok && c.n.Domain == "" {
		switch c.n.OpType {
		case "Identity":
			data = d
		case "Neg":
			data = mapDims(d, func(a Dim) Dim { return a.Mul(Const(-1)) })
		case "Not":
			data = mapDims(d, func(a Dim) Dim { return Const(1).Sub(a) })
		case "Abs":
			if vals, ok := dimsConst(d); ok {
				for i, v := range vals {
					vals[i] = max(v, -v)
				}
				data = constDims(vals)
			}
		}
	}
	c.outData(0, dt, x.Shape, data)
	if c.n.OpType == "Dropout" {
		c.out(1, Bool, x.Shape)
	}
	return nil
}

func inferBinary(c *ictx) error {
	shapes, data := c.shapesAndData(len(c.n.Inputs))
	x := c.in(0)
	dt := x.DType
	op := c.n.OpType
	switch op {
	case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual":
		dt = Bool
	}
	out := c.broadcast(shapes...)
	var res []Dim
	if isIntType(x.DType) {
		fold := func(f func(a, b Dim) Dim) func(x []Dim) Dim {
			return func(x []Dim) Dim {
				acc := x[0]
				for _, y := range x[1:] {
					acc = f(acc, y)
				}
				return acc
			}
		}
		var fn func(x []Dim) Dim
		switch op {
		case "Add", "Sum":
			fn = fold(Dim.Add)
		case "Sub":
			fn = fold(Dim.Sub)
		case "Mul":
			fn = fold(Dim.Mul)
		case "Div":
			fn = fold(truncDiv)
		case "Mod":
			if c.n.Attrs.Int("fmod", 0) == 0 {
				fn = fold(Dim.mod)
			}
		case "Max":
			fn = fold(MaxDim)
		case "Min":
			fn = fold(MinDim)
		case "Equal":
			fn = fold(eqDim)
		case "Less":
			fn = fold(ltDim)
		case "Greater":
			fn = fold(func(a, b Dim) Dim { return ltDim(b, a) })
		case "LessOrEqual":
			fn = fold(func(a, b Dim) Dim { return Const(1).Sub(ltDim(b, a)) })
		case "GreaterOrEqual":
			fn = fold(func(a, b Dim) Dim { return Const(1).Sub(ltDim(a, b)) })
		case "And":
			fn = fold(Dim.Mul)
		case "Or":
			fn = fold(func(a, b Dim) Dim { return a.Add(b).Sub(a.Mul(b)) })
		}
		if fn != nil {
			res = broadcastData(out, shapes, data, fn)
		}
	}
	c.outData(0, dt, out, res)
	return nil
}

// truncDiv is integer division as ONNX runtimes compute it: truncating toward zero. Dims are
// not negative, so for symbolic operands floor division is the same.
func truncDiv(a, b Dim) Dim {
	av, aok := a.Value()
	bv, bok := b.Value()
	if aok && bok && bv != 0 && !(bv == -1 && av == -1<<63) {
		return Const(av / bv)
	}
	return a.FloorDiv(b)
}

func inferWhere(c *ictx) error {
	shapes, data := c.shapesAndData(3)
	out := c.broadcast(shapes...)
	dt := c.in(1).DType
	var res []Dim
	if isIntType(dt) {
		res = broadcastData(out, shapes, data, func(x []Dim) Dim { return selectDim(x[0], x[1], x[2]) })
	}
	c.outData(0, dt, out, res)
	return nil
}

// inferClip is Clip (opset 11 and later: carve loads opset 13 on): input, min?, max? -> output
// of the input's type and shape. Each bound, where present, is a scalar of the input's type
// (shape [] or one element, as onnxruntime takes it); an omitted one is unbounded. Integer host
// data is clipped as min(max(x, lo), hi), so a lower bound above the upper gives the upper.
func inferClip(c *ictx) error {
	if len(c.n.Inputs) > 3 {
		return c.errf("Clip takes at most 3 inputs, has %d", len(c.n.Inputs))
	}
	x := c.in(0)
	if x.DType == Bool {
		return c.errf("Clip of %v: the input must be numeric", x.DType)
	}
	for i, what := range []string{1: "min", 2: "max"} {
		b := c.in(i)
		if i == 0 || b == nil {
			continue
		}
		if b.DType != x.DType {
			return c.errf("Clip %s (input %d, %q) is %v, want the input's %v", what, i, b.Name, b.DType, x.DType)
		}
		if len(b.Shape) > 1 {
			return c.errf("Clip %s (input %d, %q) has shape %v, want a scalar", what, i, b.Name, b.Shape)
		}
		if err := c.eq(b.Shape.NumElements(), Const(1), fmt.Sprintf("elements of Clip %s (input %d), a scalar", what, i)); err != nil {
			return err
		}
	}
	var data []Dim
	if d, ok := c.data(0); ok && x.DType != Uint64 { // uint64 past int64's range does not compare as Dims
		data = d
		for i, clip := range []func(a, b Dim) Dim{1: MaxDim, 2: MinDim} {
			if i == 0 || c.in(i) == nil {
				continue
			}
			b, ok := c.data(i)
			if !ok || len(b) != 1 {
				data = nil
				break
			}
			data = mapDims(data, func(a Dim) Dim { return clip(a, b[0]) })
		}
	}
	c.outData(0, x.DType, x.Shape, data)
	return nil
}

func inferCast(c *ictx) error {
	x := c.in(0)
	var to DType
	if c.n.OpType == "CastLike" {
		to = c.in(1).DType
	} else {
		if err := c.n.Attrs.requireKind("to", AttrInt); err != nil {
			return c.errf("%v", err)
		}
		to = DType(c.n.Attrs.Int("to", 0))
		if err := checkDType(to); err != nil {
			return c.errf("cast to %v", err)
		}
	}
	var data []Dim
	if d, ok := c.data(0); ok && isIntType(to) {
		data = d
		if to == Bool {
			data = mapDims(d, func(a Dim) Dim { return Const(1).Sub(eqDim(a, Const(0))) })
		}
	}
	c.outData(0, to, x.Shape, data)
	return nil
}
