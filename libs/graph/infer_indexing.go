package graph

// Shape inference of the indexing operators: Slice, Gather, GatherElements (and carve's, whose
// indices broadcast), GatherND.

import "slices"

func inferSlice(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	starts, err := c.needData(1, "starts")
	if err != nil {
		return err
	}
	ends, err := c.needData(2, "ends")
	if err != nil {
		return err
	}
	if len(starts) != len(ends) {
		return c.errf("%d starts and %d ends", len(starts), len(ends))
	}
	k := len(starts)
	axes := make([]int, k)
	if c.in(3) != nil {
		d, err := c.needData(3, "axes")
		if err != nil {
			return err
		}
		vals, ok := dimsConst(d)
		if !ok || len(vals) != k {
			return c.errf("axes %v do not match %d starts", d, k)
		}
		for i, v := range vals {
			if axes[i], err = axis(v, r); err != nil {
				return c.errf("%v", err)
			}
		}
	} else {
		if k > r {
			return c.errf("%d starts for rank %d", k, r)
		}
		for i := range axes {
			axes[i] = i
		}
	}
	steps := constDims(slices.Repeat([]int64{1}, k))
	if c.in(4) != nil {
		steps, err = c.needData(4, "steps")
		if err != nil {
			return err
		}
		if len(steps) != k {
			return c.errf("%d steps for %d starts", len(steps), k)
		}
	}
	out := slices.Clone(x.Shape)
	seen := make([]bool, r)
	for i, a := range axes {
		if seen[a] {
			return c.errf("axis %d sliced twice", a)
		}
		seen[a] = true
		if v, ok := steps[i].Value(); ok && v == 0 {
			return c.errf("slice step is 0")
		}
		out[a] = sliceLenDim(x.Shape[a], starts[i], ends[i], steps[i])
	}
	var data []Dim
	if d, ok := c.data(0); ok && x.Shape.IsConst() {
		data = sliceData(d, x.Shape, axes, starts, ends, steps)
	}
	c.outData(0, x.DType, out, data)
	return nil
}

// sliceData slices host data of the constant shape in along axes (starts, ends and steps
// constant); nil where a bound is symbolic. Each axis keeps the indices slice1D keeps of
// 0..n-1, and the result is read in row-major order of the kept indices, so any rank slices as
// the kernel does (torch reverses pad pairs with a step -1 over a [k, 2] tensor).
func sliceData(d []Dim, in Shape, axes []int, starts, ends, steps []Dim) []Dim {
	r := len(in)
	dims := make([]int64, r)
	keep := make([][]int64, r)
	for i, x := range in {
		dims[i], _ = x.Value()
		keep[i] = make([]int64, dims[i])
		for j := range keep[i] {
			keep[i][j] = int64(j)
		}
	}
	for i, a := range axes {
		st, ok1 := starts[i].Value()
		en, ok2 := ends[i].Value()
		sp, ok3 := steps[i].Value()
		if !ok1 || !ok2 || !ok3 {
			return nil
		}
		kept := slice1D(constDims(keep[a]), st, en, sp)
		if kept == nil && dims[a] > 0 {
			return nil
		}
		keep[a] = keep[a][:0:0]
		for _, v := range kept {
			j, _ := v.Value()
			keep[a] = append(keep[a], j)
		}
	}
	n := 1
	for _, k := range keep {
		n *= len(k)
	}
	if n == 0 {
		return []Dim{}
	}
	stride := make([]int64, r)
	if r > 0 {
		stride[r-1] = 1
	}
	for i := r - 2; i >= 0; i-- {
		stride[i] = stride[i+1] * dims[i+1]
	}
	out := make([]Dim, 0, n)
	idx := make([]int, r) // an odometer over keep
	for range n {
		var at int64
		for i, j := range idx {
			at += keep[i][j] * stride[i]
		}
		out = append(out, d[at])
		for i := r - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < len(keep[i]) {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// slice1D slices host data like ONNX Slice on one axis.
func slice1D(d []Dim, start, end, step int64) []Dim {
	n := int64(len(d))
	cnt, err := sliceLen(n, start, end, step)
	if err != nil {
		return nil
	}
	norm := func(v int64) int64 {
		if v < 0 {
			if v < -n {
				return -1
			}
			return v + n
		}
		return v
	}
	s := norm(start)
	if step > 0 {
		s = max(0, min(s, n))
	} else {
		s = max(0, min(s, n-1))
	}
	out := make([]Dim, 0, cnt)
	for i := int64(0); i < cnt; i++ {
		out = append(out, d[s+i*step])
	}
	return out
}

func inferGather(c *ictx) error {
	x, idx := c.in(0), c.in(1)
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", 0), r)
	if err != nil {
		return c.errf("%v", err)
	}
	out := append(append(slices.Clone(x.Shape[:a]), idx.Shape...), x.Shape[a+1:]...)
	var data []Dim
	d, ok1 := c.data(0)
	id, ok2 := c.data(1)
	if ok1 && ok2 && r == 1 {
		iv, ok := dimsConst(id)
		if ok {
			n := int64(len(d))
			for _, i := range iv {
				if i < 0 {
					i += n
				}
				if i < 0 || i >= n {
					return c.errf("index %d is out of range for %d elements", i, n)
				}
				data = append(data, d[i])
			}
			if data == nil {
				data = []Dim{}
			}
		}
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferGatherElements(c *ictx) error {
	x, idx := c.in(0), c.in(1)
	if len(idx.Shape) != len(x.Shape) {
		return c.errf("indices have rank %d, data rank %d", len(idx.Shape), len(x.Shape))
	}
	c.out(0, x.DType, idx.Shape)
	return nil
}

// inferExpandedGatherElements is carve's GatherElements(data, indices, shape), ONNX's
// GatherElements(data, Expand(indices, shape)): the output has the broadcast shape, which must
// have the data's rank.
func inferExpandedGatherElements(c *ictx) error {
	x, idx := c.in(0), c.in(1)
	target, err := c.needData(2, "the indices' shape")
	if err != nil {
		return err
	}
	out := c.broadcast(idx.Shape, Shape(target))
	if len(out) != len(x.Shape) {
		return c.errf("indices %s broadcast to %s have rank %d, data rank %d", idx.Shape, Shape(target), len(out), len(x.Shape))
	}
	c.out(0, x.DType, out)
	return nil
}

func inferGatherND(c *ictx) error {
	x, idx := c.in(0), c.in(1)
	b := int(c.n.Attrs.Int("batch_dims", 0))
	if len(idx.Shape) < 1 {
		return c.errf("indices must have rank >= 1")
	}
	last, ok := idx.Shape[len(idx.Shape)-1].Value()
	if !ok {
		return c.errf("the last dim of the indices (%s) must be a constant", idx.Shape[len(idx.Shape)-1])
	}
	if b < 0 || int64(b)+last > int64(len(x.Shape)) || b >= len(idx.Shape) {
		return c.errf("batch_dims %d and index depth %d do not fit data of rank %d", b, last, len(x.Shape))
	}
	out := append(slices.Clone(idx.Shape[:len(idx.Shape)-1]), x.Shape[int64(b)+last:]...)
	c.out(0, x.DType, out)
	return nil
}
