package graph

// Shape inference of matrix products: MatMul, Gemm, com.microsoft.MatMulNBits and carve's
// dev.carve.GatedMatMul.

import "slices"

func inferMatMul(c *ictx) error {
	a, b := c.in(0), c.in(1)
	out, err := c.matmulShape(a.Shape, b.Shape)
	if err != nil {
		return err
	}
	c.out(0, a.DType, out)
	return nil
}

// matmulShape is numpy matmul's shape rule: 1-D operands are promoted and the promoted dim
// removed again; batch dims broadcast; the inner dims must agree.
func (c *ictx) matmulShape(a, b Shape) (Shape, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, c.errf("MatMul of a scalar")
	}
	aa, bb := a, b
	if len(a) == 1 {
		aa = Shape{Const(1), a[0]}
	}
	if len(b) == 1 {
		bb = Shape{b[0], Const(1)}
	}
	k1, k2 := aa[len(aa)-1], bb[len(bb)-2]
	if err := c.eq(k1, k2, "inner dims of MatMul"); err != nil {
		return nil, err
	}
	out := c.broadcast(aa[:len(aa)-2], bb[:len(bb)-2])
	if len(a) > 1 {
		out = append(out, aa[len(aa)-2])
	}
	if len(b) > 1 {
		out = append(out, bb[len(bb)-1])
	}
	return out, nil
}

func inferGemm(c *ictx) error {
	a, b := c.in(0), c.in(1)
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return c.errf("Gemm needs 2-D operands, has %v and %v", a.Shape, b.Shape)
	}
	m, k := a.Shape[0], a.Shape[1]
	if c.n.Attrs.Int("transA", 0) != 0 {
		m, k = k, m
	}
	k2, n := b.Shape[0], b.Shape[1]
	if c.n.Attrs.Int("transB", 0) != 0 {
		k2, n = n, k2
	}
	if err := c.eq(k, k2, "inner dims of Gemm"); err != nil {
		return err
	}
	out := Shape{m, n}
	if cv := c.in(2); cv != nil {
		if len(cv.Shape) > 2 {
			return c.errf("Gemm bias of rank %d", len(cv.Shape))
		}
		if err := c.eq(c.broadcast(out, cv.Shape)[1], n, "Gemm bias broadcast"); err != nil {
			return err
		}
	}
	c.out(0, a.DType, out)
	return nil
}

func inferMatMulNBits(c *ictx) error {
	a := c.in(0)
	k, n := c.n.Attrs.Int("K", -1), c.n.Attrs.Int("N", -1)
	if k <= 0 || n <= 0 {
		return c.errf("MatMulNBits needs positive K and N attributes, has K=%d N=%d", k, n)
	}
	if len(a.Shape) == 0 {
		return c.errf("MatMulNBits of a scalar")
	}
	if err := c.eq(a.Shape[len(a.Shape)-1], Const(k), "last dim of A against attribute K"); err != nil {
		return err
	}
	out := append(slices.Clone(a.Shape[:len(a.Shape)-1]), Const(n))
	c.out(0, a.DType, out)
	return nil
}

// inferGatedMatMul: dev.carve.GatedMatMul(A, Wg, Wu) = Swish_alpha(A·Wg) * (A·Wu), the gated
// MLP's two products over one A and its gate in one op. A is [..., K] of rank 2 or more, Wg and
// Wu are 2-D [K, N] (no broadcasting, no 1-D promotion), all three of one float type; the
// output is A's type and A.shape[:-1] + [N]. Dims that are constants must agree now; symbolic
// ones that may differ are checked at Bind.
func inferGatedMatMul(c *ictx) error {
	a, wg, wu := c.in(0), c.in(1), c.in(2)
	switch a.DType {
	case Float32, Float16, BFloat16:
	default:
		return c.errf("GatedMatMul needs A of float32, float16 or bfloat16, has %s", a.DType)
	}
	if wg.DType != a.DType || wu.DType != a.DType {
		return c.errf("GatedMatMul's A, Wg and Wu are %s, %s and %s; they must have one type", a.DType, wg.DType, wu.DType)
	}
	if len(a.Shape) < 2 {
		return c.errf("GatedMatMul needs A of rank 2 or more [..., K], has %v", a.Shape)
	}
	if len(wg.Shape) != 2 || len(wu.Shape) != 2 {
		return c.errf("GatedMatMul needs 2-D weights Wg and Wu [K, N], has %v and %v", wg.Shape, wu.Shape)
	}
	k, n := wg.Shape[0], wg.Shape[1]
	if err := c.eq(wu.Shape[0], k, "K of Wu against K of Wg"); err != nil {
		return err
	}
	if err := c.eq(wu.Shape[1], n, "N of Wu against N of Wg"); err != nil {
		return err
	}
	if err := c.eq(a.Shape[len(a.Shape)-1], k, "last dim of A against K of Wg"); err != nil {
		return err
	}
	out := append(slices.Clone(a.Shape[:len(a.Shape)-1]), n)
	c.out(0, a.DType, out)
	return nil
}

// inferMoE: com.microsoft.MoE(input, router_probs, fc1_experts_weights, fc1_experts_bias?,
// fc2_experts_weights, fc2_experts_bias?, fc3_experts_weights?, fc3_experts_bias?), onnxruntime's
// mixture of experts: the output has the input's type and shape ([num_rows, hidden] or [batch,
// seq, hidden]). The weights' shapes and the attributes are the kernels' check (kernels.CheckMoE).
func inferMoE(c *ictx) error {
	x := c.in(0)
	if c.in(4) == nil {
		return c.errMissing(4)
	}
	if r := len(x.Shape); r != 2 && r != 3 {
		return c.errf("MoE needs input [num_rows, hidden] or [batch, seq, hidden], has %v", x.Shape)
	}
	if p := c.in(1); len(p.Shape) != 2 {
		return c.errf("MoE needs router_probs [num_rows, num_experts], has %v", p.Shape)
	}
	c.out(0, x.DType, x.Shape)
	return nil
}
