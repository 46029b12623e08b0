package graph

// Shape inference of com.microsoft's fused attention operators: Attention,
// MultiHeadAttention, GroupQueryAttention.

func inferAttention(c *ictx) error {
	x, w := c.in(0), c.in(1)
	if len(x.Shape) != 3 || len(w.Shape) != 2 {
		return c.errf("Attention needs input [batch, seq, hidden] and weights [hidden, 3*hidden], has %v and %v", x.Shape, w.Shape)
	}
	heads := c.n.Attrs.Int("num_heads", 0)
	if heads <= 0 {
		return c.errf("num_heads must be positive")
	}
	if err := c.eq(x.Shape[2], w.Shape[0], "input hidden size against weights"); err != nil {
		return err
	}
	var vHidden Dim
	if q := c.n.Attrs.Ints("qkv_hidden_sizes"); q != nil {
		if len(q) != 3 {
			return c.errf("qkv_hidden_sizes %v must have 3 entries", q)
		}
		vHidden = Const(q[2])
	} else {
		vHidden = w.Shape[1].exactDiv(Const(3))
	}
	c.out(0, x.DType, Shape{x.Shape[0], x.Shape[1], vHidden})
	if c.n.Output(1) != nil {
		total := x.Shape[1]
		if p := c.in(4); p != nil {
			if len(p.Shape) != 5 {
				return c.errf("past must have rank 5, has %v", p.Shape)
			}
			total = p.Shape[3].Add(total)
		}
		c.out(1, x.DType, Shape{Const(2), x.Shape[0], Const(heads), total, vHidden.exactDiv(Const(heads))})
	}
	return nil
}

func inferMHA(c *ictx) error {
	q := c.in(0)
	heads := c.n.Attrs.Int("num_heads", 0)
	if heads <= 0 {
		return c.errf("num_heads must be positive")
	}
	if len(q.Shape) != 3 && len(q.Shape) != 5 {
		return c.errf("query must be [batch, seq, hidden] or packed [batch, seq, heads, 3, head], has %v", q.Shape)
	}
	b, s := q.Shape[0], q.Shape[1]
	var vHidden, kvLen Dim
	k, v := c.in(1), c.in(2)
	switch {
	case len(q.Shape) == 5:
		vHidden, kvLen = q.Shape[2].Mul(q.Shape[4]), s
	case k != nil && len(k.Shape) == 5:
		vHidden, kvLen = k.Shape[2].Mul(k.Shape[4]), k.Shape[1]
	case v != nil && len(v.Shape) == 3 && k != nil:
		vHidden, kvLen = v.Shape[2], k.Shape[1]
	case v != nil && len(v.Shape) == 4 && k != nil:
		vHidden, kvLen = v.Shape[1].Mul(v.Shape[3]), k.Shape[2]
	case k == nil:
		vHidden, kvLen = q.Shape[2], s
	default:
		return c.errf("unsupported key/value layout: key %v, value %v", shapeOf(k), shapeOf(v))
	}
	c.out(0, q.DType, Shape{b, s, vHidden})
	head := vHidden.exactDiv(Const(heads))
	total := kvLen
	if pk := c.in(6); pk != nil && len(pk.Shape) == 4 {
		total = pk.Shape[2].Add(kvLen)
	}
	c.out(1, q.DType, Shape{b, Const(heads), total, head})
	c.out(2, q.DType, Shape{b, Const(heads), total, head})
	return nil
}

func inferGQA(c *ictx) error {
	q := c.in(0)
	heads, kvHeads := c.n.Attrs.Int("num_heads", 0), c.n.Attrs.Int("kv_num_heads", 0)
	if heads <= 0 || kvHeads <= 0 {
		return c.errf("num_heads and kv_num_heads must be positive")
	}
	if len(q.Shape) != 3 {
		return c.errf("query must be [batch, seq, hidden], has %v", q.Shape)
	}
	b, s := q.Shape[0], q.Shape[1]
	var head Dim
	if c.in(1) == nil {
		head = q.Shape[2].exactDiv(Const(heads + 2*kvHeads))
	} else {
		head = q.Shape[2].exactDiv(Const(heads))
	}
	c.out(0, q.DType, Shape{b, s, head.Mul(Const(heads))})
	total := s
	if d, ok := c.data(6); ok && len(d) == 1 {
		total = d[0]
	}
	if pk := c.in(3); pk != nil && len(pk.Shape) == 4 {
		if _, ok := c.data(6); ok {
			total = MaxDim(pk.Shape[2], total)
		} else {
			total = pk.Shape[2].Add(s)
		}
	}
	c.out(1, q.DType, Shape{b, Const(kvHeads), total, head})
	c.out(2, q.DType, Shape{b, Const(kvHeads), total, head})
	return nil
}
