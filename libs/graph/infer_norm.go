package graph

// Shape inference of normalizations: LayerNormalization, SimplifiedLayerNormalization and
// com.microsoft's skip variants.

import "slices"

func inferLayerNorm(c *ictx) error {
	x := c.in(0)
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", -1), r)
	if err != nil {
		return c.errf("%v", err)
	}
	stash := DType(c.n.Attrs.Int("stash_type", int64(Float32)))
	c.out(0, x.DType, x.Shape)
	stat := slices.Clone(x.Shape)
	for i := a; i < r; i++ {
		stat[i] = Const(1)
	}
	if c.n.OpType == "SimplifiedLayerNormalization" {
		c.out(1, stash, stat)
		return nil
	}
	c.out(1, stash, stat)
	c.out(2, stash, stat)
	return nil
}

func inferSkipLayerNorm(c *ictx) error {
	x, skip := c.in(0), c.in(1)
	if len(x.Shape) == 0 {
		return c.errf("input of rank 0")
	}
	if len(skip.Shape) > len(x.Shape) {
		return c.errf("skip %v has a higher rank than input %v", skip.Shape, x.Shape)
	}
	stat := slices.Clone(x.Shape)
	stat[len(stat)-1] = Const(1)
	c.out(0, x.DType, x.Shape)
	c.out(1, Float32, stat)
	c.out(2, Float32, stat)
	c.out(3, x.DType, x.Shape)
	return nil
}
