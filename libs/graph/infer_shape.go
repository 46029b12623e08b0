package graph

// Shape inference of the operators that compute or rearrange shapes: Shape, Size, Reshape,
// Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Expand, Tile.

import (
	"fmt"
	"slices"
)

func inferShape(c *ictx) error {
	x := c.in(0)
	r := int64(len(x.Shape))
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return max(0, min(v, r))
	}
	start, end := clamp(c.n.Attrs.Int("start", 0)), clamp(c.n.Attrs.Int("end", r))
	var dims []Dim
	if end > start {
		dims = append(dims, x.Shape[start:end]...)
	}
	c.outData(0, Int64, Shape{Const(int64(len(dims)))}, append([]Dim{}, dims...))
	return nil
}

func inferSize(c *ictx) error {
	x := c.in(0)
	c.outData(0, Int64, Shape{}, []Dim{x.Shape.NumElements()})
	return nil
}

func inferReshape(c *ictx) error {
	x := c.in(0)
	target, err := c.needData(1, "the target shape")
	if err != nil {
		return err
	}
	allowZero := c.n.Attrs.Int("allowzero", 0) != 0
	out := make(Shape, len(target))
	infer := -1
	known := Const(1)
	for i, d := range target {
		v, isConst := d.Value()
		switch {
		case isConst && v == -1:
			if infer >= 0 {
				return c.errf("target shape %v has more than one -1", target)
			}
			infer = i
			continue
		case isConst && v == 0 && !allowZero:
			if i >= len(x.Shape) {
				return c.errf("target shape %v copies dim %d of a rank-%d input", target, i, len(x.Shape))
			}
			out[i] = x.Shape[i]
		case isConst && v < 0:
			return c.errf("target shape %v has a negative dim", target)
		default:
			out[i] = d
		}
		known = known.Mul(out[i])
	}
	total := x.Shape.NumElements()
	if infer >= 0 {
		out[infer] = total.exactDiv(known)
	} else if err := c.eq(total, known, fmt.Sprintf("reshape of %v to %v changes the element count", x.Shape, out)); err != nil {
		return err
	}
	d, _ := c.data(0)
	c.outData(0, x.DType, out, d)
	return nil
}

func inferFlatten(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	a := c.n.Attrs.Int("axis", 1)
	if a < -int64(r) || a > int64(r) {
		return c.errf("axis %d is out of range for rank %d", a, r)
	}
	if a < 0 {
		a += int64(r)
	}
	d, _ := c.data(0)
	c.outData(0, x.DType, Shape{x.Shape[:a].NumElements(), x.Shape[a:].NumElements()}, d)
	return nil
}

func inferSqueeze(c *ictx) error {
	x := c.in(0)
	axes, ok, err := c.axesOf(1)
	if err != nil {
		return err
	}
	drop := make([]bool, len(x.Shape))
	if ok {
		for _, a := range axes {
			i, err := axis(a, len(x.Shape))
			if err != nil {
				return c.errf("%v", err)
			}
			drop[i] = true
			if err := c.eq(x.Shape[i], Const(1), fmt.Sprintf("squeezed dim %d", i)); err != nil {
				return err
			}
		}
	} else {
		for i, d := range x.Shape {
			if v, isConst := d.Value(); isConst {
				drop[i] = v == 1
				continue
			}
			if err := c.require(Const(1).Sub(eqDim(d, Const(1))), fmt.Sprintf("Squeeze without axes keeps dim %d (%s), which must not be 1", i, d)); err != nil {
				return err
			}
		}
	}
	var out Shape
	for i, d := range x.Shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	data, _ := c.data(0)
	c.outData(0, x.DType, out, data)
	return nil
}

func inferUnsqueeze(c *ictx) error {
	x := c.in(0)
	axes, ok, err := c.axesOf(1)
	if err != nil {
		return err
	}
	if !ok {
		return c.errf("Unsqueeze has no axes")
	}
	r := len(x.Shape) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		i, err := axis(a, r)
		if err != nil {
			return c.errf("%v", err)
		}
		if ins[i] {
			return c.errf("axis %d given twice", a)
		}
		ins[i] = true
	}
	out := make(Shape, 0, r)
	j := 0
	for i := 0; i < r; i++ {
		if ins[i] {
			out = append(out, Const(1))
		} else {
			out = append(out, x.Shape[j])
			j++
		}
	}
	data, _ := c.data(0)
	c.outData(0, x.DType, out, data)
	return nil
}

func inferTranspose(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	perm := c.n.Attrs.Ints("perm")
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return c.errf("perm %v does not match rank %d", perm, r)
	}
	out := make(Shape, r)
	used := make([]bool, r)
	for i, p := range perm {
		if p < 0 || p >= int64(r) || used[p] {
			return c.errf("perm %v is not a permutation of 0..%d", perm, r-1)
		}
		used[p] = true
		out[i] = x.Shape[p]
	}
	var data []Dim
	if d, ok := c.data(0); ok {
		data = transposeData(d, x.Shape, perm)
	}
	c.outData(0, x.DType, out, data)
	return nil
}

// transposeData permutes host data of shape in (row-major) by perm; nil where in has a
// symbolic dim (the data's layout is then unknown). Exporters transpose shape arithmetic too:
// torch's pad order is reversed and transposed as a [k, 2] tensor.
func transposeData(d []Dim, in Shape, perm []int64) []Dim {
	r := len(in)
	dims := make([]int64, r)
	for i, x := range in {
		v, ok := x.Value()
		if !ok {
			return nil
		}
		dims[i] = v
	}
	if r <= 1 {
		return d
	}
	stride := make([]int64, r) // the input's strides
	stride[r-1] = 1
	for i := r - 2; i >= 0; i-- {
		stride[i] = stride[i+1] * dims[i+1]
	}
	out := make([]Dim, 0, len(d))
	idx := make([]int64, r) // the output's index, odometer order
	for range d {
		var at int64
		for i, p := range perm {
			at += idx[i] * stride[p]
		}
		out = append(out, d[at])
		for i := r - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[perm[i]] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

func inferConcat(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", 0), r)
	if err != nil {
		return c.errf("%v", err)
	}
	out := slices.Clone(x.Shape)
	allData := true
	for i, v := range c.n.Inputs {
		if len(v.Shape) != r {
			return c.errf("input %d has rank %d, input 0 rank %d", i, len(v.Shape), r)
		}
		if i > 0 {
			out[a] = out[a].Add(v.Shape[a])
		}
		for k := range v.Shape {
			if k != a {
				if err := c.eq(v.Shape[k], x.Shape[k], fmt.Sprintf("dim %d of input %d", k, i)); err != nil {
					return err
				}
			}
		}
		_, ok := c.data(i)
		allData = allData && ok
	}
	var data []Dim
	if allData && out.IsConst() {
		// Host data: for each index of the dims before axis, the inputs' blocks in turn.
		outer, err := NumElements(constVals(out[:a]))
		if err == nil && outer <= maxHostElems {
			for o := int64(0); o < outer; o++ {
				for i := range c.n.Inputs {
					d, _ := c.data(i)
					block := int64(len(d)) / max(outer, 1)
					data = append(data, d[o*block:(o+1)*block]...)
				}
			}
			if data == nil {
				data = []Dim{}
			}
		}
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferSplit(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", 0), r)
	if err != nil {
		return c.errf("%v", err)
	}
	nOut := len(c.n.Outputs)
	dim := x.Shape[a]
	var sizes []Dim
	switch {
	case c.in(1) != nil:
		sizes, err = c.needData(1, "split sizes")
		if err != nil {
			return err
		}
	case c.n.Attrs.Has("split"):
		sizes = constDims(c.n.Attrs.Ints("split"))
	case c.n.Attrs.Has("num_outputs"):
		k := c.n.Attrs.Int("num_outputs", 0)
		if k <= 0 || k != int64(nOut) {
			return c.errf("num_outputs %d does not match %d outputs", k, nOut)
		}
		chunk := dim.ceilDiv(Const(k))
		for i := 0; i < nOut-1; i++ {
			sizes = append(sizes, chunk)
		}
		sizes = append(sizes, dim.Sub(chunk.Mul(Const(k-1))))
	default:
		for i := 0; i < nOut; i++ {
			sizes = append(sizes, dim.exactDiv(Const(int64(nOut))))
		}
	}
	if len(sizes) != nOut {
		return c.errf("%d split sizes for %d outputs", len(sizes), nOut)
	}
	sum := Const(0)
	for _, s := range sizes {
		sum = sum.Add(s)
	}
	if err := c.eq(sum, dim, "split sizes add up to the split dim"); err != nil {
		return err
	}
	data, hasData := c.data(0)
	off := int64(0)
	for i, s := range sizes {
		out := slices.Clone(x.Shape)
		out[a] = s
		var part []Dim
		if sv, ok := s.Value(); ok && hasData && r == 1 && sv >= 0 && off+sv <= int64(len(data)) {
			part = data[off : off+sv]
			off += sv
		} else {
			hasData = false
		}
		c.outData(i, x.DType, out, part)
	}
	return nil
}

func inferExpand(c *ictx) error {
	x := c.in(0)
	target, err := c.needData(1, "the target shape")
	if err != nil {
		return err
	}
	out := c.broadcast(x.Shape, Shape(target))
	var data []Dim
	if d, ok := c.data(0); ok {
		data = broadcastData(out, []Shape{x.Shape}, [][]Dim{d}, func(v []Dim) Dim { return v[0] })
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferTile(c *ictx) error {
	x := c.in(0)
	reps, err := c.needData(1, "repeats")
	if err != nil {
		return err
	}
	if len(reps) != len(x.Shape) {
		return c.errf("%d repeats for rank %d", len(reps), len(x.Shape))
	}
	out := make(Shape, len(reps))
	for i, r := range reps {
		out[i] = x.Shape[i].Mul(r)
	}
	c.out(0, x.DType, out)
	return nil
}
