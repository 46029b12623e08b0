package graph

// Shape inference of reductions: Reduce* and ArgMax/ArgMin.

import "slices"

func inferReduce(c *ictx) error {
	x := c.in(0)
	axes, ok, err := c.axesOf(1)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	keep := c.n.Attrs.Int("keepdims", 1) != 0
	red := make([]bool, r)
	if !ok || len(axes) == 0 {
		if c.n.Attrs.Int("noop_with_empty_axes", 0) != 0 {
			d, _ := c.data(0)
			c.outData(0, x.DType, x.Shape, d)
			return nil
		}
		for i := range red {
			red[i] = true
		}
	}
	for _, a := range axes {
		i, err := axis(a, r)
		if err != nil {
			return c.errf("%v", err)
		}
		red[i] = true
	}
	out := Shape{}
	for i, d := range x.Shape {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, Const(1))
		}
	}
	var data []Dim
	if d, ok := c.data(0); ok && r == 1 && red[0] {
		switch c.n.OpType {
		case "ReduceProd":
			data = []Dim{Const(1)}
			for _, v := range d {
				data[0] = data[0].Mul(v)
			}
		case "ReduceSum":
			data = []Dim{Const(0)}
			for _, v := range d {
				data[0] = data[0].Add(v)
			}
		}
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferArgReduce(c *ictx) error {
	x := c.in(0)
	a, err := axis(c.n.Attrs.Int("axis", 0), len(x.Shape))
	if err != nil {
		return c.errf("%v", err)
	}
	out := slices.Clone(x.Shape)
	if c.n.Attrs.Int("keepdims", 1) != 0 {
		out[a] = Const(1)
	} else {
		out = append(out[:a], out[a+1:]...)
	}
	c.out(0, Int64, out)
	return nil
}
