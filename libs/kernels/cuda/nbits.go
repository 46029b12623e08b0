package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// com.microsoft.MatMulNBits: Y = A * dequant(B)^T (+ bias), the weights quantized in blocks of
// block_size along K, bits (2, 4 or 8) per weight (csrc/nbits.cu). Tactics, by A's row count m:
//   - "gemv" (m <= nbitsGemvMaxM, decode steps): one warp per output column streams its packed
//     weight row once and accumulates every row of A; no workspace.
//   - "dequant-gemm": chunks of weight rows are dequantized into workspace "weights" as A's type
//     and multiplied with cuBLASLt (workspace "cublas", the GEMM cap) into their output columns.
//     A chunk holds at most nbitsChunkBytes, so the workspace does not grow with N or m.

const (
	nbitsGemvMaxM   = 8
	nbitsChunkBytes = 32 << 20
)

// nbitsGeom is a node's attributes.
type nbitsGeom struct {
	k, n, bits, bs, kBlocks, blob int64
}

func nbitsAttrs(at graph.Attributes) (nbitsGeom, error) {
	q, err := kernels.NBitsAttrs(at)
	return geomOf(q), err
}

func geomOf(q kernels.NBits) nbitsGeom {
	return nbitsGeom{k: q.K, n: q.N, bits: q.Bits, bs: q.BlockSize, kBlocks: q.KBlocks, blob: q.Blob}
}

// nbitsParts is the dequant-gemm recipe: a chunk of dequantized weight rows and the GEMM's
// workspace cap.
func nbitsParts(g nbitsGeom, es int64, t kernels.Target) (rows int64, parts []alloc.Part, err error) {
	rows = min(max(nbitsChunkBytes/max(g.k*es, 1), 1), g.n)
	sz, err := kernels.Product(rows, g.k, es)
	if err != nil {
		return 0, nil, err
	}
	return rows, []alloc.Part{{Name: "weights", Size: sz}, {Name: gemmPart, Size: gemmWorkspace(t)}}, nil
}

// nbitsGemm is one chunk's product: Y[:, n0:n0+rows] = A * W^T, W the chunk in workspace part
// 0, ldy = N; cuBLASLt gets part 1.
type nbitsGemm struct {
	dt                 graph.DType
	m, rows, k, n0, ny int64
}

func selectMatMulNBits(n *kernels.Node, t kernels.Target) (plan, error) {
	q, err := kernels.CheckMatMulNBits(n)
	if err != nil {
		return plan{}, err
	}
	g, a, dt, m, zpKind := geomOf(q), n.Inputs[0], n.Inputs[0].DType, q.M, q.ZeroPoints
	zp, bias := nullp(), nullp()
	if zpKind != 0 {
		zp = inp(3)
	}
	if q.Bias {
		bias = inp(5)
	}
	if !fits32(m, g.k, g.n, g.kBlocks) {
		return plan{}, fmt.Errorf("MatMulNBits of %v is too large for the CUDA kernels", a.Shape)
	}
	name := dtName(dt)
	if m <= nbitsGemvMaxM {
		if m == 0 {
			return plan{tactic: "gemv"}, nil
		}
		blocks := min((g.n+7)/8, int64(t.SMs)*gridWaves)
		kernel := fmt.Sprintf("carve_nbits_gemv_%s_%d", name, g.bits)
		if m == 1 {
			kernel = fmt.Sprintf("carve_nbits_gemv1_%s_%d", name, g.bits)
		}
		st := step{kernel: kernel, grid: Dim3{X: uint32(blocks), Y: 1, Z: 1},
			block:  Dim3{X: 256, Y: 1, Z: 1},
			params: []param{outp(0), inp(0), inp(1), inp(2), zp, bias, pack32(m, g.k), pack32(g.n, g.kBlocks), i32p(int(g.bs)), i32p(zpKind)}}
		return plan{tactic: "gemv", prog: program{st}}, nil
	}
	es := dt.Size()
	rows, parts, err := nbitsParts(g, es, t)
	if err != nil {
		return plan{}, err
	}
	var prog program
	for n0 := int64(0); n0 < g.n; n0 += rows {
		cn := min(rows, g.n-n0)
		prog = append(prog,
			step{kernel: "carve_nbits_dequant_" + name, grid: grid1(cn*g.k, 1, t), block: block1,
				params: []param{wsp(0), inp(1), inp(2), zp, pack32(n0, cn), pack32(g.k, g.kBlocks), i32p(int(g.bs)), i32p(int(g.bits)), i32p(zpKind)}},
			step{call: &nbitsGemm{dt: dt, m: m, rows: cn, k: g.k, n0: n0, ny: g.n}})
	}
	if bias.kind != litRef {
		steps, err := ewSteps(dt, ewAdd, graph.Undefined, []int64{m, g.n}, outp(0), operand{outp(0), []int64{m, g.n}}, operand{bias, []int64{g.n}}, absent(), 0, 0, t)
		if err != nil {
			return plan{}, err
		}
		prog = append(prog, steps...)
	}
	return plan{tactic: "dequant-gemm", parts: parts, prog: prog}, nil
}

func boundMatMulNBits(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	g, err := nbitsAttrs(r.Attrs)
	if err != nil {
		return kernels.Bound{}, err
	}
	a, ok := r.Input(0)
	if !ok || len(a.Dims) == 0 {
		return kernels.Bound{}, fmt.Errorf("A is missing or a scalar")
	}
	mHi := int64(1)
	for _, d := range a.Dims[:len(a.Dims)-1] {
		if mHi, err = kernels.Product(mHi, d.Hi); err != nil {
			return kernels.Bound{}, err
		}
	}
	if mHi <= nbitsGemvMaxM {
		return kernels.Bound{}, nil
	}
	_, parts, err := nbitsParts(g, a.DType.Size(), t)
	if err != nil {
		return kernels.Bound{}, err
	}
	return recipeBound("dequant-gemm", parts)
}

func nbitsOps() []*op {
	return []*op{{
		key: kernels.Key(kernels.DomainMicrosoft, "MatMulNBits"), sel: selectMatMulNBits, bound: boundMatMulNBits,
		tactics: []kernels.TacticInfo{
			{Name: "gemv", Summary: "m <= 8: one warp per output column dequantizes its weight row in registers; no workspace"},
			{Name: "dequant-gemm", Summary: "dequantize up to 32 MiB of weight rows into workspace, then a cuBLASLt GEMM into their output columns", Workspace: true},
		},
	}}
}
