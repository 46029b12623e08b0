package kernels

import (
	"fmt"

	"carve.dev/libs/graph"
)

// NBits is a com.microsoft.MatMulNBits node as NBitsAttrs and CheckMatMulNBits read it: Y = A *
// dequant(B)^T (+ bias), B holding N rows of K weights quantized in blocks of BlockSize along K,
// Bits per weight packed low bits first.
type NBits struct {
	K, N, Bits, BlockSize int64
	// KBlocks is the blocks of a weight row and Blob the bytes of a block.
	KBlocks, Blob int64
	// M is the rows of A (CheckMatMulNBits only).
	M int64
	// ZeroPoints is 0 without zero points, 1 for uint8 ones packed like B, 2 for one float per
	// block (CheckMatMulNBits only).
	ZeroPoints int
	// Bias reports the bias input (CheckMatMulNBits only).
	Bias bool
}

// NBitsAttrs checks MatMulNBits' attributes for every backend (K and N positive, bits 2, 4 or
// 8, block_size a power of two of 16 or more, weights not prepacked) and returns them.
func NBitsAttrs(at graph.Attributes) (NBits, error) {
	q := NBits{K: at.Int("K", 0), N: at.Int("N", 0), Bits: at.Int("bits", 4), BlockSize: at.Int("block_size", 0)}
	if q.K <= 0 || q.N <= 0 || (q.Bits != 2 && q.Bits != 4 && q.Bits != 8) || q.BlockSize < 16 || q.BlockSize&(q.BlockSize-1) != 0 {
		return NBits{}, fmt.Errorf("K %d, N %d, bits %d, block_size %d: want positive K and N, bits 2, 4 or 8, block_size a power of two >= 16", q.K, q.N, q.Bits, q.BlockSize)
	}
	if at.Int("weight_prepacked", 0) != 0 {
		return NBits{}, fmt.Errorf("prepacked weights are not supported")
	}
	q.KBlocks = (q.K + q.BlockSize - 1) / q.BlockSize
	q.Blob = q.BlockSize * q.Bits / 8
	return q, nil
}

// CheckMatMulNBits checks com.microsoft.MatMulNBits(A, B, scales[, zero_points[, g_idx[,
// bias]]]) for every backend: the attributes (NBitsAttrs), A float32, float16 or bfloat16 [...,
// K], B uint8 with N*KBlocks*Blob bytes, scales of A's type one per block, zero points packed
// uint8 or one of A's type per block, no g_idx, a bias of A's type and N elements, and the
// output of A's type and shape [..., N]. It returns the node's geometry.
func CheckMatMulNBits(n *Node) (NBits, error) {
	if err := CheckArity(n, 3, 6, 1, 1); err != nil {
		return NBits{}, err
	}
	q, err := NBitsAttrs(n.Attrs)
	if err != nil {
		return NBits{}, err
	}
	count := func(v Value) int64 {
		c, err := NumElements(v.Shape)
		if err != nil {
			return -1
		}
		return c
	}
	a, b, sc := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	dt := a.DType
	if !isFloatKernelType(dt) || len(a.Shape) == 0 || a.Shape[len(a.Shape)-1] != q.K {
		return NBits{}, fmt.Errorf("A is %v, want float32, float16 or bfloat16 [..., %d]", a, q.K)
	}
	if b.DType != graph.Uint8 || count(b) != q.N*q.KBlocks*q.Blob {
		return NBits{}, fmt.Errorf("B is %v, want uint8 [%d, %d, %d]", b, q.N, q.KBlocks, q.Blob)
	}
	if sc.DType != dt || count(sc) != q.N*q.KBlocks {
		return NBits{}, fmt.Errorf("scales are %v, want %v with %d elements", sc, dt, q.N*q.KBlocks)
	}
	if zp, ok := n.Input(3); ok {
		switch {
		case zp.DType == graph.Uint8 && count(zp) == q.N*((q.KBlocks*q.Bits+7)/8):
			q.ZeroPoints = 1
		case zp.DType == dt && count(zp) == q.N*q.KBlocks:
			q.ZeroPoints = 2
		default:
			return NBits{}, fmt.Errorf("zero_points %v fit neither the packed nor the per-block form", zp)
		}
	}
	if _, ok := n.Input(4); ok {
		return NBits{}, fmt.Errorf("g_idx is not supported")
	}
	if bias, ok := n.Input(5); ok {
		if bias.DType != dt || count(bias) != q.N {
			return NBits{}, fmt.Errorf("bias %v, want %v[%d]", bias, dt, q.N)
		}
		q.Bias = true
	}
	lead := a.Shape[:len(a.Shape)-1]
	out := append(append([]int64(nil), lead...), q.N)
	if err := CheckOutput(n, 0, dt, out); err != nil {
		return NBits{}, err
	}
	if q.M, err = NumElements(lead); err != nil {
		return NBits{}, err
	}
	return q, nil
}
