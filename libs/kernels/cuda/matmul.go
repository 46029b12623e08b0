package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// MatMul and Gemm are gemmKernels (gemm.go: cuBLASLt, or gemv.go's kernels for a few rows).
func init() {
	addKernel(&gemmKernel{key: kernels.Key("", "MatMul"), sel: selectMatMul})
	addKernel(&gemmKernel{key: kernels.Key("", "Gemm"), sel: selectGemm})
}

// gemmOperandType is a MatMul's or Gemm's operand type (one for every input and the output,
// which kernels.CheckMatMul and kernels.CheckGemm check), refused unless cuBLASLt runs it here.
func gemmOperandType(n *kernels.Node) (graph.DType, error) {
	dt := n.Inputs[0].DType
	if !gemmDType(dt) {
		return 0, fmt.Errorf("operands are %v; CUDA GEMMs take float32, float16 or bfloat16", dt)
	}
	return dt, nil
}

func gemmNumel(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

// selectMatMul resolves numpy matmul semantics and picks how the batches run.
func selectMatMul(n *kernels.Node, _ kernels.Target) (*gemmInstance, error) {
	mg, err := kernels.CheckMatMul(n)
	if err != nil {
		return nil, err
	}
	dt, err := gemmOperandType(n)
	if err != nil {
		return nil, err
	}
	as, bs := n.Inputs[0].Shape, n.Inputs[1].Shape
	g := &gemmInstance{dt: dt, alpha: 1, m: mg.M, k: mg.K, n: mg.N}
	aBatch, bBatch, batch, out := mg.ABatch, mg.BBatch, mg.Batch, mg.Out
	for _, s := range [][]int64{as, bs, out} {
		if _, err := kernels.ByteSize(dt, s); err != nil {
			return nil, err
		}
	}
	g.batch = gemmNumel(batch)
	na, nb := gemmNumel(aBatch), gemmNumel(bBatch)
	switch {
	case g.batch <= 1:
		g.mode = gemmSingle
	case nb == 1 && na == g.batch:
		// B is shared and A's batches are contiguous rows: one product with batch*M rows.
		g.mode, g.m, g.batch = gemmSingle, g.m*g.batch, 1
	case (na == g.batch || na == 1) && (nb == g.batch || nb == 1):
		g.mode = gemmStrided
		if na > 1 {
			g.sa = g.m * g.k
		}
		if nb > 1 {
			g.sb = g.k * g.n
		}
	default:
		g.mode = gemmLoop
		g.loopDims = batch
		g.loopSA = gemmBatchStrides(aBatch, batch, g.m*g.k)
		g.loopSB = gemmBatchStrides(bBatch, batch, g.k*g.n)
	}
	return g, nil
}

// gemmBatchStrides is an operand's element stride along each output batch dim: 0 where the
// operand broadcasts, otherwise its row-major stride in units of one matrix of size mat.
func gemmBatchStrides(opBatch, batch []int64, mat int64) []int64 {
	st := make([]int64, len(batch))
	s := mat
	for i := len(batch) - 1; i >= 0; i-- {
		j := i - (len(batch) - len(opBatch))
		if j < 0 || opBatch[j] == 1 {
			continue
		}
		st[i] = s
		s *= opBatch[j]
	}
	return st
}

// selectGemm is ONNX Gemm: Y = alpha*op(A)*op(B) + beta*C, A and B 2-D, C broadcast to (M, N).
func selectGemm(n *kernels.Node, _ kernels.Target) (*gemmInstance, error) {
	gg, err := kernels.CheckGemm(n)
	if err != nil {
		return nil, err
	}
	dt, err := gemmOperandType(n)
	if err != nil {
		return nil, err
	}
	g := &gemmInstance{dt: dt, mode: gemmSingle, batch: 1, transA: gg.TransA, transB: gg.TransB, alpha: gg.Alpha, beta: gg.Beta,
		m: gg.M, k: gg.K, n: gg.N}
	if c, ok := n.Input(2); ok && g.beta != 0 {
		cs := c.Shape // of rank 2 or less, broadcasting to (M, N)
		full := append(make([]int64, 2-len(cs)), cs...)
		for i := range 2 - len(cs) {
			full[i] = 1
		}
		switch {
		case full[0] == g.m && full[1] == g.n: // also a bias row at M = 1 (a decode step)
			g.c = cFull
		case full[0] == 1 && full[1] == g.n && g.beta == 1:
			g.c, g.csm, g.csn = cBias, 0, 1
		default:
			g.c = cBroadcast
			if full[1] != 1 {
				g.csn = 1
			}
			if full[0] != 1 {
				g.csm = full[1]
			}
		}
	}
	if g.k == 0 && g.c != cNone && g.m*g.n > 0 {
		return nil, fmt.Errorf("Gemm with K = 0 and C is not supported on CUDA")
	}
	return g, nil
}
