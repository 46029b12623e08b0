// Package gemm is the CPU kernels' float32 matrix product: C = alpha * A * B, or C += alpha *
// A * B, for row-major or transposed operands, in parallel over tiles of C on the kernels'
// worker pool, without allocating.
//
// Structure (after BLIS and onnxruntime's MLAS): C is cut into tiles of at most MC x NC; a
// tile walks K in slabs of at most KC; within a slab, B is read in panels of NR columns (packed
// into the caller's workspace when B is transposed, comes from a Source, or is a large row-major
// one of a product of many rows (packsRowMajor); read in place otherwise) and A in place, a micro-kernel keeping an MR x NR block of C in registers
// for the whole slab. A is never packed: the micro-kernels broadcast its elements through any
// pair of strides, which is what MLAS does too. A transposed B with several workers and at least
// swapMinM rows of A is the exception (Plan.Swap): tiles compute C's transpose, B^T A^T, reading
// B's rows in place and packing A's, with the same sums in the same order. NewSwappedPlan asks
// for the same of a row-major B (its columns are then the broadcast operand): for a product of
// few columns (a convolution's late layers, 7 x 7 or 14 x 14 output positions) the panels of NR
// columns would be mostly padding, C's rows (output channels) are not.
//
// The micro-kernels are generated assembly (./asmgen): AVX-512F (12 x 32, and 12 x 16 for
// products at most 16 columns wide) where the CPU has it, else AVX2 with FMA (6 x 16), else
// portable Go (4 x 16). The choice depends on the CPU;
// the Plan does not: tile sizes are multiples of every kernel's MR and NR, and the workspace a
// Plan asks for is the same on every machine, so the estimator and the runner agree.
//
// Why hand-written: a kept library would be the usual choice, but none fits the workspace
// contract. gonum's Sgemm (the previous kernel) is axpy-based, neither blocked nor packed, and
// starts goroutines for large products (allocating); OpenBLAS or oneDNN through cgo bring their
// own thread pools and allocate their packing buffers outside the carved workspace, and cgo
// calls cost about as much as the small products of decode steps. Go's SIMD package needs a
// GOEXPERIMENT, which the Bazel build does not set. The micro-kernel is about 40 lines of
// generated assembly per row count; everything else is plain Go.
//
// Invariants:
//  1. Run never allocates and writes only C and the workspace it is given (Plan.WorkspaceFloats
//     floats; Plan.Run panics on a shorter one, or on operands shorter than their shapes).
//  2. A Plan is a pure function of (M, N, K, B's layout, workers): never of the CPU.
//  3. Each element of C is computed by one participant, with K summed in the same order
//     whatever the worker count, so results do not depend on the number of workers.
package gemm

import (
	"fmt"

	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// Kernel is one micro-kernel: it computes an R x NR block of C (R <= MR).
type Kernel struct {
	Name   string
	MR, NR int
	// fn computes C[0:rows, 0:NR] = Relu?(alpha * A[0:rows, 0:k] * B[0:k, 0:NR] + bias (+ C if
	// acc)), with A(i, p) at a[i*rsa + p*csa], B(p, j) at b[p*rsb + j], C(i, j) at c[i*ldc + j],
	// bias[i] added along row i (nil: none) and Relu (vec.Relu's) when relu.
	fn func(rows, k int, a []float32, rsa, csa int, b []float32, rsb int, c []float32, ldc int, alpha float32, acc bool, bias []float32, relu bool)
}

var (
	kernels = []Kernel{{Name: "go", MR: 4, NR: 16, fn: kernGo}}
	best    Kernel // set by init: the fastest
	narrow  Kernel // set by init: the fastest of at most 16 columns, for products that narrow
	// hasPack8 reports whether pack8 (an 8 x 8 transposing copy in assembly) can run.
	hasPack8 bool
)

// Kernels lists the micro-kernels this CPU can run, the portable one first and the fastest last.
func Kernels() []Kernel { return append([]Kernel(nil), kernels...) }

// Best is the micro-kernel Run uses.
func Best() Kernel { return best }

// Blocking. Tile sizes are multiples of unitM and unitN, which every kernel's MR and NR divide.
// mcMax takes a transformer's 197 rows (ViT-B/16's tokens) in one tile: at 192 a product's
// tiles were 192 and 5 rows, or 108 and 89 on two workers, and each packed B's slabs twice (B
// is packed per tile); its block of A (mcMax x kcMax floats, 240 KiB) stays in a core's L2.
const (
	unitM = 12
	unitN = 32
	kcMax = 256
	mcMax = 240
	ncMax = 512
	// minSlotFlops is the least work worth waking a worker for (a few microseconds).
	minSlotFlops = 1 << 19
)

// Layout says how B is stored.
type Layout uint8

const (
	// RowMajor B: element (p, j) at Data[p*Ld + j].
	RowMajor Layout = iota
	// Transposed B: element (p, j) at Data[j*Ld + p].
	Transposed
	// Custom B: columns come from a Source.
	Custom
)

// Mat is a float32 matrix operand: element (i, j) at Data[i*Ld + j], or at Data[j*Ld + i] when
// Trans.
type Mat struct {
	Data  []float32
	Ld    int
	Trans bool
}

// Source supplies the columns of a B that is not a float32 matrix (dequantized weights).
type Source interface {
	// Col writes B[k0 : k0+len(dst), j] into dst.
	Col(dst []float32, j, k0 int)
}

// Plan is the blocking of one product shape for a worker count.
type Plan struct {
	M, N, K    int
	MC, NC, KC int
	Slots      int  // participants, and per-slot workspace areas
	Pack       bool // B is packed into panels (Custom, Transposed unless Swap, and RowMajor where packsRowMajor)
	// Swap: B is Transposed (or RowMajor, NewSwappedPlan) and each tile of C is computed as
	// its transpose, B^T A^T (see tileSwapped): B is read in place and A's rows are packed. MC is then a multiple of
	// unitN and NC of unitM.
	Swap bool
	// Per, for a plan of NewTapsPlan: K is taps of Per rows each (see Taps); KC is at most Per,
	// so that no slab of K crosses from one tap to the next.
	Per int
}

// Taps lays out the operands of a product whose K is len(B) taps of per rows each, a
// convolution's kernel taps over the channels of a zero-padded input: row p = t*per + c of B
// (row-major) is b.Data[B[t] + c*b.Ld:], and element (i, p) of A (not transposed) is
// a.Data[t*ATap + i*a.Ld + c]. Each tap's rows are a row-major matrix of their own, so a slab of
// K inside one tap is read exactly as a plain B's: the taps cost nothing beyond their products.
type Taps struct {
	B    []int
	ATap int
}

// NewTapsPlan blocks an m x (per*taps) by (per*taps) x n product of a row-major B laid out by
// Taps, for up to workers participants. Its workspace is at most Workspace(m, n, per*taps,
// RowMajor, workers).
func NewTapsPlan(m, n, per, taps, workers int) Plan {
	p := newPlan(m, n, per*taps, RowMajor, workers, false)
	if per > 0 {
		p.Per, p.KC = per, min(per, kcMax)
	}
	return p
}

// RunTaps computes C = rowBias + A * B (rowBias as RunRowBias's, nil for none) for a plan of
// NewTapsPlan, A and B laid out by taps (len(taps.B) taps of p.Per rows of K).
func (p *Plan) RunTaps(a Mat, b Mat, taps Taps, rowBias []float32, c []float32, ldc int, ws []float32) {
	if p.Per <= 0 || len(taps.B)*p.Per != p.K || a.Trans || b.Trans {
		panic(fmt.Sprintf("gemm: RunTaps of a plan of K %d, %d rows a tap, on %d taps (A and B not transposed)", p.K, p.Per, len(taps.B)))
	}
	if rowBias != nil && len(rowBias) < p.M {
		panic(fmt.Sprintf("gemm: row bias of %d elements, want %d", len(rowBias), p.M))
	}
	ops := tileOps{taps: taps.B, aTap: taps.ATap}
	if rowBias != nil {
		ops.rowBias = rowBias[:p.M]
	}
	p.run(p.kernel(), a, b, nil, ops, c, ldc, 1, rowBias != nil, ws)
}

// NewPlan blocks an m x k by k x n product for up to workers participants.
func NewPlan(m, n, k int, b Layout, workers int) Plan {
	if b == RowMajor && packsRowMajor(m, n, k) {
		return newPackedPlan(m, n, k, workers)
	}
	return newPlan(m, n, k, b, workers, swaps(m, n, k, b, workers))
}

// A large row-major B (a MatMul's weights, [K, N]) is packed into panels tile by tile, as a
// transposed one is, once the product has rows enough to reuse them: read in place, a panel's
// rows are N floats apart, each in a page of its own for N of a few thousand, and every block of
// MR rows of A walks them again. Weights mapped from the model file sit in 4 KiB pages, and ViT-
// B/16's products (197 x 3072 x 768, 197 x 2304 x 768) ran at half the micro-kernel's rate; packed
// (a slab's rows read in order, each a run of NC floats), the network took 22% less time on one
// worker. A B under packRowMajorMinB floats stays in place (a convolution's col tiles, which stay
// in a core's cache), and so does a product of fewer than packRowMajorMinM rows, which reads
// each panel too few times to repay the copy (a decode step reads B's elements once).
const (
	packRowMajorMinM = 48
)

// packRowMajorMinB is the fewest floats of B that packsRowMajor packs (a variable for tests).
var packRowMajorMinB int64 = 1 << 20

// packsRowMajor reports whether NewPlan packs the row-major B of an m x k by k x n product.
// It is non-decreasing in m, n and k.
func packsRowMajor(m, n, k int) bool {
	return m >= packRowMajorMinM && int64(n)*int64(k) >= packRowMajorMinB
}

// newPackedPlan is NewPlan's plan of a row-major B that packsRowMajor packs: the blocking of a
// transposed B's plain plan (Plan.Pack), B's slabs packed by rows (task.packRows).
func newPackedPlan(m, n, k, workers int) Plan {
	return newPlan(m, n, k, Transposed, workers, false)
}

// NewSwappedPlan blocks an m x k by k x n product of a row-major B as tiles of C's transpose
// (Plan.Swap), for up to workers participants: each element of C gets the same products in the
// same order as NewPlan's plan gives it. Its workspace is at most SwappedWorkspace(m, n, k,
// workers).
func NewSwappedPlan(m, n, k, workers int) Plan {
	return newPlan(m, n, k, RowMajor, workers, true)
}

// newPlan is NewPlan with the choice of a swapped plan made (swap for a Transposed or RowMajor
// B, never a Custom one).
func newPlan(m, n, k int, b Layout, workers int, swap bool) Plan {
	p := Plan{M: m, N: n, K: k, KC: min(max(k, 1), kcMax), Slots: 1}
	p.Swap = swap && b != Custom
	p.Pack = b != RowMajor && !p.Swap
	if m <= 0 || n <= 0 {
		return p
	}
	flops := 2 * int64(m) * int64(n) * int64(max(k, 1))
	want := int(min(int64(max(workers, 1)), max(flops/minSlotFlops, 1)))
	if p.Swap {
		// Tiles of C^T: n along the micro-kernel's rows, m along its columns.
		p.NC, p.MC = min(roundUp(n, unitM), mcMax), min(roundUp(m, unitN), swapMaxM)
		if want > 1 {
			p.NC, p.MC = balance(n, m, want, true, swapMaxM)
		}
	} else {
		p.MC, p.NC = min(roundUp(m, unitM), mcMax), min(roundUp(n, unitN), ncMax)
		if want > 1 {
			p.MC, p.NC = balance(m, n, want, p.Pack, ncMax)
		}
	}
	p.Slots = max(min(p.tiles(), want), 1)
	return p
}

// Swapped plans. A transposed B (a tied LM head's embedding, n x k) packed into panels of NR
// columns is read once and written once more for every tile: for GPT-2's 50257 x 768 head at
// 128 tokens the packing was a third of the product's time on two cores, and it grows with
// the tiles along m. Computing the tile's transpose instead, C^T = B^T A^T, makes B's rows the
// micro-kernel's broadcast operand, read in place like A's, and packs A's rows (mc x kc, small
// beside the tile's work) into the panels; the tile of C^T is formed in the slot's workspace,
// starting from C's values (or the bias) exactly as the plain path's C does, and copied back
// transposed. Each element of C gets the same products, summed in the same order, by the same
// micro-kernel: the two paths give identical bits (a test checks it), so the choice may depend
// on the workers (invariant 3 holds). Products of few rows keep the plain path: the panels of
// A^T are NR columns wide, and below swapMinM rows too much of them would be padding (decode
// steps' products have one row). So do products of a B under swapMinB floats: packing a B that
// stays in a core's cache costs little, and on the 16-core host the swapped tiles of a 128 x 64
// B (the onnx_misc fixture's Gemm, at 99 and 1024 rows) took it from 1.45x and 1.31x
// onnxruntime's time to 1.53x and 1.54x.
const (
	swapMinB = 1 << 20 // floats of B (4 MiB): twice a core's L2 on the hosts measured
	swapMinM = 64
	// swapMaxM bounds a tile's extent along m: its A^T panels (kc x mc) and C^T (nc x mc) take
	// at most kcMax*128 + mcMax*128 floats, less than a plain plan's packed B (kcMax*ncMax).
	swapMaxM = 128
)

func swaps(m, n, k int, b Layout, workers int) bool {
	return b == Transposed && workers > 1 && m >= swapMinM && int64(n)*int64(k) >= swapMinB
}

// Tile costs for balance, in multiply-adds per element of K: a tile of mc x nc costs mc*nc
// for its products plus tileReadA*mc for bringing its block of A into the cache and
// tileReadB*nc for its block of B (tileReadPackedB when B is packed, which also writes it).
const (
	tileReadA       = 6
	tileReadB       = 6
	tileReadPackedB = 12
)

// balance picks the tile of C (multiples of unitM by unitN, at most mcMax by ncMax) that lets
// w participants, taking tiles in turn, finish soonest: the fewest rounds (tiles / w, rounded
// up) times a tile's cost, ties to the fewer tiles. Halving the larger side until there are
// enough tiles, as a first version did, left a last round a quarter full (36 tiles on 16
// participants): every tile size is tried instead (at most 16 x 16, at plan time).
// ncCap bounds nc (ncMax; swapMaxM for the tiles of C^T, whose columns are C's rows).
func balance(m, n, w int, pack bool, ncCap int) (mc, nc int) {
	readB := tileReadB
	if pack {
		readB = tileReadPackedB
	}
	best, bestTiles := int64(-1), 0
	for tmc := unitM; tmc <= min(roundUp(m, unitM), mcMax); tmc += unitM {
		tm, em := (m+tmc-1)/tmc, int64(min(tmc, m))
		for tnc := unitN; tnc <= min(roundUp(n, unitN), ncCap); tnc += unitN {
			tn, en := (n+tnc-1)/tnc, int64(min(tnc, n))
			tiles := tm * tn
			cost := int64((tiles+w-1)/w) * (em*en + tileReadA*em + int64(readB)*en)
			if best < 0 || cost < best || cost == best && tiles < bestTiles {
				best, bestTiles, mc, nc = cost, tiles, tmc, tnc
			}
		}
	}
	return mc, nc
}

func roundUp(x, u int) int { return (x + u - 1) / u * u }

func (p *Plan) tilesM() int { return (p.M + p.MC - 1) / p.MC }
func (p *Plan) tilesN() int { return (p.N + p.NC - 1) / p.NC }
func (p *Plan) tiles() int  { return p.tilesM() * p.tilesN() }

// slotFloats is one participant's workspace: a packed slab of B (or one zero-padded panel for
// the last columns of an unpacked B), a block of C for panels past N's end, and 8 columns of B
// for Sources. (They live in the workspace, not on the stack: slices passed to the micro-kernel
// through a function value, or to a Source, would escape and allocate.)
func (p *Plan) slotFloats() int {
	if p.M <= 0 || p.N <= 0 {
		return 0
	}
	if p.Swap { // A^T's panels and the tile of C^T
		return p.KC*p.MC + p.NC*p.MC + edgeFloats + 8*p.KC
	}
	panels := p.KC * unitN
	if p.Pack {
		panels = p.KC * p.NC
	}
	return panels + edgeFloats + 8*p.KC
}

// edgeFloats is the largest C block of a micro-kernel (MR x NR).
const edgeFloats = 12 * 32

// WorkspaceFloats is the workspace Run needs, in float32s.
func (p *Plan) WorkspaceFloats() int { return p.Slots * p.slotFloats() }

// Workspace is the workspace, in float32s, that callers reserve for an m x k by k x n product
// with B in layout b and up to workers participants: at least what NewPlan's plan needs
// (WorkspaceFloats), and non-decreasing in m, n, k and workers, so that a recipe sized with it
// at the largest shapes of a range covers every shape of the range.
func Workspace(m, n, k int64, b Layout, workers int) int64 {
	if m <= 0 || n <= 0 {
		return 0
	}
	m, n, k = min(m, 1<<40), min(n, 1<<40), min(max(k, 1), 1<<40)
	kc := min(k, kcMax)
	panels := kc * unitN
	if b != RowMajor || packsRowMajor(int(m), int(n), int(k)) {
		panels = kc * min((n+unitN-1)/unitN*unitN, ncMax)
	}
	tiles := ((m + unitM - 1) / unitM) * ((n + unitN - 1) / unitN)
	slots := min(int64(max(workers, 1)), max(2*m*n*k/minSlotFlops, 1), tiles)
	ws := slots * (panels + edgeFloats + 8*kc)
	if b == Transposed && workers > 1 && n*k >= swapMinB {
		// A swapped plan's, at any m (a bound that grows with m, though only m >= swapMinM swaps).
		ws = max(ws, swappedFloats(m, n, k, workers))
	}
	return ws
}

// SwappedWorkspace is Workspace for NewSwappedPlan's plans: at least their WorkspaceFloats, and
// non-decreasing in m, n, k and workers.
func SwappedWorkspace(m, n, k int64, workers int) int64 {
	if m <= 0 || n <= 0 {
		return 0
	}
	return swappedFloats(min(m, 1<<40), min(n, 1<<40), min(max(k, 1), 1<<40), max(workers, 1))
}

// swappedFloats bounds a swapped plan's workspace (m, n and k positive).
func swappedFloats(m, n, k int64, workers int) int64 {
	kc := min(k, kcMax)
	mc, nc := min((m+unitN-1)/unitN*unitN, swapMaxM), min((n+unitM-1)/unitM*unitM, mcMax)
	tiles := ((m + unitN - 1) / unitN) * ((n + unitM - 1) / unitM)
	slots := min(int64(workers), max(2*m*n*k/minSlotFlops, 1), tiles)
	return slots * (kc*mc + nc*mc + edgeFloats + 8*kc)
}

// Run computes C = alpha * A * B (acc false) or C += alpha * A * B (acc true), C row-major with
// leading dimension ldc. b is used when the plan's B is a matrix, src when it is Custom.
func (p *Plan) Run(a Mat, b Mat, src Source, c []float32, ldc int, alpha float32, acc bool, ws []float32) {
	p.run(p.kernel(), a, b, src, tileOps{}, c, ldc, alpha, acc, ws)
}

// RunBias computes C = bias + alpha * A * B, bias (N floats) broadcast over the rows of C. It
// is C set to bias in every row and then Run with acc true, the same sums in the same order,
// but each participant sets its tile's rows just before computing the tile, while they are in
// its cache, instead of a pass over C (and a loop of the pool) of their own.
func (p *Plan) RunBias(a Mat, b Mat, src Source, bias []float32, c []float32, ldc int, alpha float32, ws []float32) {
	if len(bias) < p.N {
		panic(fmt.Sprintf("gemm: bias of %d elements, want %d", len(bias), p.N))
	}
	p.run(p.kernel(), a, b, src, tileOps{bias: bias[:p.N]}, c, ldc, alpha, true, ws)
}

// RunRowBias computes C = bias + alpha * A * B, bias (M floats) broadcast along the columns of
// C: row i of C starts from bias[i] (a convolution's bias per output channel). The sums and
// their order are those of setting C first and running with acc true, but the micro-kernel adds
// the bias to its first slab's sums where it would have read C, so C is not set at all (with an
// Epilogue's Add it is, tile by tile, as RunBias does).
func (p *Plan) RunRowBias(a Mat, b Mat, src Source, bias []float32, c []float32, ldc int, alpha float32, ws []float32) {
	if len(bias) < p.M {
		panic(fmt.Sprintf("gemm: row bias of %d elements, want %d", len(bias), p.M))
	}
	p.RunEpilogue(a, b, src, bias, Epilogue{}, c, ldc, alpha, ws)
}

// Epilogue is what a product adds to C and does to it, tile by tile while the tile is in the
// participant's cache: Add (of C's shape and leading dimension) is where each element's sum
// starts, with its row's bias, and Relu clamps the complete sum at 0
// (vec.Relu: NaN and -0 kept). Those are a convolution's residual Add and Relu fused. (Added
// at the start, Add is read a tile row at a time, which the hardware prefetches; added at the
// end, a micro-kernel block at a time, its rows far apart, it took ResNet-50 3 ns an element.)
// Add may be C itself (a residual sum in place): a tile reads its elements of Add once, when it
// starts (task.start, tileSwapped's init), before any of its products writes them, and tiles are
// disjoint, so no element of Add is read after C's is written; it must not overlap C otherwise.
type Epilogue struct {
	Add  []float32
	Relu bool
}

// RunEpilogue computes C = Relu?(Add + rowBias + alpha * A * B) (see Epilogue; rowBias as
// RunRowBias's, nil for none; Add nil for none).
func (p *Plan) RunEpilogue(a Mat, b Mat, src Source, rowBias []float32, epi Epilogue, c []float32, ldc int, alpha float32, ws []float32) {
	if rowBias != nil && len(rowBias) < p.M {
		panic(fmt.Sprintf("gemm: row bias of %d elements, want %d", len(rowBias), p.M))
	}
	if epi.Add != nil && p.M > 0 && p.N > 0 && len(epi.Add) < (p.M-1)*ldc+p.N {
		panic(fmt.Sprintf("gemm: epilogue addend of %d elements, want %d x %d with leading dimension %d", len(epi.Add), p.M, p.N, ldc))
	}
	ops := tileOps{relu: epi.Relu, add: epi.Add}
	if rowBias != nil {
		ops.rowBias = rowBias[:p.M]
	}
	p.run(p.kernel(), a, b, src, ops, c, ldc, alpha, rowBias != nil || epi.Add != nil, ws)
}

// tileOps are what a tile does besides its products: C's rows set first (with acc) to a bias
// (bias, one per column, or rowBias, one per row) or to add (C's layout) plus rowBias, and
// Relu last. A rowBias without add, and Relu on full micro-kernel blocks, are the
// micro-kernel's (task.tile): the same bits, without a pass over the tile of their own.
type tileOps struct {
	bias, rowBias, add []float32
	relu               bool
	taps               []int // RunTaps's layout (Taps.B); aTap is Taps.ATap
	aTap               int
}

// slab is where slab k0 of K (k0 a multiple of KC, or of a tap's start) starts in A's and B's
// Data for row i0 of A, and its rows: at most KC, and none past its tap's end.
func (t *task) slab(i0, k0 int) (aOff, bOff, kc int) {
	kc = min(t.p.KC, t.p.K-k0)
	if t.ops.taps == nil {
		return i0*t.a.Ld + k0, k0 * t.b.Ld, kc
	}
	tp, c0 := k0/t.p.Per, k0%t.p.Per
	return tp*t.ops.aTap + i0*t.a.Ld + c0, t.ops.taps[tp] + c0*t.b.Ld, min(kc, t.p.Per-c0)
}

// start sets rows [i0, i0+rows), columns [j0, j0+cols) of C to where their sums start: the
// column bias, or add plus the row bias, or either alone; nothing without them.
func (t *task) start(i0, j0, rows, cols int) {
	o := &t.ops
	for i := i0; i < i0+rows; i++ {
		row := t.c[i*t.ldc+j0 : i*t.ldc+j0+cols]
		switch {
		case o.bias != nil:
			copy(row, o.bias[j0:j0+cols])
		case o.add != nil && o.rowBias != nil:
			vec.VS(vec.Add, row, o.add[i*t.ldc+j0:i*t.ldc+j0+cols], o.rowBias[i])
		case o.add != nil:
			copy(row, o.add[i*t.ldc+j0:i*t.ldc+j0+cols])
		case o.rowBias != nil:
			fill(row, o.rowBias[i])
		}
	}
}

// finish applies Relu to rows [i0, i0+rows), columns [j0, j0+cols) of C.
func (t *task) finish(i0, j0, rows, cols int) {
	if !t.ops.relu {
		return
	}
	for i := i0; i < i0+rows; i++ {
		row := t.c[i*t.ldc+j0 : i*t.ldc+j0+cols]
		vec.Relu(row, row)
	}
}

func (p *Plan) kernel() Kernel {
	if p.N <= narrow.NR {
		return narrow // a wider kernel would compute zeros
	}
	return best
}

func (p *Plan) run(k Kernel, a Mat, b Mat, src Source, ops tileOps, c []float32, ldc int, alpha float32, acc bool, ws []float32) {
	if p.M <= 0 || p.N <= 0 {
		return
	}
	p.check(a, b, src, ops, c, ldc, ws)
	if p.K == 0 {
		t := task{p: *p, ops: ops, c: c, ldc: ldc}
		t.start(0, 0, p.M, p.N)
		if !acc {
			for i := 0; i < p.M; i++ {
				clear(c[i*ldc : i*ldc+p.N])
			}
		}
		t.finish(0, 0, p.M, p.N)
		return
	}
	if p.Slots <= 1 || p.tiles() == 1 {
		// One participant: the task lives on the stack. The free list's lock would be taken
		// twice a product, and a product on one participant is typically one of many run at
		// once by a kernel's parallel tasks (attention's), all taking the same lock: on 16
		// cores com.microsoft.Attention at (8, 128) in two loops took 0.24-0.25 ms a run with
		// the lock, 0.17-0.21 ms without.
		t := task{p: *p, k: k, a: a, b: b, src: src, ops: ops, c: c, ldc: ldc, alpha: alpha, acc: acc, ws: ws}
		t.Do(0, 0, p.tiles())
		return
	}
	t := tasks.Get()
	*t = task{p: *p, k: k, a: a, b: b, src: src, ops: ops, c: c, ldc: ldc, alpha: alpha, acc: acc, ws: ws}
	par.For(p.tiles(), 1, p.Slots, t)
	*t = task{}
	tasks.Put(t)
}

// check panics when an operand is shorter than the plan's shapes: the assembly does not check.
func (p *Plan) check(a, b Mat, src Source, ops tileOps, c []float32, ldc int, ws []float32) {
	need := func(what string, have, rows, cols, ld int) {
		if ld < cols || rows > 0 && have < (rows-1)*ld+cols {
			panic(fmt.Sprintf("gemm: %s has %d elements with leading dimension %d, want %d x %d", what, have, ld, rows, cols))
		}
	}
	if a.Trans {
		need("A", len(a.Data), p.K, p.M, a.Ld)
	} else if p.Per > 0 {
		last := (len(ops.taps) - 1) * ops.aTap
		need("A's last tap", len(a.Data)-min(last, len(a.Data)), p.M, p.Per, a.Ld)
	} else {
		need("A", len(a.Data), p.M, p.K, a.Ld)
	}
	switch {
	case src != nil:
	case p.Per > 0:
		for _, off := range ops.taps {
			if off < 0 {
				panic(fmt.Sprintf("gemm: tap offset %d", off))
			}
			need("B's tap", len(b.Data)-min(off, len(b.Data)), p.Per, p.N, b.Ld)
		}
	case b.Trans:
		need("B", len(b.Data), p.N, p.K, b.Ld)
	default:
		need("B", len(b.Data), p.K, p.N, b.Ld)
	}
	if (b.Trans || src != nil) && !p.Pack && !p.Swap || p.Swap && src != nil {
		panic("gemm: a transposed or custom B needs a packing or swapped plan, and a custom B a packing one")
	}
	need("C", len(c), p.M, p.N, ldc)
	if len(ws) < p.WorkspaceFloats() {
		panic(fmt.Sprintf("gemm: workspace of %d floats, want %d", len(ws), p.WorkspaceFloats()))
	}
}

type task struct {
	p     Plan // a copy: a pointer would make callers' plans escape
	k     Kernel
	a, b  Mat
	src   Source
	ops   tileOps // with acc, a bias C's rows are set to first, tile by tile; the epilogue
	c     []float32
	ldc   int
	alpha float32
	acc   bool
	ws    []float32
}

var tasks par.Pool[task]

func (t *task) Do(slot, lo, hi int) {
	per := t.p.slotFloats()
	buf := t.ws[slot*per : (slot+1)*per]
	col, buf := buf[len(buf)-8*t.p.KC:], buf[:len(buf)-8*t.p.KC]
	edge, buf := buf[len(buf)-edgeFloats:], buf[:len(buf)-edgeFloats]
	tn, tm := t.p.tilesN(), t.p.tilesM()
	for i := lo; i < hi; i++ {
		if t.p.Swap {
			// Tiles along m first: the participants running at once share B's rows (in L3).
			t.tileSwapped((i%tm)*t.p.MC, (i/tm)*t.p.NC, buf[:t.p.KC*t.p.MC], buf[t.p.KC*t.p.MC:])
			continue
		}
		t.tile((i/tn)*t.p.MC, (i%tn)*t.p.NC, buf, edge, col)
	}
}

// tileSwapped computes the tile of C at (i0, j0) as its transpose (Plan.Swap): ct (nc x w, w =
// mc rounded up to NR) starts as the tile's C (bias rows, C itself with acc, or nothing), takes
// B^T A^T slab by slab, its columns from A^T's panels packed into pa, and is copied back
// transposed. Columns of ct past mc come from zero padding and are never copied.
func (t *task) tileSwapped(i0, j0 int, pa, ct []float32) {
	p, k := &t.p, t.k
	mc, nc := min(p.MC, p.M-i0), min(p.NC, p.N-j0)
	w := roundUp(mc, k.NR)
	init := t.acc || t.ops.bias != nil || t.ops.rowBias != nil || t.ops.add != nil
	switch {
	case t.ops.bias != nil:
		for j := 0; j < nc; j++ {
			fill(ct[j*w:j*w+mc], t.ops.bias[j0+j])
		}
	case t.ops.add != nil:
		// Add's block transposed into ct, then the row bias added to each of ct's rows: Add's
		// elements, or v + b, as the plain path's start sets them.
		transposeInto(ct, w, t.ops.add[i0*t.ldc+j0:], t.ldc, mc, nc)
		if t.ops.rowBias != nil {
			for j := 0; j < nc; j++ {
				row := ct[j*w : j*w+mc]
				vec.VV(vec.Add, row, row, t.ops.rowBias[i0:i0+mc])
			}
		}
	case t.ops.rowBias != nil:
		for j := 0; j < nc; j++ {
			copy(ct[j*w:j*w+mc], t.ops.rowBias[i0:i0+mc])
		}
	case t.acc:
		transposeInto(ct, w, t.c[i0*t.ldc+j0:], t.ldc, mc, nc)
	}
	for k0 := 0; k0 < p.K; k0 += p.KC {
		kc := min(p.KC, p.K-k0)
		acc := init || k0 > 0
		for q := 0; q < mc; q += k.NR {
			panel := pa[q*kc : q*kc+kc*k.NR]
			cols := min(k.NR, mc-q)
			if t.a.Trans { // A(i, p) at Data[p*Ld + i]: panel rows are A's rows
				for r := 0; r < kc; r++ {
					o := (k0+r)*t.a.Ld + i0 + q
					dst := panel[r*k.NR : r*k.NR+k.NR]
					copy(dst, t.a.Data[o:o+cols])
					clear(dst[cols:])
				}
			} else {
				packCols(panel, k.NR, kc, cols, t.a.Data[(i0+q)*t.a.Ld+k0:], t.a.Ld)
				zeroCols(panel, k.NR, kc, cols)
			}
		}
		// B^T(j, p) is B's element (p, j): a transposed B's rows are read along p, a row-major
		// B's columns.
		bOff, rsb, csb := j0*t.b.Ld+k0, t.b.Ld, 1
		if !t.b.Trans {
			bOff, rsb, csb = k0*t.b.Ld+j0, 1, t.b.Ld
		}
		// C^T's nc rows in the fewest blocks of at most MR, as even as they divide: a block of
		// one or two rows runs at the rate of its FMAs' latency, not their throughput (a 7 x 7
		// convolution's 49 positions are blocks of 10 and 9, not four of 12 and one of 1). Each
		// row's sums do not depend on its block.
		blocks := (nc + k.MR - 1) / k.MR
		for q := 0; q < mc; q += k.NR {
			b := pa[q*kc:]
			for bl := range blocks {
				r, r1 := bl*nc/blocks, (bl+1)*nc/blocks
				k.fn(r1-r, kc, t.b.Data[bOff+r*rsb:], rsb, csb, b, k.NR, ct[r*w+q:], w, t.alpha, acc, nil, false)
			}
		}
	}
	// Back to C: eight rows of ct at a time become eight columns of C through pack8 (its first
	// mc &^ 7 rows); the rest element by element.
	j8, k8 := 0, 0
	if hasPack8 {
		k8 = mc &^ 7
	}
	for ; k8 > 0 && j8+8 <= nc; j8 += 8 {
		pack8(t.c[i0*t.ldc+j0+j8:], t.ldc, ct[j8*w:], w, k8)
	}
	for i := 0; i < mc; i++ {
		row := t.c[(i0+i)*t.ldc+j0 : (i0+i)*t.ldc+j0+nc]
		j := 0
		if i < k8 {
			j = j8
		}
		for ; j < nc; j++ {
			row[j] = ct[j*w+i]
		}
	}
	t.finish(i0, j0, mc, nc)
}

// transposeInto sets ct[j*w + i] = src[i*ld + j] for i < rows, j < cols: eight rows of src at
// a time become eight columns of ct through pack8 (their first cols &^ 7 elements), the rest
// element by element.
func transposeInto(ct []float32, w int, src []float32, ld, rows, cols int) {
	i8, k8 := 0, 0
	if hasPack8 {
		k8 = cols &^ 7
	}
	for ; k8 > 0 && i8+8 <= rows; i8 += 8 {
		pack8(ct[i8:], w, src[i8*ld:], ld, k8)
	}
	for i := 0; i < rows; i++ {
		j := 0
		if i < i8 {
			j = k8
		}
		for ; j < cols; j++ {
			ct[j*w+i] = src[i*ld+j]
		}
	}
}

// packCols packs the kc x cols block X(p, j) = data[j*ld + p] (X's columns are data's rows)
// into panel, element (p, j) at p*nr + j. Eight columns at a time go through pack8.
func packCols(panel []float32, nr, kc, cols int, data []float32, ld int) {
	j := 0
	if k8 := kc &^ 7; hasPack8 && k8 > 0 {
		for ; j+8 <= cols; j += 8 {
			src := data[j*ld:]
			pack8(panel[j:], nr, src, ld, k8)
			for r := 0; r < 8; r++ { // the last kc % 8 of each column
				for p := k8; p < kc; p++ {
					panel[p*nr+j+r] = src[r*ld+p]
				}
			}
		}
	}
	for ; j < cols; j++ {
		for p, v := range data[j*ld : j*ld+kc] {
			panel[p*nr+j] = v
		}
	}
}

// zeroCols zeroes columns from..nr-1 of a panel of kc rows (the padding past a matrix's edge).
func zeroCols(panel []float32, nr, kc, from int) {
	for j := from; j < nr; j++ {
		for p := 0; p < kc; p++ {
			panel[p*nr+j] = 0
		}
	}
}

// tile computes the tile of C at (i0, j0).
// buf holds B's panels, edge a C block for panels past N's end, col a column of a Source.
func (t *task) tile(i0, j0 int, buf, edge, col []float32) {
	p, k := &t.p, t.k
	mc, nc := min(p.MC, p.M-i0), min(p.NC, p.N-j0)
	// A row bias alone is the micro-kernel's, added to the first slab's sums (the bits of C set
	// to it first and the slab accumulated); so is Relu, after a full block's last slab.
	kbias := t.ops.rowBias != nil && t.ops.add == nil
	if !kbias {
		t.start(i0, j0, mc, nc)
	}
	epi := t.ops.relu
	for k0, kc := 0, 0; k0 < p.K; k0 += kc {
		aOff, bOff, n := t.slab(i0, k0)
		kc = n
		acc := t.acc && !kbias || k0 > 0
		var bias []float32
		if kbias && k0 == 0 {
			bias = t.ops.rowBias[i0:]
		}
		last := epi && k0+kc == p.K // the epilogue follows each block's last slab
		var a []float32
		var rsa, csa int
		if t.a.Trans {
			a, rsa, csa = t.a.Data[k0*t.a.Ld+i0:], 1, t.a.Ld
		} else {
			a, rsa, csa = t.a.Data[aOff:], t.a.Ld, 1
		}
		if p.Pack {
			t.packB(buf, col, k0, kc, j0, nc)
		}
		for q := 0; q < nc; q += k.NR {
			cols := min(k.NR, nc-q)
			var b []float32
			var rsb int
			switch {
			case p.Pack:
				b, rsb = buf[q*kc:], k.NR
			case cols == k.NR:
				b, rsb = t.b.Data[bOff+j0+q:], t.b.Ld
			default:
				t.packEdge(buf, bOff, kc, j0+q, cols)
				b, rsb = buf, k.NR
			}
			for r := 0; r < mc; r += k.MR {
				rows := min(k.MR, mc-r)
				ar := a[r*rsa:]
				c := t.c[(i0+r)*t.ldc+j0+q:]
				var br []float32
				if bias != nil {
					br = bias[r:]
				}
				if cols == k.NR {
					k.fn(rows, kc, ar, rsa, csa, b, rsb, c, t.ldc, t.alpha, acc, br, last)
					continue
				}
				// past N's end: the block in edge, its first cols columns added or copied to C
				k.fn(rows, kc, ar, rsa, csa, b, rsb, edge, k.NR, t.alpha, false, br, false)
				for i := 0; i < rows; i++ {
					src, dst := edge[i*k.NR:i*k.NR+cols], c[i*t.ldc:i*t.ldc+cols]
					if acc {
						for j, v := range src {
							dst[j] += v
						}
					} else {
						copy(dst, src)
					}
				}
				if last {
					t.finish(i0+r, j0+q, rows, cols)
				}
			}
		}
	}
}

// packB packs B[k0:k0+kc, j0:j0+nc] of a transposed or Source B into buf as panels of NR
// columns, panel q/NR at buf[q*kc:], element (p, j) of a panel at p*NR + j, zero past N. Eight
// columns at a time go through pack8 (their rows of the transposed B, or a Source's columns
// written to col, are transposed 8 x 8 in registers); the rest one by one.
func (t *task) packB(buf, col []float32, k0, kc, j0, nc int) {
	nr := t.k.NR
	if t.src == nil && !t.b.Trans {
		t.packRows(buf, k0, kc, j0, nc)
		return
	}
	for q := 0; q < nc; q += nr {
		cols := min(nr, nc-q)
		panel := buf[q*kc : q*kc+kc*nr]
		if t.src == nil {
			packCols(panel, nr, kc, cols, t.b.Data[(j0+q)*t.b.Ld+k0:], t.b.Ld)
		} else {
			// Eight columns at a time from the Source into col, then packed from there.
			for j := 0; j < cols; j += 8 {
				g := min(8, cols-j)
				for r := 0; r < g; r++ {
					t.src.Col(col[r*kc:(r+1)*kc], j0+q+j+r, k0)
				}
				packCols(panel[j:], nr, kc, g, col, kc)
			}
		}
		zeroCols(panel, nr, kc, cols)
	}
}

// packRows is packB of a row-major B: a row of the slab at a time (B's rows read in order, each
// a run of nc floats, rather than a panel's width of every row in turn), its NR-column pieces to
// their panels, the last one zero-padded.
func (t *task) packRows(buf []float32, k0, kc, j0, nc int) {
	nr := t.k.NR
	full := nc / nr * nr
	for r := 0; r < kc; r++ {
		src := t.b.Data[(k0+r)*t.b.Ld+j0:][:nc]
		q := 0
		for ; q < full; q += nr {
			copy(buf[q*kc+r*nr:][:nr], src[q:q+nr])
		}
		if q < nc {
			dst := buf[q*kc+r*nr:][:nr]
			copy(dst, src[q:])
			clear(dst[nc-q:])
		}
	}
}

// packEdge packs the last cols < NR columns of a row-major B's slab of kc rows starting at
// bOff (task.slab), from column j, zero-padded.
func (t *task) packEdge(buf []float32, bOff, kc, j, cols int) {
	nr := t.k.NR
	for p := 0; p < kc; p++ {
		o := bOff + p*t.b.Ld + j
		dst := buf[p*nr : p*nr+nr]
		copy(dst, t.b.Data[o:o+cols])
		clear(dst[cols:])
	}
}

// fill sets every element of s to v: the first 16 one by one, the rest by doubling copies
// (copy's memmove is vectorized; a loop of stores is not).
func fill(s []float32, v float32) {
	n := min(len(s), 16)
	for i := range s[:n] {
		s[i] = v
	}
	for n < len(s) {
		n += copy(s[n:], s[:n])
	}
}
