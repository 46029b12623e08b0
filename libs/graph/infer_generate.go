package graph

// Shape inference of the operators that make values from attributes or scalars: Constant,
// ConstantOfShape, Range.

import (
	"fmt"
	"slices"
)

func inferConstantOfShape(c *ictx) error {
	shape, err := c.needData(0, "the shape")
	if err != nil {
		return err
	}
	for i, d := range shape {
		if err := c.require(Const(1).Sub(ltDim(d, Const(0))), fmt.Sprintf("dim %d (%s) is negative", i, d)); err != nil {
			return err
		}
	}
	dt, fill := Float32, Const(0)
	if t, ok := c.n.Attrs.Tensor("value"); ok {
		dt = t.DType
		if isIntType(dt) {
			vals, err := t.Int64s()
			if err != nil || len(vals) != 1 {
				return c.errf("value must hold one element")
			}
			fill = Const(vals[0])
		}
	}
	var data []Dim
	out := Shape(slices.Clone(shape))
	if out.IsConst() {
		if n, err := NumElements(constVals(out)); err == nil && n <= maxHostElems {
			data = make([]Dim, n)
			for i := range data {
				data[i] = fill
			}
		}
	}
	c.outData(0, dt, out, data)
	return nil
}

func inferConstant(c *ictx) error {
	a := c.n.Attrs
	var t *HostTensor
	switch {
	case a.Has("value"):
		var ok bool
		if t, ok = a.Tensor("value"); !ok {
			return c.errf("attribute value is not a tensor")
		}
	case a.Has("value_int"):
		t = int64Tensor(nil, a.Int("value_int", 0))
	case a.Has("value_ints"):
		vs := a.Ints("value_ints")
		t = int64Tensor([]int64{int64(len(vs))}, vs...)
	case a.Has("value_float"):
		t = float32Tensor(nil, a.Float("value_float", 0))
	case a.Has("value_floats"):
		vs := a.Floats("value_floats")
		t = float32Tensor([]int64{int64(len(vs))}, vs...)
	default:
		return c.errf("Constant has no supported value attribute (value, value_int(s), value_float(s))")
	}
	// The bytes are what a discrete device is given (the engine uploads them), so they must be
	// exactly the tensor's; Load checks a file's, Build's caller may hand anything.
	if size, err := ByteSize(t.DType, t.Shape); err != nil || int64(len(t.Data)) != size {
		return c.errf("Constant's value holds %d bytes, not those of a %s%v tensor", len(t.Data), t.DType, t.Shape)
	}
	v := c.out(0, t.DType, ConstShape(t.Shape))
	if v == nil {
		return nil
	}
	c.m.consts[v.ID] = t
	if isIntType(t.DType) {
		if vals, err := t.Int64s(); err == nil && len(vals) <= maxHostElems {
			c.m.hostData[v.ID] = constDims(vals)
		}
	}
	return nil
}

func inferRange(c *ictx) error {
	start, err := c.needData(0, "start")
	if err != nil {
		return err
	}
	limit, err := c.needData(1, "limit")
	if err != nil {
		return err
	}
	delta, err := c.needData(2, "delta")
	if err != nil {
		return err
	}
	if len(start) != 1 || len(limit) != 1 || len(delta) != 1 {
		return c.errf("start, limit and delta must be scalars")
	}
	if v, ok := delta[0].Value(); ok && v == 0 {
		return c.errf("delta is 0")
	}
	n := MaxDim(limit[0].Sub(start[0]).ceilDiv(delta[0]), Const(0))
	var data []Dim
	if nv, ok := n.Value(); ok && nv <= maxHostElems {
		data = make([]Dim, nv)
		for i := range data {
			data[i] = start[0].Add(delta[0].Mul(Const(int64(i))))
		}
	}
	c.outData(0, c.in(0).DType, Shape{n}, data)
	return nil
}
