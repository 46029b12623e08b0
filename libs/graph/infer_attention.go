package graph

import "fmt"

// inferONNXAttention is ONNX's Attention (ai.onnx, opset 23): Q, K, V, attn_mask?,
// past_key?, past_value? (opset 24's nonpad_kv_seqlen is input 6) -> Y, present_key?,
// present_value?, qk_matmul_output?.
//
// Q, K and V are 4-D, [batch, heads, sequence, head size], or all 3-D, [batch, sequence,
// heads*head size] with the q_num_heads and kv_num_heads attributes. Y has Q's layout and V's
// head size; present_key and present_value are 4-D and hold the past and the new keys and
// values. The mask broadcasts to [batch, q heads, q sequence, total sequence], except that
// its last dim may be shorter than the total sequence (the keys past it are masked out).
// Conditions on symbolic dims are checked at Bind.
func inferONNXAttention(c *ictx) error {
	q, err := c.need(0)
	if err != nil {
		return err
	}
	k, err := c.need(1)
	if err != nil {
		return err
	}
	v, err := c.need(2)
	if err != nil {
		return err
	}
	if k.DType != q.DType || v.DType != q.DType {
		return c.errf("Q, K and V are %s, %s and %s; they must have one type", q.DType, k.DType, v.DType)
	}
	r := len(q.Shape)
	if (r != 3 && r != 4) || len(k.Shape) != r || len(v.Shape) != r {
		return c.errf("Q, K and V must be all 4-D [batch, heads, seq, head] or all 3-D [batch, seq, hidden], have %v, %v and %v", q.Shape, k.Shape, v.Shape)
	}
	var b, hq, hkv, s, l, d, dv Dim
	b = q.Shape[0]
	if r == 4 {
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
	} else {
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
	if r == 4 {
		c.out(0, q.DType, Shape{b, hq, s, dv})
	} else {
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
