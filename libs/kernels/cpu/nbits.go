package cpu

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// matMulNBits is com.microsoft.MatMulNBits: Y = A * dequant(B)^T (+ bias), B holding N rows of
// K weights quantized in blocks of block_size along K, bits (2, 4 or 8) per weight packed low
// bits first, with a scale per block and an optional zero point (packed like B, or a float per
// block; 2^(bits-1) when absent): w = (q - zero_point) * scale.
//
// Tactic "dequant-pack": one gemm product whose B columns are the weight rows, dequantized
// straight into the product's packed panels (workspace "gemm"), so no dequantized copy of the
// weights exists and the workspace does not grow with N.
type matMulNBits struct {
	k, n, bits, bs, kBlocks, blob int
	m                             int // rows of A
	zp                            int // 0 none, 1 packed uint8, 2 float
	bias                          bool
	plan                          gemm.Plan
}

// nbitsFloats is the gemm workspace of an m-row MatMulNBits.
func nbitsFloats(m, k, n int64, workers int) int64 {
	return gemm.Workspace(m, n, k, gemm.Custom, workers)
}

func selectMatMulNBits(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckMatMulNBits(n)
	if err != nil {
		return plan{}, err
	}
	if a := n.Inputs[0]; a.DType != graph.Float32 {
		return plan{}, fmt.Errorf("A is %v, want float32 [..., %d]", a, g.K)
	}
	q := &matMulNBits{
		k: int(g.K), n: int(g.N), bits: int(g.Bits), bs: int(g.BlockSize), kBlocks: int(g.KBlocks), blob: int(g.Blob),
		m: int(g.M), zp: g.ZeroPoints, bias: g.Bias,
	}
	q.plan = gemm.NewPlan(q.m, q.n, q.k, gemm.Custom, d.Workers)
	return plan{tactic: "dequant-pack", parts: gemmPart(nbitsFloats(int64(q.m), int64(q.k), int64(q.n), d.Workers)), r: q}, nil
}

func boundMatMulNBits(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	a, ok := r.Input(0)
	if !ok || len(a.Dims) == 0 {
		return kernels.Bound{}, fmt.Errorf("MatMulNBits needs input A")
	}
	m := int64(1)
	for _, dr := range a.Dims[:len(a.Dims)-1] {
		var err error
		if m, err = kernels.Product(m, dr.Hi); err != nil {
			return kernels.Bound{}, err
		}
	}
	return recipeBound("dequant-pack", gemmPart(nbitsFloats(m, r.Attrs.Int("K", 0), r.Attrs.Int("N", 0), d.Workers)))
}

// nbitsSource dequantizes weight rows as the product's B columns.
type nbitsSource struct {
	q      *matMulNBits
	b, zp  []byte
	scales []float32
	zpf    []float32
}

var nbitsSources par.Pool[nbitsSource]

// Col writes the weights k0 .. k0+len(dst) of row j, dequantized.
func (s *nbitsSource) Col(dst []float32, j, k0 int) {
	q := s.q
	mask := byte(1<<q.bits - 1)
	zpRow := (q.kBlocks*q.bits + 7) / 8
	def := float32(int(1) << (q.bits - 1))
	k1 := k0 + len(dst)
	for k := k0; k < k1; {
		kb := k / q.bs
		scale := s.scales[j*q.kBlocks+kb]
		zp := def
		switch q.zp {
		case 1:
			bit := kb * q.bits
			zp = float32((s.zp[j*zpRow+bit/8] >> (bit % 8)) & mask)
		case 2:
			zp = s.zpf[j*q.kBlocks+kb]
		}
		blob := s.b[(j*q.kBlocks+kb)*q.blob : (j*q.kBlocks+kb+1)*q.blob]
		i0, i1 := k-kb*q.bs, min(q.bs, k1-kb*q.bs)
		out := dst[k-k0 : k-k0+i1-i0]
		if q.bits == 4 && i0%2 == 0 && i1%2 == 0 {
			vec.Dequant4(out, blob[i0/2:i1/2], scale, zp) // two weights a byte, the common case
		} else {
			for i := i0; i < i1; i++ {
				bit := i * q.bits
				v := (blob[bit/8] >> (bit % 8)) & mask
				out[i-i0] = (float32(v) - zp) * scale
			}
		}
		k = kb*q.bs + i1
	}
}

func (q *matMulNBits) run(in, out []kernels.Tensor, ws wsParts) error {
	a, y := in[0].Float32s(), out[0].Float32s()
	src := nbitsSources.Get()
	defer func() { *src = nbitsSource{}; nbitsSources.Put(src) }()
	src.q, src.b, src.scales = q, in[1].Data, in[2].Float32s()
	switch q.zp {
	case 1:
		src.zp = in[3].Data
	case 2:
		src.zpf = in[3].Float32s()
	}
	if q.m > 0 {
		q.plan.Run(gemm.Mat{Data: a, Ld: q.k}, gemm.Mat{}, src, y, q.n, 1, false, kernels.ViewAs[float32](ws.bytes(0)))
	}
	if q.bias {
		bias := in[5].Float32s()[:q.n]
		for r := 0; r < q.m; r++ {
			row := y[r*q.n : (r+1)*q.n]
			for j, v := range bias {
				row[j] += v
			}
		}
	}
	return nil
}

func nbitsOps() []*op {
	return []*op{{
		key: kernels.Key(kernels.DomainMicrosoft, "MatMulNBits"), sel: selectMatMulNBits, bound: boundMatMulNBits,
		tactics: []kernels.TacticInfo{{Name: "dequant-pack", Summary: "weights dequantized straight into the gemm's packed panels in workspace", Workspace: true}},
	}}
}
