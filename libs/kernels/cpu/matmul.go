package cpu

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
)

// The float32 products run on package gemm (cache-blocked, assembly micro-kernels, parallel
// over tiles of C on the worker pool). Its workspace is one recipe part, "gemm", sized with
// gemm.Workspace so that it grows with every dim and a bound at a range's largest shapes
// covers the range.

// gemmPart is the recipe part of a product's workspace, none when it needs none.
func gemmPart(floats int64) []alloc.Part {
	if floats <= 0 {
		return nil
	}
	return []alloc.Part{{Name: "gemm", Size: floats * 4}}
}

// matmulFloats is the gemm workspace of a MatMul: one product of m*batches rows when A's
// batches fold into rows; else the larger of per-batch products run one after another (each
// parallel) and run side by side (each on one participant).
func matmulFloats(m, n, k, batches int64, fold bool, workers int) int64 {
	if fold {
		return gemm.Workspace(m*batches, n, k, gemm.RowMajor, workers)
	}
	seq := gemm.Workspace(m, n, k, gemm.RowMajor, workers)
	side := min(int64(workers), batches) * gemm.Workspace(m, n, k, gemm.RowMajor, 1)
	return max(seq, side)
}

// matmulDims resolves numpy matmul semantics for shapes a and b: the matrix dims, the batch
// shapes and the output shape.
func matmulDims(a, b []int64) (m, k, n int64, aBatch, bBatch, out []int64, err error) {
	g, err := kernels.MatMulShapes(a, b)
	if err != nil {
		return 0, 0, 0, nil, nil, nil, err
	}
	return g.M, g.K, g.N, g.ABatch, g.BBatch, g.Out, nil
}

// matmul is MatMul. Tactics: "gemm" for float32 (one product with A's batches folded into its
// rows when B is shared; else per-batch products, side by side when each is too small to split),
// "f16-convert" for 16-bit floats (operands converted to float32 in workspace, then gemm), and
// "naive" for integers.
type matmul struct {
	tactic     string
	dt         graph.DType
	m, n, k    int
	batches    int
	bp         bplan // broadcast of the operands' batch dims to the output's (see batchOffsets)
	fold       bool  // one product with M*batches rows: B is shared and A's batches are contiguous
	plan       gemm.Plan
	side       bool // per-batch products side by side, each on one participant
	hasWS      bool // the recipe has a "gemm" part
	workers    int
	aLen, bLen int
}

func selectMatMul(n *kernels.Node, d kernels.Target) (plan, error) {
	g, err := kernels.CheckMatMul(n)
	if err != nil {
		return plan{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	m, k, nn, aBatch, bBatch, out := g.M, g.K, g.N, g.ABatch, g.BBatch, g.Out
	mm := &matmul{dt: a.DType, m: int(m), n: int(nn), k: int(k), workers: d.Workers, aLen: numel(a.Shape), bLen: numel(b.Shape)}
	batch, _ := kernels.BroadcastShapes(aBatch, bBatch)
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
	case a.DType == graph.Float32 || a.DType == graph.Float16 || a.DType == graph.BFloat16:
		mm.tactic = "gemm"
		if mm.fold {
			mm.plan = gemm.NewPlan(mm.m*mm.batches, mm.n, mm.k, gemm.RowMajor, d.Workers)
		} else {
			mm.plan = gemm.NewPlan(mm.m, mm.n, mm.k, gemm.RowMajor, d.Workers)
			mm.side = mm.plan.Slots == 1 && mm.batches > 1
		}
		parts = gemmPart(matmulFloats(m, nn, k, int64(mm.batches), mm.fold, d.Workers))
		mm.hasWS = len(parts) > 0
		if a.DType != graph.Float32 {
			mm.tactic = "f16-convert"
			f16, err := f16Parts(a.Shape, b.Shape, out)
			if err != nil {
				return plan{}, err
			}
			parts = append(f16, parts...)
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
	tactic := "gemm"
	var parts []alloc.Part
	switch a.DType {
	case graph.Float16, graph.BFloat16:
		_, _, _, _, _, out, err := matmulDims(his(a), his(b))
		if err != nil {
			return kernels.Bound{}, err
		}
		if parts, err = f16Parts(his(a), his(b), out); err != nil {
			return kernels.Bound{}, err
		}
		tactic = "f16-convert"
	case graph.Float32:
	default:
		return kernels.Bound{}, nil
	}
	mHi := int64(1)
	if len(a.Dims) > 1 {
		mHi = dimFromEnd(a, 2).Hi
	}
	nHi := int64(1)
	if len(b.Dims) > 1 {
		nHi = dimFromEnd(b, 1).Hi
	}
	kHi := dimFromEnd(a, 1).Hi
	// Batches at their largest: A's alone when folded, the broadcast of both when not.
	aBatches, batches := int64(1), int64(1)
	ab, bb := a.Dims[:max(len(a.Dims)-2, 0)], b.Dims[:max(len(b.Dims)-2, 0)]
	foldAlways, foldNever := true, false
	for _, dr := range bb {
		foldAlways = foldAlways && dr.Hi == 1
		foldNever = foldNever || dr.Lo > 1
	}
	for i := 1; i <= max(len(ab), len(bb)); i++ {
		ah, bh := int64(1), int64(1)
		if i <= len(ab) {
			ah = ab[len(ab)-i].Hi
		}
		if i <= len(bb) {
			bh = bb[len(bb)-i].Hi
		}
		var err error
		if aBatches, err = kernels.Product(aBatches, ah); err != nil {
			return kernels.Bound{}, err
		}
		if batches, err = kernels.Product(batches, max(ah, bh)); err != nil {
			return kernels.Bound{}, err
		}
	}
	var floats int64
	if !foldNever {
		if _, err := kernels.Product(mHi, aBatches, 4); err != nil {
			return kernels.Bound{}, err
		}
		floats = max(floats, matmulFloats(mHi, nHi, kHi, aBatches, true, d.Workers))
	}
	if !foldAlways {
		floats = max(floats, matmulFloats(mHi, nHi, kHi, batches, false, d.Workers))
	}
	return recipeBound(tactic, append(parts, gemmPart(floats)...))
}

func (mm *matmul) run(in, out []kernels.Tensor, ws wsParts) error {
	switch mm.tactic {
	case "gemm":
		mm.gemm(in[0].Float32s(), in[1].Float32s(), out[0].Float32s(), mm.gemmWS(ws, 0))
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
		mm.gemm(a32, b32, y32[:len(y)], mm.gemmWS(ws, 3))
		for i := range y {
			y[i] = store(y32[i])
		}
	default:
		mm.naive(in[0], in[1], out[0])
	}
	return nil
}

// gemmWS is the "gemm" part of the workspace, part i when the recipe has it.
func (mm *matmul) gemmWS(ws wsParts, i int) []float32 {
	if !mm.hasWS {
		return nil
	}
	return kernels.ViewAs[float32](ws.bytes(i))
}

// sideBody runs per-batch products side by side, each on one participant with its own part
// of the workspace.
type sideBody struct {
	mm      *matmul
	a, b, c []float32
	ws      []float32
}

var sideBodies par.Pool[sideBody]

func (g *sideBody) Do(slot, lo, hi int) {
	mm := g.mm
	per := mm.plan.WorkspaceFloats()
	ws := g.ws[slot*per : (slot+1)*per]
	for i := lo; i < hi; i++ {
		ao, bo := mm.batchOffsets(i)
		mm.plan.Run(gemm.Mat{Data: g.a[ao:], Ld: mm.k}, gemm.Mat{Data: g.b[bo:], Ld: mm.n}, nil, g.c[i*mm.m*mm.n:], mm.n, 1, false, ws)
	}
}

func (mm *matmul) gemm(a, b, c, ws []float32) {
	switch {
	case mm.batches == 0 || mm.m == 0 || mm.n == 0:
	case mm.fold:
		mm.plan.Run(gemm.Mat{Data: a, Ld: mm.k}, gemm.Mat{Data: b, Ld: mm.n}, nil, c, mm.n, 1, false, ws)
	case mm.side:
		g := sideBodies.Get()
		*g = sideBody{mm: mm, a: a, b: b, c: c, ws: ws}
		par.For(mm.batches, 1, mm.workers, g)
		*g = sideBody{}
		sideBodies.Put(g)
	default:
		for i := 0; i < mm.batches; i++ {
			ao, bo := mm.batchOffsets(i)
			mm.plan.Run(gemm.Mat{Data: a[ao:], Ld: mm.k}, gemm.Mat{Data: b[bo:], Ld: mm.n}, nil, c[i*mm.m*mm.n:], mm.n, 1, false, ws)
		}
	}
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
	plan           gemm.Plan
	hasWS          bool
	workers        int
}

func gemmLayout(transB bool) gemm.Layout {
	if transB {
		return gemm.Transposed
	}
	return gemm.RowMajor
}

func selectGemm(n *kernels.Node, d kernels.Target) (plan, error) {
	gg, err := kernels.CheckGemm(n)
	if err != nil {
		return plan{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a.DType == graph.Float16 || a.DType == graph.BFloat16 {
		return selectGemm16(n, d)
	}
	if a.DType != graph.Float32 {
		return plan{}, fmt.Errorf("Gemm of %v and %v: want 2-D float32 (or 16-bit A*B + a bias row)", a, b)
	}
	g := &gemmOp{workers: d.Workers, transA: gg.TransA, transB: gg.TransB, alpha: gg.Alpha, beta: gg.Beta}
	m, k, nn := gg.M, gg.K, gg.N
	g.m, g.n, g.k = int(m), int(nn), int(k)
	if c, ok := n.Input(2); ok {
		p, err := newBPlan([]int64{m, nn}, c.Shape)
		if err != nil {
			return plan{}, fmt.Errorf("C: %w", err)
		}
		g.c = &p
	}
	g.plan = gemm.NewPlan(g.m, g.n, g.k, gemmLayout(g.transB), d.Workers)
	parts := gemmPart(gemm.Workspace(m, nn, k, gemmLayout(g.transB), d.Workers))
	g.hasWS = len(parts) > 0
	return plan{tactic: "gemm", parts: parts, r: g}, nil
}

// gemm16 is Gemm of float16 or bfloat16 operands in the form graph/rewrite makes of a linear
// layer, Y = A*B (+ a bias row C): MatMul's kernel computes the product (its f16-convert tactic,
// its workspace), then the bias is added in float32 and rounded once more, as the exported
// MatMul then Add compute it.
type gemm16 struct {
	mm   runner
	bias bool
	bf   bool
}

func selectGemm16(n *kernels.Node, d kernels.Target) (plan, error) {
	a, b := n.Inputs[0], n.Inputs[1]
	at := n.Attrs
	c, hasC := n.Input(2)
	if at.Int("transA", 0) != 0 || at.Int("transB", 0) != 0 || at.Float("alpha", 1) != 1 ||
		hasC && (at.Float("beta", 1) != 1 || c.DType != a.DType || len(b.Shape) != 2 || !isRow(c.Shape, int(b.Shape[1]))) {
		return plan{}, fmt.Errorf("Gemm of %v operands: only A*B plus an optional bias row of B's columns (beta 1, no transposes) is supported; want float32 for the rest", a.DType)
	}
	mn := kernels.Node{Name: n.Name, Op: "MatMul", Inputs: []kernels.Value{a, b}, Outputs: n.Outputs}
	p, err := selectMatMul(&mn, d)
	if err != nil {
		return plan{}, err
	}
	p.r = &gemm16{mm: p.r, bias: hasC, bf: a.DType == graph.BFloat16}
	return p, nil
}

func (g *gemm16) run(in, out []kernels.Tensor, ws wsParts) error {
	if err := g.mm.run(in[:2], out, ws); err != nil {
		return err
	}
	if !g.bias {
		return nil
	}
	y, c := kernels.ViewAs[uint16](out[0].Data), kernels.ViewAs[uint16](in[2].Data)
	y = y[:numel(out[0].Shape)]
	if len(c) == 0 {
		return nil
	}
	for i := range y {
		y[i] = st[uint16](ld(y[i], g.bf)+ld(c[i%len(c)], g.bf), g.bf)
	}
	return nil
}

// boundGemm bounds Gemm's workspace: the product at its largest dims (16-bit: MatMul's bound).
func boundGemm(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	a, okA := r.Input(0)
	b, okB := r.Input(1)
	if !okA || !okB || len(a.Dims) != 2 || len(b.Dims) != 2 {
		return kernels.Bound{}, fmt.Errorf("Gemm needs two 2-D inputs")
	}
	if a.DType == graph.Float16 || a.DType == graph.BFloat16 {
		mr := *r
		mr.Op, mr.Inputs = "MatMul", r.Inputs[:2]
		return boundMatMul(&mr, d)
	}
	transA, transB := r.Attrs.Int("transA", 0) != 0, r.Attrs.Int("transB", 0) != 0
	m, k := a.Dims[0].Hi, a.Dims[1].Hi
	if transA {
		m, k = k, m
	}
	nn := b.Dims[1].Hi
	if transB {
		nn = b.Dims[0].Hi
	}
	return recipeBound("gemm", gemmPart(gemm.Workspace(m, nn, k, gemmLayout(transB), d.Workers)))
}

func (g *gemmOp) run(in, out []kernels.Tensor, ws wsParts) error {
	y := out[0].Float32s()
	acc := false
	var bias []float32 // a bias row, the common C: set tile by tile by the product (RunBias)
	if g.c != nil && g.beta != 0 {
		acc = true
		if c := in[2]; isRow(c.Shape, g.n) && g.beta == 1 && g.m > 0 {
			bias = c.Float32s()[:g.n]
		} else if isRow(c.Shape, g.n) {
			addRowsPar(y[:g.m*g.n], nil, c.Float32s()[:g.n], g.workers) // a bias row, the common C
		} else {
			expandLoop(g.c, c.Float32s(), y)
		}
		if g.beta != 1 {
			for i := range y {
				y[i] *= g.beta
			}
		}
	}
	if g.m == 0 || g.n == 0 {
		return nil
	}
	a := gemm.Mat{Data: in[0].Float32s(), Ld: max(g.k, 1), Trans: g.transA}
	if g.transA {
		a.Ld = max(g.m, 1)
	}
	b := gemm.Mat{Data: in[1].Float32s(), Ld: max(g.n, 1), Trans: g.transB}
	if g.transB {
		b.Ld = max(g.k, 1)
	}
	var w []float32
	if g.hasWS {
		w = kernels.ViewAs[float32](ws.bytes(0))
	}
	if bias != nil {
		g.plan.RunBias(a, b, nil, bias, y, g.n, g.alpha, w)
		return nil
	}
	g.plan.Run(a, b, nil, y, g.n, g.alpha, acc, w)
	return nil
}

// isRow reports whether shape is a row of n that broadcasts over a matrix's rows: [n] or [1, n].
func isRow(shape []int64, n int) bool {
	return n > 0 && (len(shape) == 1 && shape[0] == int64(n) || len(shape) == 2 && shape[0] == 1 && shape[1] == int64(n))
}

func matmulOps() []*op {
	return []*op{
		{key: kernels.Key("", "MatMul"), sel: selectMatMul, bound: boundMatMul, tactics: []kernels.TacticInfo{
			{Name: "gemm", Summary: "cache-blocked float32 product (assembly micro-kernels), parallel over tiles of C or over batches; edge panels in workspace", Workspace: true},
			{Name: "f16-convert", Summary: "16-bit operands converted to float32 in workspace, then gemm", Workspace: true},
			{Name: "naive", Summary: "integer and float64 triple loop"},
		}},
		{key: kernels.Key("", "Gemm"), sel: selectGemm, bound: boundGemm, tactics: []kernels.TacticInfo{
			{Name: "gemm", Summary: "cache-blocked float32 product with transposes, alpha and beta; packed panels in workspace", Workspace: true},
			{Name: "f16-convert", Summary: "16-bit A*B plus a bias row: MatMul's f16-convert, then the bias added", Workspace: true}}},
	}
}
