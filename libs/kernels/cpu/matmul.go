package cpu

import (
	"fmt"
	"slices"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
)

// blasImpl is gonum's pure-Go BLAS: a kept library whose Sgemm splits large products into
// 64x64 blocks computed in parallel and small ones serially without allocating.
var blasImpl gonum.Implementation

const (
	gemmBlock = 64 // gonum's Sgemm block size: it parallelizes over (M, N) blocks only
	// Split-K is chosen when gonum cannot parallelize (fewer than 4 blocks of C) and K is long:
	// K is cut into chunks whose partial products go to workspace and are summed after.
	splitKMinK   = 1024
	splitKChunk  = 512
	splitKMaxCut = 16
)

// gemmBlocks is the number of 64x64 blocks of an m x n product.
func gemmBlocks(m, n int64) int64 {
	return ((m + gemmBlock - 1) / gemmBlock) * ((n + gemmBlock - 1) / gemmBlock)
}

// useSplitK is the split-K rule; a pure function of the product's shape.
func useSplitK(m, n, k int64) bool { return k >= splitKMinK && gemmBlocks(m, n) < 4 && m > 0 && n > 0 }

// splitKCuts is how many chunks split-K cuts K into.
func splitKCuts(k int64) int64 { return min(max(k/splitKChunk, 2), splitKMaxCut) }

// splitKParts is the split-K recipe: one m x n float32 partial product per chunk.
func splitKParts(m, n, k int64) ([]alloc.Part, error) {
	b, err := kernels.Product(splitKCuts(k), m, n, 4)
	if err != nil {
		return nil, err
	}
	return []alloc.Part{{Name: "partials", Size: b}}, nil
}

// matmulDims resolves numpy matmul semantics for shapes a and b: the matrix dims, the batch
// shapes and the output shape.
func matmulDims(a, b []int64) (m, k, n int64, aBatch, bBatch, out []int64, err error) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 0, 0, nil, nil, nil, fmt.Errorf("MatMul of a scalar")
	}
	a2, b2 := a, b
	if len(a) == 1 {
		a2 = []int64{1, a[0]}
	}
	if len(b) == 1 {
		b2 = []int64{b[0], 1}
	}
	m, k = a2[len(a2)-2], a2[len(a2)-1]
	if kb := b2[len(b2)-2]; kb != k {
		return 0, 0, 0, nil, nil, nil, fmt.Errorf("inner dims differ: %v x %v", a, b)
	}
	n = b2[len(b2)-1]
	aBatch, bBatch = a2[:len(a2)-2], b2[:len(b2)-2]
	batch, err := broadcastShape(aBatch, bBatch)
	if err != nil {
		return 0, 0, 0, nil, nil, nil, err
	}
	out = slices.Clone(batch)
	if len(a) > 1 {
		out = append(out, m)
	}
	if len(b) > 1 {
		out = append(out, n)
	}
	return m, k, n, aBatch, bBatch, out, nil
}

// matmul is MatMul. Tactics: "gemm" (gonum Sgemm per batch, batches folded into M when B is
// shared), "splitk" (see useSplitK), "f16-convert" for 16-bit floats (operands converted to
// float32 in workspace), and "naive" for integers.
type matmul struct {
	tactic     string
	dt         graph.DType
	m, n, k    int
	batches    int
	bp         bplan // broadcast of the operands' batch dims to the output's (see batchOffsets)
	fold       bool  // one gemm with M*batches rows: B is shared and A's batches are contiguous
	cuts       int
	slots      int
	aLen, bLen int
}

func selectMatMul(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := arity(n, 2, 2, 1, 1); err != nil {
		return plan{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a.DType != b.DType || !isNumeric(a.DType) {
		return plan{}, fmt.Errorf("operands are %v and %v", a.DType, b.DType)
	}
	m, k, nn, aBatch, bBatch, out, err := matmulDims(a.Shape, b.Shape)
	if err != nil {
		return plan{}, err
	}
	if err := checkOut(n, 0, a.DType, out); err != nil {
		return plan{}, err
	}
	mm := &matmul{dt: a.DType, m: int(m), n: int(nn), k: int(k), slots: d.Workers, aLen: numel(a.Shape), bLen: numel(b.Shape)}
	batch, _ := broadcastShape(aBatch, bBatch)
	mm.batches = numel(batch)
	if numel(bBatch) == 1 && (numel(aBatch) == mm.batches) {
		mm.fold = true
	}
	if mm.batches > 0 {
		// No per-batch tables: selection must cost the same whatever the batch count.
		if mm.bp, err = newBPlan(batch, aBatch, bBatch); err != nil {
			return plan{}, err
		}
	}
	var parts []alloc.Part
	switch {
	case a.DType == graph.Float32:
		mm.tactic = "gemm"
		if useSplitK(m, nn, k) && !mm.fold || useSplitK(m*int64(mm.batches), nn, k) && mm.fold {
			rows := m
			if mm.fold {
				rows = m * int64(mm.batches)
			}
			mm.tactic, mm.cuts = "splitk", int(splitKCuts(k))
			if parts, err = splitKParts(rows, nn, k); err != nil {
				return plan{}, err
			}
		}
	case a.DType == graph.Float16 || a.DType == graph.BFloat16:
		mm.tactic = "f16-convert"
		if parts, err = f16Parts(a.Shape, b.Shape, out); err != nil {
			return plan{}, err
		}
	default:
		mm.tactic = "naive"
	}
	return plan{tactic: mm.tactic, parts: parts, r: mm}, nil
}

// batchOffsets returns the element offsets of output batch i's operands: i read in the mixed
// radix of the broadcast's dims (the innermost last), each digit times the operands' strides.
func (mm *matmul) batchOffsets(i int) (ao, bo int) {
	p := &mm.bp
	for d := p.rank - 1; d >= 0; d-- {
		x := i % p.dims[d]
		i /= p.dims[d]
		ao += x * p.st[0][d]
		bo += x * p.st[1][d]
	}
	return ao * mm.m * mm.k, bo * mm.k * mm.n
}

// f16Parts is the f16-convert recipe: float32 copies of both operands and of the result.
func f16Parts(a, b, out []int64) ([]alloc.Part, error) {
	var parts []alloc.Part
	for i, s := range [][]int64{a, b, out} {
		sz, err := kernels.ByteSize(graph.Float32, s)
		if err != nil {
			return nil, err
		}
		parts = append(parts, alloc.Part{Name: [...]string{"a32", "b32", "y32"}[i], Size: sz})
	}
	return parts, nil
}

// dimHi returns the range of dim i from the end of v (i = 1 is the last dim).
func dimFromEnd(v kernels.ValueRange, i int) kernels.DimRange {
	if i > len(v.Dims) {
		return kernels.Fixed(1)
	}
	return v.Dims[len(v.Dims)-i]
}

func his(v kernels.ValueRange) []int64 {
	out := make([]int64, len(v.Dims))
	for i, d := range v.Dims {
		out[i] = d.Hi
	}
	return out
}

func boundMatMul(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	a, okA := r.Input(0)
	b, okB := r.Input(1)
	if !okA || !okB || len(a.Dims) == 0 || len(b.Dims) == 0 {
		return kernels.Bound{}, fmt.Errorf("MatMul needs two non-scalar inputs")
	}
	switch a.DType {
	case graph.Float16, graph.BFloat16:
		_, _, _, _, _, out, err := matmulDims(his(a), his(b))
		if err != nil {
			return kernels.Bound{}, err
		}
		parts, err := f16Parts(his(a), his(b), out)
		if err != nil {
			return kernels.Bound{}, err
		}
		return recipeBound("f16-convert", parts)
	case graph.Float32:
	default:
		return kernels.Bound{}, nil
	}
	mr := kernels.Fixed(1)
	if len(a.Dims) > 1 {
		mr = dimFromEnd(a, 2)
	}
	nr := kernels.Fixed(1)
	if len(b.Dims) > 1 {
		nr = dimFromEnd(b, 1)
	}
	kr := dimFromEnd(a, 1)
	// A's batches fold into the rows of one product when B has no batch of its own (every B
	// batch dim is 1); with some B batch dim possibly > 1 both cases may occur.
	aBatch := kernels.Fixed(1)
	for _, dr := range a.Dims[:max(len(a.Dims)-2, 0)] {
		var err error
		aBatch.Lo *= dr.Lo
		if aBatch.Hi, err = kernels.Product(aBatch.Hi, dr.Hi); err != nil {
			return kernels.Bound{}, err
		}
	}
	foldAlways, foldNever := true, false
	for _, dr := range b.Dims[:max(len(b.Dims)-2, 0)] {
		foldAlways = foldAlways && dr.Hi == 1
		foldNever = foldNever || dr.Lo > 1
	}
	best := kernels.Bound{Tactic: "gemm"}
	consider := func(rows kernels.DimRange) error {
		// Split-K is reachable when the smallest product in range takes it (gemmBlocks grows
		// with rows and N, and the rule wants a long K).
		if !useSplitK(max(rows.Lo, 1), max(nr.Lo, 1), kr.Hi) {
			return nil
		}
		mn := splitKMaxMN(rows.Hi, nr.Hi)
		size, err := kernels.Product(splitKCuts(kr.Hi), mn, 4)
		if err != nil {
			return err
		}
		bd, err := recipeBound("splitk", []alloc.Part{{Name: "partials", Size: size}})
		best = best.Max(bd)
		return err
	}
	if !foldAlways {
		if err := consider(mr); err != nil {
			return kernels.Bound{}, err
		}
	}
	if !foldNever {
		rowsHi, err := kernels.Product(mr.Hi, aBatch.Hi)
		if err != nil {
			return kernels.Bound{}, err
		}
		if err := consider(kernels.DimRange{Lo: mr.Lo * aBatch.Lo, Hi: rowsHi}); err != nil {
			return kernels.Bound{}, err
		}
	}
	return best, nil
}

// splitKMaxMN is the largest M*N with M <= m, N <= n that split-K still takes (fewer than 4
// blocks of 64x64).
func splitKMaxMN(m, n int64) int64 {
	var best int64
	for a := int64(1); a <= 3; a++ {
		b := 3 / a
		best = max(best, min(m, a*gemmBlock)*min(n, b*gemmBlock))
	}
	return best
}

func (mm *matmul) run(in, out []kernels.Tensor, ws wsParts) error {
	switch mm.tactic {
	case "gemm":
		mm.gemm(in[0].Float32s(), in[1].Float32s(), out[0].Float32s())
	case "splitk":
		mm.splitK(in[0].Float32s(), in[1].Float32s(), out[0].Float32s(), kernels.ViewAs[float32](ws.bytes(0)))
	case "f16-convert":
		load := f16
		store := tof16
		if mm.dt == graph.BFloat16 {
			load, store = bf16, tobf16
		}
		a32, b32, y32 := kernels.ViewAs[float32](ws.bytes(0)), kernels.ViewAs[float32](ws.bytes(1)), kernels.ViewAs[float32](ws.bytes(2))
		for i, v := range in[0].Uint16s()[:mm.aLen] {
			a32[i] = load(v)
		}
		for i, v := range in[1].Uint16s()[:mm.bLen] {
			b32[i] = load(v)
		}
		y := out[0].Uint16s()
		mm.gemm(a32, b32, y32[:len(y)])
		for i := range y {
			y[i] = store(y32[i])
		}
	default:
		mm.naive(in[0], in[1], out[0])
	}
	return nil
}

// gemmBody runs the batches of a batched product in parallel when each is small.
type gemmBody struct {
	mm      *matmul
	a, b, c []float32
}

var gemmBodies = sync.Pool{New: func() any { return new(gemmBody) }}

func (g *gemmBody) Do(slot, lo, hi int) {
	mm := g.mm
	for i := lo; i < hi; i++ {
		ao, bo := mm.batchOffsets(i)
		sgemm(mm.m, mm.n, mm.k, g.a[ao:], g.b[bo:], g.c[i*mm.m*mm.n:])
	}
}

// sgemm computes c = a * b for row-major a (m x k), b (k x n), c (m x n) on one goroutine.
func sgemm(m, n, k int, a, b, c []float32) {
	sgemmLD(m, n, k, a, k, b, n, c, n)
}

// sgemmLD is sgemm with leading dimensions. Products of fewer than 4 blocks of 64x64 stay on
// the calling goroutine in gonum (its serial kernel, no allocation); larger ones must go
// through tiledGemm.
func sgemmLD(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 { // gonum insists on non-empty operands
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	blasImpl.Sgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, a, max(lda, 1), b, max(ldb, 1), 0, c, max(ldc, 1))
}

// Tiles of C for the parallel product: 64 x 192 (three of gonum's blocks, so gonum runs each
// serially), K walked in slabs of 256 so the slab of B stays in cache.
const (
	tileM = gemmBlock
	tileN = 3 * gemmBlock
	tileK = 256
)

// tiledGemm computes c = a * b (row-major, m x k times k x n) in parallel over tiles of C on
// the shared worker pool. gonum's own parallel Sgemm would start goroutines (allocating) and
// ignore the device's worker count; this keeps the hot path allocation-free and deterministic.
type tiledGemm struct {
	m, n, k int
	a, b, c []float32
}

var tiledGemms = sync.Pool{New: func() any { return new(tiledGemm) }}

func (g *tiledGemm) Do(slot, lo, hi int) {
	tn := (g.n + tileN - 1) / tileN
	for t := lo; t < hi; t++ {
		i0, j0 := (t/tn)*tileM, (t%tn)*tileN
		mt, nt := min(tileM, g.m-i0), min(tileN, g.n-j0)
		c := g.c[i0*g.n+j0:]
		for k0 := 0; k0 < g.k; k0 += tileK {
			kt := min(tileK, g.k-k0)
			beta := float32(1)
			if k0 == 0 {
				beta = 0
			}
			blasImpl.Sgemm(blas.NoTrans, blas.NoTrans, mt, nt, kt, 1, g.a[i0*g.k+k0:], g.k, g.b[k0*g.n+j0:], g.n, beta, c, g.n)
		}
	}
}

// gemmPar computes c = a * b with up to slots workers.
func gemmPar(m, n, k int, a, b, c []float32, slots int) {
	if gemmBlocks(int64(m), int64(n)) < 4 || k == 0 {
		sgemm(m, n, k, a, b, c)
		return
	}
	g := tiledGemms.Get().(*tiledGemm)
	g.m, g.n, g.k, g.a, g.b, g.c = m, n, k, a, b, c
	tiles := ((m + tileM - 1) / tileM) * ((n + tileN - 1) / tileN)
	par.For(tiles, 1, slots, g)
	*g = tiledGemm{}
	tiledGemms.Put(g)
}

func (mm *matmul) gemm(a, b, c []float32) {
	switch {
	case mm.batches == 0:
	case mm.fold:
		gemmPar(mm.m*mm.batches, mm.n, mm.k, a, b, c, mm.slots)
	case gemmBlocks(int64(mm.m), int64(mm.n)) < 4 && mm.batches > 1:
		g := gemmBodies.Get().(*gemmBody)
		g.mm, g.a, g.b, g.c = mm, a, b, c
		par.For(mm.batches, 1, mm.slots, g)
		*g = gemmBody{}
		gemmBodies.Put(g)
	default:
		for i := 0; i < mm.batches; i++ {
			ao, bo := mm.batchOffsets(i)
			gemmPar(mm.m, mm.n, mm.k, a[ao:], b[bo:], c[i*mm.m*mm.n:], mm.slots)
		}
	}
}

// splitKBody computes one chunk's partial product (pass 0) or sums the partials (pass 1).
type splitKBody struct {
	mm       *matmul
	rows     int
	a, b, c  []float32
	partials []float32
	pass     int
}

var splitKBodies = sync.Pool{New: func() any { return new(splitKBody) }}

func (s *splitKBody) Do(slot, lo, hi int) {
	mm := s.mm
	mn := s.rows * mm.n
	if s.pass == 1 {
		for i := lo; i < hi; i++ {
			var sum float32
			for c := 0; c < mm.cuts; c++ {
				sum += s.partials[c*mn+i]
			}
			s.c[i] = sum
		}
		return
	}
	chunk := (mm.k + mm.cuts - 1) / mm.cuts
	for c := lo; c < hi; c++ {
		k0 := c * chunk
		k1 := min(k0+chunk, mm.k)
		p := s.partials[c*mn : (c+1)*mn]
		if k1 <= k0 {
			clear(p)
			continue
		}
		blasImpl.Sgemm(blas.NoTrans, blas.NoTrans, s.rows, mm.n, k1-k0, 1, s.a[k0:], mm.k, s.b[k0*mm.n:], max(mm.n, 1), 0, p, max(mm.n, 1))
	}
}

func (mm *matmul) splitK(a, b, c, partials []float32) {
	s := splitKBodies.Get().(*splitKBody)
	s.mm, s.partials = mm, partials
	if mm.fold {
		s.rows, s.a, s.b, s.c = mm.m*mm.batches, a, b, c
		s.pass = 0
		par.For(mm.cuts, 1, mm.slots, s)
		s.pass = 1
		par.For(s.rows*mm.n, 1024, mm.slots, s)
	} else {
		s.rows = mm.m
		for i := 0; i < mm.batches; i++ {
			ao, bo := mm.batchOffsets(i)
			s.a, s.b, s.c = a[ao:], b[bo:], c[i*mm.m*mm.n:]
			s.pass = 0
			par.For(mm.cuts, 1, mm.slots, s)
			s.pass = 1
			par.For(s.rows*mm.n, 1024, mm.slots, s)
		}
	}
	*s = splitKBody{}
	splitKBodies.Put(s)
}

// naive is the integer (and float64) product, accumulated in int64 or float64.
func (mm *matmul) naive(a, b, c kernels.Tensor) {
	f := isFloat(mm.dt)
	for bi := 0; bi < mm.batches; bi++ {
		ao, bo := mm.batchOffsets(bi)
		co := bi * mm.m * mm.n
		for i := 0; i < mm.m; i++ {
			for j := 0; j < mm.n; j++ {
				if f {
					var s float64
					for l := 0; l < mm.k; l++ {
						s += loadF64(a, ao+i*mm.k+l) * loadF64(b, bo+l*mm.n+j)
					}
					storeF64(c, co+i*mm.n+j, s)
				} else {
					var s int64
					for l := 0; l < mm.k; l++ {
						s += loadI64(a, ao+i*mm.k+l) * loadI64(b, bo+l*mm.n+j)
					}
					storeI64(c, co+i*mm.n+j, s)
				}
			}
		}
	}
}

// gemmOp is Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to (M, N).
type gemmOp struct {
	m, n, k        int
	transA, transB bool
	alpha, beta    float32
	c              *bplan
}

func selectGemm(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := arity(n, 2, 3, 1, 1); err != nil {
		return plan{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a.DType != graph.Float32 || b.DType != graph.Float32 || len(a.Shape) != 2 || len(b.Shape) != 2 {
		return plan{}, fmt.Errorf("Gemm of %v and %v: want 2-D float32", a, b)
	}
	at := n.Attrs
	g := &gemmOp{transA: at.Int("transA", 0) != 0, transB: at.Int("transB", 0) != 0, alpha: at.Float("alpha", 1), beta: at.Float("beta", 1)}
	m, k := a.Shape[0], a.Shape[1]
	if g.transA {
		m, k = k, m
	}
	kb, nn := b.Shape[0], b.Shape[1]
	if g.transB {
		kb, nn = nn, kb
	}
	if kb != k {
		return plan{}, fmt.Errorf("inner dims differ: %v x %v", a.Shape, b.Shape)
	}
	g.m, g.n, g.k = int(m), int(nn), int(k)
	if err := checkOut(n, 0, graph.Float32, []int64{m, nn}); err != nil {
		return plan{}, err
	}
	if c, ok := n.Input(2); ok {
		if c.DType != graph.Float32 {
			return plan{}, fmt.Errorf("C is %v", c.DType)
		}
		p, err := newBPlan([]int64{m, nn}, c.Shape)
		if err != nil {
			return plan{}, fmt.Errorf("C: %w", err)
		}
		g.c = &p
	}
	return plan{tactic: "gemm", r: g}, nil
}

func (g *gemmOp) run(in, out []kernels.Tensor, _ wsParts) error {
	y := out[0].Float32s()
	beta := float32(0)
	if g.c != nil && g.beta != 0 {
		beta = 1
		expandLoop(g.c, in[2].Float32s(), y)
		if g.beta != 1 {
			for i := range y {
				y[i] *= g.beta
			}
		}
	}
	if g.m == 0 || g.n == 0 {
		return nil
	}
	if g.k == 0 {
		if beta == 0 {
			clear(y)
		}
		return nil
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	lda, ldb := max(g.k, 1), max(g.n, 1)
	if g.transA {
		tA, lda = blas.Trans, max(g.m, 1)
	}
	if g.transB {
		tB, ldb = blas.Trans, max(g.k, 1)
	}
	blasImpl.Sgemm(tA, tB, g.m, g.n, g.k, g.alpha, in[0].Float32s(), lda, in[1].Float32s(), ldb, beta, y, g.n)
	return nil
}

func matmulOps() []*op {
	return []*op{
		{key: kernels.Key("", "MatMul"), sel: selectMatMul, bound: boundMatMul, tactics: []kernels.TacticInfo{
			{Name: "gemm", Summary: "gonum Sgemm per batch (parallel over 64x64 blocks of C)"},
			{Name: "splitk", Summary: "K cut into chunks computed in parallel into workspace partials, then summed; for small M*N and long K", Workspace: true},
			{Name: "f16-convert", Summary: "16-bit operands converted to float32 in workspace, then gemm", Workspace: true},
			{Name: "naive", Summary: "integer and float64 triple loop"},
		}},
		{key: kernels.Key("", "Gemm"), sel: selectGemm, tactics: []kernels.TacticInfo{{Name: "gemm", Summary: "gonum Sgemm with transposes, alpha and beta"}}},
	}
}
