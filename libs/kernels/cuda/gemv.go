package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The gemv tactic of MatMul and Gemm: a product of a few rows against a weight, as at an LLM's
// decode step (one token per sequence, A of a few rows, B a [K, N] weight), runs as one launch of
// carve_gemv (csrc/gemv.cu) instead of cuBLASLt. Such a product is bound by reading B, and
// cuBLASLt's kernels, built for tiles of many rows, have a fixed cost of about 4.5 us on an H200
// even for a 0.8 MB weight.
//
// It applies on sm_90 and newer (the split K meets in a thread block cluster) to a single product
// (gemmSingle: no batches, or A's batches folded into its rows) of float16 or bfloat16, A and B
// not transposed, any C (bias row, full, broadcast), and only at the shapes where it measured
// faster than cuBLASLt (gemvWins); everything else runs as cublaslt.
//
// It needs no workspace: the split K's partial sums meet in distributed shared memory, so nothing
// is carved, nothing needs zeroing and one launch does the whole product. Its Recipe has no parts;
// the kernel's Bound stays cublaslt's cap, which covers it.
//
// It is launched dependent (programmatic dependent launch): when B is a weight, each block
// issues its first rows of B before it waits for the kernel ahead of it, so at a decode step the
// product's first 4 MB or so stream while the norm, attention or SwiGLU before it finishes.
//
// Measured on the H200 (TestGemvBench: a replayed graph of runs over weights that do not fit L2,
// us per product, gemv / cublaslt), bf16, K = 1536 unless said:
//
//	M = 1: N 256 2.81 / 4.49, N 1536 3.93 / 4.74, N 2048 4.61 / 4.83, K 8960 N 1536 9.80 / 11.09;
//	       N 8960 10.0 / 9.1 (cublaslt);
//	M = 2: N 256 3.31 / 4.49; N 1536 4.78 / 4.74 and larger: cublaslt;
//	M = 4: N 256 4.15 / 4.49; M = 8 (a kernel with 8 rows): N 256 5.8 / 4.5.
//
// With more rows the CUDA cores' FMAs (2*M per weight element, with the conversions and A's
// reads) and the larger products favour cuBLASLt's tensor-core tiles.

const (
	gemvTactic   = "gemv"
	gemvMaxRows  = 4   // the most rows of A (after folding batches): csrc has MR 1, 2 and 4
	gemvThreads  = 256 // csrc kThreads
	gemvWarps    = gemvThreads / 32
	gemvRing     = 8 // csrc kRing: rows of B in flight per thread
	gemvMaxSplit = 8 // the largest portable cluster
	// gemvMaxStage is the most shared memory A's stage may take in one block, so that a few
	// blocks fit a multiprocessor.
	gemvMaxStage = 96 << 10
	// gemvMinSlice is the fewest rows of K a split slice is planned for.
	gemvMinSlice = 128
	// gemvMinBlocks is the fewest blocks the columns are cut into tiles for, when a narrower tile
	// gets there.
	gemvMinBlocks = 64
)

// gemvConfig is one launch geometry: 8 << cwlog columns per block (cwlog in 1..5) and K split
// over split blocks (1, 2, 4 or 8) of one cluster.
type gemvConfig struct {
	cwlog int
	split int64
}

// gemvRowsVariant is the kernel's row count for m rows: the next of 1, 2 and 4.
func gemvRowsVariant(m int64) int64 { return pow2AtLeast(m, 1) }

// gemvApplies reports whether g has the form the gemv kernel computes on t.
func gemvApplies(g *gemmInstance, t kernels.Target) bool {
	if major, ok := archMajor(t.Arch); !ok || major < 9 {
		return false
	}
	if g.dt != graph.Float16 && g.dt != graph.BFloat16 {
		return false
	}
	return g.mode == gemmSingle && !g.transA && !g.transB && g.m >= 1 && g.m <= gemvMaxRows && g.k >= 1 && g.n >= 1
}

// gemvWins reports whether gemv measured faster than cuBLASLt at m x k x n (see the table
// above): one row against up to 2048 columns, or up to 4 rows against up to 256, with K in the
// range measured around (1536 and 8960).
func gemvWins(m, k, n int64) bool {
	if k < 1024 || k > 16384 || n < 256 {
		return false
	}
	return (m == 1 && n <= 2048) || (m <= 4 && n <= 256)
}

// gemvChoose is the geometry for g: K split in two up to gemvMaxSplit times while a slice keeps
// gemvMinSlice rows (further while A's stage does not fit gemvMaxStage), then the widest tile of
// 128, 64 or 32 columns that still gives gemvMinBlocks blocks (32 when none does): the geometries
// that measured fastest at the decode shapes. ok is false where even gemvMaxSplit slices do not
// fit A's stage.
func gemvChoose(g *gemmInstance) (gemvConfig, bool) {
	c := gemvConfig{cwlog: 4, split: 1}
	for c.split < gemvMaxSplit && (g.k+2*c.split-1)/(2*c.split) >= gemvMinSlice {
		c.split *= 2
	}
	return gemvFit(g, c, gemvMinBlocks)
}

// gemvFit completes geometry c for g: more K slices while A's stage does not fit gemvMaxStage,
// then narrower tiles (down to 32 columns) while there are fewer than minBlocks blocks. ok is
// false where even gemvMaxSplit slices do not fit A's stage.
func gemvFit(g *gemmInstance, c gemvConfig, minBlocks int64) (gemvConfig, bool) {
	for c.split < gemvMaxSplit && gemvStage(g, c) > gemvMaxStage {
		c.split *= 2
	}
	for c.cwlog > 2 && (g.n+(8<<c.cwlog)-1)/(8<<c.cwlog)*c.split < minBlocks {
		c.cwlog--
	}
	return c, gemvStage(g, c) <= gemvMaxStage
}

// gemvSlice is the rows of K one block takes.
func gemvSlice(k, split int64) int64 { return (k + split - 1) / split }

// gemvStage is the bytes of A's stage in one block.
func gemvStage(g *gemmInstance, c gemvConfig) int64 {
	return gemvSlice(g.k, c.split) * gemvRowsVariant(g.m) * 4
}

// gemvShared is a block's dynamic shared memory (csrc gemv): the ring (ring rows per thread; 0
// for the unaligned kernel) and A's stage, which the warps' sums reuse, then with a split K the
// inbox of the sums the cluster's blocks send. pairs is the swiglu kernel's (gated.go), whose
// blocks send their sums in (gate, up) pairs, an even count to each owner.
func gemvShared(g *gemmInstance, c gemvConfig, ring int64, pairs bool) int64 {
	tile := gemvRowsVariant(g.m) * (8 << c.cwlog)
	sh := max(ring*gemvThreads*16+gemvStage(g, c), gemvWarps*tile*4)
	if c.split > 1 {
		per := (tile + c.split - 1) / c.split
		if pairs {
			per = 2 * ((tile/2 + c.split - 1) / c.split)
		}
		sh += c.split * per * 4
	}
	return sh
}

// gemvProgram is g's launch with geometry c: the ring kernel, and the unaligned one when N % 8 !=
// 0 or, at run time, B is not 16-byte aligned.
func gemvProgram(g *gemmInstance, c gemvConfig, t kernels.Target) (program, error) {
	if c.cwlog < 1 || c.cwlog > 5 || (c.split != 1 && c.split != 2 && c.split != 4 && c.split != 8) {
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
	shared := gemvShared(g, c, gemvRing, false)
	if tiles > 65535 || !fits32(g.m, g.n, g.k, ks, csm, csn) || shared > t.SharedMemPerBlock {
		return nil, fmt.Errorf("gemv of %d x %d x %d does not fit the kernel's limits", g.m, g.k, g.n)
	}
	name := fmt.Sprintf("carve_gemv_%s_m%d_s%d", dtName(g.dt), gemvRowsVariant(g.m), c.split)
	st := step{kernel: name, grid: Dim3{X: uint32(c.split), Y: uint32(tiles), Z: 1}, block: Dim3{X: gemvThreads, Y: 1, Z: 1},
		shared: uint32(shared),
		params: []param{outp(0), inp(0), inp(1), cp, pack32(g.m, g.n), pack32(g.k, ks), i32p(c.cwlog),
			f32p(g.alpha), f32p(g.beta), pack32(csm, csn), i32p(boolInt(g.bWeight))},
		dependent: true}
	slow := st
	slow.kernel += "_u"
	slow.shared = uint32(gemvShared(g, c, 0, false))
	if g.n%8 != 0 {
		return program{slow}, nil
	}
	st.align, st.alignOnly, st.fallback = 16, []int{2}, &slow
	return program{st}, nil
}

// selectGemv makes g the gemv tactic where it applies and wins on t; otherwise g stays cublaslt.
func selectGemv(g *gemmInstance, t kernels.Target) {
	if !gemvApplies(g, t) || !gemvWins(g.m, g.k, g.n) {
		return
	}
	c, ok := gemvChoose(g)
	if !ok {
		return
	}
	if p, err := gemvProgram(g, c, target(t)); err == nil {
		g.gemv = p
	}
}
