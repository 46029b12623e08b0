package kernels

import (
	"fmt"
	"slices"
)

// MatMulGeom is a MatMul's product under numpy's matmul semantics: Batch products of an M x K
// by a K x N matrix, the operands' batch dims ABatch and BBatch broadcast to Batch.
type MatMulGeom struct {
	M, K, N               int64
	ABatch, BBatch, Batch []int64
	// Out is the output's shape: Batch, then M unless A is 1-D, then N unless B is.
	Out []int64
}

// MatMulShapes is the geometry of a MatMul of operands of shapes as and bs (numpy's matmul
// semantics): neither a scalar, 1-D ones taken as a row (A) or a column (B), inner dims equal,
// batch dims that broadcast.
func MatMulShapes(as, bs []int64) (MatMulGeom, error) {
	if len(as) == 0 || len(bs) == 0 {
		return MatMulGeom{}, fmt.Errorf("MatMul of a scalar")
	}
	a2, b2 := as, bs
	if len(as) == 1 {
		a2 = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		b2 = []int64{bs[0], 1}
	}
	g := MatMulGeom{M: a2[len(a2)-2], K: a2[len(a2)-1], N: b2[len(b2)-1]}
	if kb := b2[len(b2)-2]; kb != g.K {
		return MatMulGeom{}, fmt.Errorf("inner dims differ: %v x %v", as, bs)
	}
	g.ABatch, g.BBatch = a2[:len(a2)-2], b2[:len(b2)-2]
	var err error
	if g.Batch, err = BroadcastShapes(g.ABatch, g.BBatch); err != nil {
		return MatMulGeom{}, err
	}
	g.Out = slices.Clone(g.Batch)
	if len(as) > 1 {
		g.Out = append(g.Out, g.M)
	}
	if len(bs) > 1 {
		g.Out = append(g.Out, g.N)
	}
	return g, nil
}

// CheckMatMul checks MatMul for every backend: operands of one numeric type whose shapes
// MatMulShapes takes, and the output of their type and shape. It returns the product's geometry.
func CheckMatMul(n *Node) (MatMulGeom, error) {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return MatMulGeom{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a.DType != b.DType || !isNumeric(a.DType) {
		return MatMulGeom{}, fmt.Errorf("operands are %v and %v, want one numeric type", a.DType, b.DType)
	}
	g, err := MatMulShapes(a.Shape, b.Shape)
	if err != nil {
		return MatMulGeom{}, err
	}
	if err := CheckOutput(n, 0, a.DType, g.Out); err != nil {
		return MatMulGeom{}, err
	}
	return g, nil
}

// GemmGeom is a Gemm node as CheckGemm reads it: Y = Alpha*op(A)*op(B) + Beta*C, op(A) M x K and
// op(B) K x N.
type GemmGeom struct {
	M, K, N        int64
	TransA, TransB bool
	Alpha, Beta    float32
}

// CheckGemm checks Gemm for every backend: 2-D A and B and a C of rank 2 or less, all of one
// numeric type, op(A)'s and op(B)'s inner dims equal, C broadcasting to [M, N], and the output
// of their type and shape [M, N]. It returns the product's geometry and attributes.
func CheckGemm(n *Node) (GemmGeom, error) {
	if err := CheckArity(n, 2, 3, 1, 1); err != nil {
		return GemmGeom{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a.DType != b.DType || !isNumeric(a.DType) {
		return GemmGeom{}, fmt.Errorf("operands are %v and %v, want one numeric type", a.DType, b.DType)
	}
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return GemmGeom{}, fmt.Errorf("Gemm of %v and %v: want 2-D operands", a.Shape, b.Shape)
	}
	at := n.Attrs
	g := GemmGeom{TransA: at.Int("transA", 0) != 0, TransB: at.Int("transB", 0) != 0, Alpha: at.Float("alpha", 1), Beta: at.Float("beta", 1)}
	g.M, g.K = a.Shape[0], a.Shape[1]
	if g.TransA {
		g.M, g.K = g.K, g.M
	}
	kb, nn := b.Shape[0], b.Shape[1]
	if g.TransB {
		kb, nn = nn, kb
	}
	if kb != g.K {
		return GemmGeom{}, fmt.Errorf("inner dims differ: %v x %v (transA %v, transB %v)", a.Shape, b.Shape, g.TransA, g.TransB)
	}
	g.N = nn
	if c, ok := n.Input(2); ok {
		mn := []int64{g.M, g.N}
		if c.DType != a.DType {
			return GemmGeom{}, fmt.Errorf("C is %v, want %v", c.DType, a.DType)
		}
		if bc, err := BroadcastShapes(c.Shape, mn); len(c.Shape) > 2 || err != nil || !slices.Equal(bc, mn) {
			return GemmGeom{}, fmt.Errorf("C %v does not broadcast to (%d, %d)", c.Shape, g.M, g.N)
		}
	}
	if err := CheckOutput(n, 0, a.DType, []int64{g.M, g.N}); err != nil {
		return GemmGeom{}, err
	}
	return g, nil
}
