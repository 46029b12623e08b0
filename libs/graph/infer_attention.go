package graph

import "fmt"

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

// inferONNXAttention is ONNX's Attention (ai.onnx, opset 23): Q, K, V, attn_mask?,
// past_key?, past_value? (opset 24's nonpad_kv_seqlen is input 6) -> Y, present_key?,
// present_value?, qk_matmul_output?.
//
// Q, K and V are 4-D, [batch, heads, sequence, head size], or all 3-D, [batch, sequence,
// heads*head size] with the q_num_heads and kv_num_heads attributes. Y has Q's layout and V's
// head size. With carve's layouts (AttrQLayout), Q, K and V are each of the rank of its layout
// and Y is 4-D in its own (AttrYLayout, [batch, heads, sequence, head size] by default); an
// axis a layout reads at one index must be longer than the index. present_key and
// present_value are 4-D and hold the past and the new keys and
// values. The mask broadcasts to [batch, q heads, q sequence, total sequence], except that
// its last dim may be shorter than the total sequence (the keys past it are masked out).
// Conditions on symbolic dims are checked at Bind.
func inferONNXAttention(c *ictx) error {
	q, k, v := c.in(0), c.in(1), c.in(2)
	if k.DType != q.DType || v.DType != q.DType {
		return c.errf("Q, K and V are %s, %s and %s; they must have one type", q.DType, k.DType, v.DType)
	}
	ls, custom, err := AttentionLayouts(c.n.Attrs)
	if err != nil {
		return c.errf("%v", err)
	}
	r := len(q.Shape)
	if custom {
		r = 0 // read through the layouts
	} else if (r != 3 && r != 4) || len(k.Shape) != r || len(v.Shape) != r {
		return c.errf("Q, K and V must be all 4-D [batch, heads, seq, head] or all 3-D [batch, seq, hidden], have %v, %v and %v", q.Shape, k.Shape, v.Shape)
	}
	var b, hq, hkv, s, l, d, dv Dim
	b = q.Shape[0]
	switch r {
	case 0:
		for i, x := range []*Value{q, k, v} {
			lay := ls[i]
			if len(x.Shape) != lay.Rank() {
				return c.errf("%s is %v, of rank %d; its layout %q has rank %d", []string{"Q", "K", "V"}[i], x.Shape, len(x.Shape), lay, lay.Rank())
			}
			for a, f := range lay.Fixed {
				if f >= 0 {
					if err := c.require(ltDim(Const(f), x.Shape[a]), fmt.Sprintf("the index %d that %s's layout %q reads axis %d at is below its dim %s", f, []string{"Q", "K", "V"}[i], lay, a, x.Shape[a])); err != nil {
						return err
					}
				}
			}
		}
		var kb, vb, vh, vl Dim
		b, hq, s, d = ls[0].Dims(q.Shape)
		kb, hkv, l, _ = ls[1].Dims(k.Shape)
		vb, vh, vl, dv = ls[2].Dims(v.Shape)
		for _, x := range []struct {
			got, want Dim
			what      string
		}{{k.Shape[ls[1].D], d, "head size of K against Q"}, {kb, b, "batch of K against Q"}, {vb, b, "batch of V against Q"},
			{vh, hkv, "heads of V against K"}, {vl, l, "sequence of V against K"}} {
			if err := c.eq(x.got, x.want, x.what); err != nil {
				return err
			}
		}
	case 4:
		hq, s, d = q.Shape[1], q.Shape[2], q.Shape[3]
		hkv, l = k.Shape[1], k.Shape[2]
		if err := c.eq(k.Shape[3], d, "head size of K against Q"); err != nil {
			return err
		}
		if err := c.eq(v.Shape[1], hkv, "heads of V against K"); err != nil {
			return err
		}
		if err := c.eq(v.Shape[2], l, "sequence of V against K"); err != nil {
			return err
		}
		dv = v.Shape[3]
	default:
		nq, nkv := c.n.Attrs.Int("q_num_heads", 0), c.n.Attrs.Int("kv_num_heads", 0)
		if nq <= 0 || nkv <= 0 {
			return c.errf("3-D Q, K and V need positive q_num_heads and kv_num_heads attributes, have %d and %d", nq, nkv)
		}
		hq, hkv = Const(nq), Const(nkv)
		s, l = q.Shape[1], k.Shape[1]
		d = q.Shape[2].exactDiv(hq)
		if err := c.eq(k.Shape[2], d.Mul(hkv), "hidden size of K against Q's head size"); err != nil {
			return err
		}
		if err := c.eq(v.Shape[1], l, "sequence of V against K"); err != nil {
			return err
		}
		dv = v.Shape[2].exactDiv(hkv)
	}
	for _, x := range []*Value{k, v} {
		if err := c.eq(x.Shape[0], b, "batch of K and V against Q"); err != nil {
			return err
		}
	}
	if err := c.require(eqDim(hq.mod(hkv), Const(0)), fmt.Sprintf("q heads (%s) are a multiple of kv heads (%s)", hq, hkv)); err != nil {
		return err
	}
	total := l
	pk, pv := c.in(4), c.in(5)
	if (pk == nil) != (pv == nil) {
		return c.errf("past_key and past_value go together")
	}
	if pk != nil {
		if len(pk.Shape) != 4 || len(pv.Shape) != 4 {
			return c.errf("past_key %v and past_value %v must be 4-D [batch, kv heads, past, head]", pk.Shape, pv.Shape)
		}
		for i, want := range []Dim{b, hkv, pk.Shape[2], d} {
			if err := c.eq(pk.Shape[i], want, fmt.Sprintf("dim %d of past_key", i)); err != nil {
				return err
			}
		}
		for i, want := range []Dim{b, hkv, pk.Shape[2], dv} {
			if err := c.eq(pv.Shape[i], want, fmt.Sprintf("dim %d of past_value", i)); err != nil {
				return err
			}
		}
		total = pk.Shape[2].Add(l)
	}
	if m := c.in(3); m != nil {
		if err := c.attentionMask(m, q.DType, []Dim{b, hq, s, total}); err != nil {
			return err
		}
	}
	if err := c.relativeBias(q.DType, b, hq, s, total, pk != nil); err != nil {
		return err
	}
	switch r {
	case 0:
		y := make(Shape, 4)
		y[ls[3].B], y[ls[3].H], y[ls[3].S], y[ls[3].D] = b, hq, s, dv
		c.out(0, q.DType, y)
	case 4:
		c.out(0, q.DType, Shape{b, hq, s, dv})
	default:
		c.out(0, q.DType, Shape{b, s, hq.Mul(dv)})
	}
	c.out(1, q.DType, Shape{b, hkv, total, d})
	c.out(2, q.DType, Shape{b, hkv, total, dv})
	c.out(3, q.DType, Shape{b, hq, s, total})
	return nil
}

// attentionMask checks an attn_mask against the scores' shape want: a bool mask or one of
// the scores' type, of rank 4 or less, each dim 1 or want's, the last at most want's.
func (c *ictx) attentionMask(m *Value, dt DType, want []Dim) error {
	if m.DType != Bool && m.DType != dt {
		return c.errf("attn_mask is %s; it must be bool or %s like Q", m.DType, dt)
	}
	if len(m.Shape) == 0 || len(m.Shape) > len(want) {
		return c.errf("attn_mask %v must have rank 1 to %d", m.Shape, len(want))
	}
	off := len(want) - len(m.Shape)
	for i, d := range m.Shape {
		w := want[off+i]
		if i == len(m.Shape)-1 {
			if err := c.require(Const(1).Sub(ltDim(w, d)), fmt.Sprintf("last dim of attn_mask (%s) is at most the total sequence (%s)", d, w)); err != nil {
				return err
			}
			continue
		}
		if d.Equal(w) || d.Equal(Const(1)) {
			continue
		}
		one, same := eqDim(d, Const(1)), eqDim(d, w)
		if err := c.require(one.Add(same).Sub(one.Mul(same)), fmt.Sprintf("dim %d of attn_mask (%s) is 1 or %s", i, d, w)); err != nil {
			return err
		}
	}
	return nil
}

// relativeBias checks carve's relative-bias inputs of ONNX Attention (AttnRelC2P to
// AttnRelP2CIndex) against the scores [b, hq, s, t]: each table of Q's type [b or 1, hq or 1,
// rows, R] with its int32 index [s + t - 1], and no past.
func (c *ictx) relativeBias(dt DType, b, hq, s, t Dim, past bool) error {
	for _, x := range []struct {
		table, index int
		name         string
		rows         Dim
		what         string
	}{{AttnRelC2P, AttnRelC2PIndex, "rel_c2p", s, "the queries"}, {AttnRelP2C, AttnRelP2CIndex, "rel_p2c", t, "the keys"}} {
		tb, ix := c.in(x.table), c.in(x.index)
		if tb == nil && ix == nil {
			continue
		}
		if tb == nil || ix == nil {
			return c.errf("%s (input %d) and %s_index (input %d) go together", x.name, x.table, x.name, x.index)
		}
		if past {
			return c.errf("%s: a relative bias takes no past_key and past_value", x.name)
		}
		if tb.DType != dt || len(tb.Shape) != 4 {
			return c.errf("%s is %s%s; it must be %s [batch or 1, heads or 1, %s, R]", x.name, tb.DType, tb.Shape, dt, x.rows)
		}
		for i, want := range []Dim{b, hq} {
			d := tb.Shape[i]
			if d.Equal(want) || d.Equal(Const(1)) {
				continue
			}
			one, same := eqDim(d, Const(1)), eqDim(d, want)
			if err := c.require(one.Add(same).Sub(one.Mul(same)), fmt.Sprintf("dim %d of %s (%s) is 1 or %s", i, x.name, d, want)); err != nil {
				return err
			}
		}
		if err := c.eq(tb.Shape[2], x.rows, fmt.Sprintf("rows of %s against %s", x.name, x.what)); err != nil {
			return err
		}
		if ix.DType != Int32 || len(ix.Shape) != 1 {
			return c.errf("%s_index is %s%s; it must be int32 [%s]", x.name, ix.DType, ix.Shape, s.Add(t).Sub(Const(1)))
		}
		if err := c.eq(ix.Shape[0], s.Add(t).Sub(Const(1)), fmt.Sprintf("length of %s_index against queries + keys - 1", x.name)); err != nil {
			return err
		}
	}
	return nil
}
