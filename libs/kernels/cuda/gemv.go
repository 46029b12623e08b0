package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The gemv tactic of MatMul and Gemm: a product of a few rows against a weight, as at an LLM's
// decode step (one token per sequence, A of M = 1..8 rows, B a [K, N] weight), runs as one launch
// of carve_gemv (csrc/gemv.cu) instead of cuBLASLt. There the product is bound by reading B, and
// cuBLASLt's kernels, built for tiles of many rows, stream it at about 1.8 TB/s on an H200 (2.6 at
// best, decode profile of Qwen2.5-1.5B) where the memory gives about 4.3.
//
// It applies on sm_90 and newer (the split K meets in a thread block cluster) to a single product
// (gemmSingle: no batches, or A's batches folded into its rows) of float16 or bfloat16 with at
// most gemvMaxRows rows, K >= 1, A and B not transposed, and any C (bias row, full, broadcast).
// Everything else, and a shape whose stage of A does not fit, runs as cublaslt.
//
// It needs no workspace: the split K's partial sums meet in distributed shared memory, so
// nothing is carved, nothing needs zeroing and one launch does the whole product. Its Recipe has
// no parts; the kernel's Bound stays cublaslt's cap, which covers it.
//
// Rows: the arithmetic at M rows is 2*M FLOPs per weight element, which at 4.3 TB/s of bf16 is
// M * 4.3 TFLOP/s of fp32 FMA (the H200's CUDA cores give about 67): at M = 8 the FMAs, the
// conversions and the shared-memory reads of A take about half of the issue slots, still below
// the memory time. gemvMaxRows is where the measurement (BENCH GEMV) showed it still wins.

const (
	gemvTactic   = "gemv"
	gemvMaxRows  = 8   // the most rows of A (after folding batches)
	gemvThreads  = 256 // csrc kThreads
	gemvWarps    = gemvThreads / 32
	gemvMaxSplit = 8 // the largest portable cluster
	// gemvMaxStage is the most shared memory A's stage may take in one block, so that a few
	// blocks fit a multiprocessor.
	gemvMaxStage = 96 << 10
	// gemvMinSlice is the fewest rows of K a split slice is planned for.
	gemvMinSlice = 128
)

// gemvConfig is one launch geometry: 8 << cwlog columns per block (cwlog in 1..5), K split over
// split blocks (1, 2, 4 or 8) of one cluster, and B's loads kept in flight in registers (ring 0)
// or in a ring of ring rows per thread in shared memory (8 or 16); push (ring and split > 1): the
// slices' sums meet with one cluster barrier, stored into the owners' inboxes.
type gemvConfig struct {
	cwlog int
	split int64
	ring  int
	push  bool
}

// gemvRowsVariant is the kernel's row count for m rows: the next of 1, 2, 4 and 8.
func gemvRowsVariant(m int64) int64 {
	r := int64(1)
	for r < m {
		r *= 2
	}
	return r
}

// gemvApplies reports whether g may run as gemv on t (before the shared-memory check).
func gemvApplies(g *gemmInstance, t kernels.Target) bool {
	if major, ok := archMajor(t.Arch); !ok || major < 9 {
		return false
	}
	if g.dt != graph.Float16 && g.dt != graph.BFloat16 {
		return false
	}
	return g.mode == gemmSingle && !g.transA && !g.transB && g.m >= 1 && g.m <= gemvMaxRows && g.k >= 1 && g.n >= 1
}

// gemvChoose is the geometry for g on t: 64 columns per block, and K split in two until there are
// two blocks per multiprocessor or a slice would be shorter than gemvMinSlice; further while A's
// stage does not fit gemvMaxStage. ok is false where even gemvMaxSplit slices do not fit.
func gemvChoose(g *gemmInstance, t kernels.Target) (gemvConfig, bool) {
	c := gemvConfig{cwlog: 3, split: 1, ring: 16}
	tiles := (g.n + 63) / 64
	sms := int64(max(t.SMs, 1))
	for c.split < gemvMaxSplit && tiles*c.split < 2*sms && (g.k+2*c.split-1)/(2*c.split) >= gemvMinSlice {
		c.split *= 2
	}
	for c.split < gemvMaxSplit && gemvStage(g, c) > gemvMaxStage {
		c.split *= 2
	}
	return c, gemvStage(g, c) <= gemvMaxStage
}

// gemvSlice is the rows of K one block takes.
func gemvSlice(k, split int64) int64 { return (k + split - 1) / split }

// gemvStage is the bytes of A's stage in one block.
func gemvStage(g *gemmInstance, c gemvConfig) int64 {
	return gemvSlice(g.k, c.split) * gemvRowsVariant(g.m) * 4
}

// gemvShared is a block's dynamic shared memory: the ring and A's stage, which the reduction of
// the warps' partial tiles reuses.
func gemvShared(g *gemmInstance, c gemvConfig) int64 {
	tile := gemvRowsVariant(g.m) * (8 << c.cwlog)
	sh := max(int64(c.ring)*gemvThreads*16+gemvStage(g, c), gemvWarps*tile*4)
	if c.push {
		sh += c.split * ((tile + c.split - 1) / c.split) * 4 // the inbox
	}
	return sh
}

// gemvProgram is g's launch with geometry c: the kernel with 16-byte loads of B, and the one with
// element loads when N % 8 != 0 or B is not 16-byte aligned at run time.
func gemvProgram(g *gemmInstance, c gemvConfig, t kernels.Target) (program, error) {
	if c.cwlog < 1 || c.cwlog > 5 || (c.split != 1 && c.split != 2 && c.split != 4 && c.split != 8) || (c.ring != 0 && c.ring != 8 && c.ring != 16) ||
		(c.push && (c.ring == 0 || c.split == 1)) {
		return nil, fmt.Errorf("gemv geometry %+v is not one the kernel has", c)
	}
	w := int64(8) << c.cwlog
	tiles := (g.n + w - 1) / w
	ks := gemvSlice(g.k, c.split)
	csm, csn := g.csm, g.csn
	cp := nullp()
	switch g.c {
	case cFull:
		csm, csn, cp = g.n, 1, inp(2)
	case cBias:
		csm, csn, cp = 0, 1, inp(2)
	case cBroadcast:
		cp = inp(2)
	}
	shared := gemvShared(g, c)
	if tiles > 65535 || !fits32(g.m, g.n, g.k, ks, csm, csn) || shared > t.SharedMemPerBlock {
		return nil, fmt.Errorf("gemv of %d x %d x %d does not fit the kernel's limits", g.m, g.k, g.n)
	}
	base := fmt.Sprintf("carve_gemv_%s_m%d", dtName(g.dt), gemvRowsVariant(g.m))
	name := fmt.Sprintf("%s_s%d", base, c.split)
	if c.ring > 0 {
		name = fmt.Sprintf("%s_p%d_s%d", base, c.ring, c.split)
	}
	if c.push {
		name += "_c1"
	}
	st := step{kernel: name, grid: Dim3{X: uint32(c.split), Y: uint32(tiles), Z: 1}, block: Dim3{X: gemvThreads, Y: 1, Z: 1},
		shared: uint32(shared),
		params: []param{outp(0), inp(0), inp(1), cp, pack32(g.m, g.n), pack32(g.k, ks), i32p(c.cwlog),
			f32p(g.alpha), f32p(g.beta), pack32(csm, csn)}}
	slow := st
	slow.kernel = fmt.Sprintf("%s_s%d_u", base, c.split)
	slow.shared = uint32(gemvShared(g, gemvConfig{cwlog: c.cwlog, split: c.split}))
	if g.n%8 != 0 {
		return program{slow}, nil
	}
	st.align, st.alignOnly, st.fallback = 16, []int{2}, &slow
	return program{st}, nil
}

// selectGemv makes g the gemv tactic when it applies on t; otherwise g stays cublaslt (also
// for a shape past the kernel's limits).
func selectGemv(g *gemmInstance, t kernels.Target) {
	if !gemvApplies(g, t) {
		return
	}
	c, ok := gemvChoose(g, t)
	if !ok {
		return
	}
	if p, err := gemvProgram(g, c, target(t)); err == nil {
		g.gemv = p
	}
}
