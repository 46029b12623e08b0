package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
)

// moe is com.microsoft.MoE, onnxruntime's mixture of experts (kernels.CheckMoE reads the node),
// in float32, float16 or bfloat16 (every intermediate float32, the output rounded once).
//
// Tactic "grouped":
//  1. routing, parallel over rows: the softmax of the row's logits in float32 (the maximum
//     subtracted, the exponentials summed in expert order, as onnxruntime computes it), the K
//     experts of the highest (probability, index) pairs (onnxruntime's partial_sort with
//     std::greater: ties go to the larger index, NaN ranks lowest), weighted by their
//     probabilities, over their sum (in rank order) with normalize_routing_weights; a row's
//     routes are stored in ascending expert order;
//  2. a counting sort of the routes of positive weight by expert (serial, routes + experts
//     steps): each expert's routes in ascending row order;
//  3. expert by expert, in ascending order: its rows gathered into "x" as float32, fc1 (and fc3)
//     by package gemm into "h" (and "h3"), the activation in place in "h" (biases added first),
//     fc2 into "x", then out[row] += weight * (y + b2) in float32, into the output (float32)
//     or "acc" (16-bit types). A row's routes are summed in ascending expert order, as
//     onnxruntime's CPU kernel on one thread sums them;
//  4. 16-bit types: the output rounded once from "acc".
//
// The gathers, activations and sums are parallel over rows, the products over tiles (package
// gemm); results do not depend on the worker count. float32 weights in the [out, in] layout are
// the products' transposed B, packed panel by panel as Gemm with transB packs them; float32
// weights in the legacy [in, out] layout are read in place; 16-bit weights are converted to
// float32 straight into the packed panels (a gemm.Source), so no float32 copy of a weight exists.
//
// Workspace (all float32 or int32): "routing" (probabilities [Rows, Experts], each route's
// expert and weight [Rows*K], the routes by expert [Rows*K] and the experts' offsets
// [Experts+1]), "x" [Rows, Hidden], "h" [Rows, FC1Out], "h3" [Rows, Inter] with fc3, "acc"
// [Rows, Hidden] for 16-bit types, and "gemm" (the largest product's packing at Rows rows). An
// expert takes at most Rows routes (a row's K experts are distinct), so the per-expert buffers
// hold Rows rows, and every part grows with every size: the bound is the recipe at a range's
// largest sizes.
type moe struct {
	m       kernels.MoE
	bf      bool // bfloat16, when m.DType is 16-bit
	layout  gemm.Layout
	parts   moePartIndex
	workers int
}

// moePartIndex is each part's index in the recipe, -1 for an absent one.
type moePartIndex struct{ routing, x, h, h3, acc, gemm int }

// moeGemmLayout is B's layout in the products: 16-bit weights come from a Source, float32 ones
// are read in place, transposed ([out, in]) or row-major (legacy [in, out]).
func moeGemmLayout(m kernels.MoE) gemm.Layout {
	switch {
	case m.DType != graph.Float32:
		return gemm.Custom
	case m.Legacy:
		return gemm.RowMajor
	}
	return gemm.Transposed
}

// moeRecipe is the grouped tactic's workspace for m with the products' B in each of layouts (the
// largest of their needs; Bound passes both float32 layouts when the range does not fix one).
func moeRecipe(m kernels.MoE, workers int, layouts ...gemm.Layout) ([]alloc.Part, moePartIndex, error) {
	at := moePartIndex{-1, -1, -1, -1, -1, -1}
	if m.Rows == 0 {
		return nil, at, nil
	}
	r := m.Routes()
	routing, err := kernels.Product(4, m.Rows, m.Experts)
	if err != nil {
		return nil, at, err
	}
	rest, err := kernels.Product(4, 3*r+m.Experts+1)
	if err != nil {
		return nil, at, err
	}
	var parts []alloc.Part
	add := func(idx *int, name string, size int64) {
		*idx = len(parts)
		parts = append(parts, alloc.Part{Name: name, Size: size})
	}
	add(&at.routing, "routing", routing+rest)
	for _, p := range []struct {
		idx  *int
		name string
		cols int64
		on   bool
	}{
		{&at.x, "x", m.Hidden, true},
		{&at.h, "h", m.FC1Out, true},
		{&at.h3, "h3", m.Inter, m.FC3},
		{&at.acc, "acc", m.Hidden, m.DType != graph.Float32},
	} {
		if !p.on {
			continue
		}
		part, err := f32Part(p.name, m.Rows, p.cols)
		if err != nil {
			return nil, at, err
		}
		add(p.idx, part.Name, part.Size)
	}
	var floats int64
	for _, l := range layouts {
		floats = max(floats, gemm.Workspace(m.Rows, m.FC1Out, m.Hidden, l, workers), gemm.Workspace(m.Rows, m.Hidden, m.Inter, l, workers))
		if m.FC3 {
			floats = max(floats, gemm.Workspace(m.Rows, m.Inter, m.Hidden, l, workers))
		}
	}
	if floats > 0 {
		if _, err := kernels.Product(floats, 4); err != nil {
			return nil, at, err
		}
		add(&at.gemm, "gemm", floats*4)
	}
	return parts, at, nil
}

func selectMoE(n *kernels.Node, d kernels.Target) (plan, error) {
	m, err := kernels.CheckMoE(n)
	if err != nil {
		return plan{}, err
	}
	if !halfOK(m.DType) {
		return plan{}, fmt.Errorf("input is %v; the CPU kernel takes float32, float16 or bfloat16", m.DType)
	}
	x := &moe{m: m, bf: m.DType == graph.BFloat16, layout: moeGemmLayout(m), workers: d.Workers}
	parts, at, err := moeRecipe(m, d.Workers, x.layout)
	if err != nil {
		return plan{}, err
	}
	x.parts = at
	return plan{tactic: "grouped", parts: parts, r: x}, nil
}

func boundMoE(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	m, exact, err := kernels.MoEBound(r)
	if err != nil {
		return kernels.Bound{}, err
	}
	layouts := []gemm.Layout{moeGemmLayout(m)}
	if !exact && m.DType == graph.Float32 {
		layouts = []gemm.Layout{gemm.Transposed, gemm.RowMajor}
	}
	parts, _, err := moeRecipe(m, d.Workers, layouts...)
	if err != nil {
		return kernels.Bound{}, err
	}
	return recipeBound("grouped", parts)
}

// Phases of a run that go over the pool (moeRun.runRange).
const (
	moeRoute   = iota // rows: softmax and top-k
	moeClear          // chunks of parGrainElems of the float32 sums
	moeGather         // the expert's rows into "x"
	moeAct            // the expert's rows of "h": biases and activation
	moeAdd            // the expert's rows: out += weight * (y + b2)
	moeConvert        // chunks of parGrainElems: the 16-bit output from "acc"
)

// moeRun is one run's state, handed to runRanges as its rangeRunner (a pooled struct, so that
// nothing allocates).
type moeRun struct {
	x     *moe
	phase int
	// routing
	probs []float32
	rexp  []int32 // each route's expert, the row's routes in ascending expert order
	rw    []float32
	order []int32 // the routes by expert
	off   []int32 // expert e's routes are order[off[e]:off[e+1]]
	// per-expert buffers and the float32 sums
	xs, h, h3, acc []float32
	// the expert being run, and its routes
	e      int
	routes []int32
	src    moeSource
}

var moeRuns par.Pool[moeRun]

// moeSource supplies a 16-bit weight matrix's columns as float32 (the products' B).
type moeSource struct {
	w      []uint16 // one expert's matrix
	ld     int      // its row length: in for [out, in], out for the legacy [in, out]
	legacy bool
	bf     bool
}

// Col writes B[k0 : k0+len(dst), j]: row j of an [out, in] matrix, column j of an [in, out] one.
func (s *moeSource) Col(dst []float32, j, k0 int) {
	if !s.legacy {
		for i, v := range s.w[j*s.ld+k0:][:len(dst)] {
			dst[i] = ld(v, s.bf)
		}
		return
	}
	for i := range dst {
		dst[i] = ld(s.w[(k0+i)*s.ld+j], s.bf)
	}
}

func (x *moe) run(in, out []kernels.Tensor, ws wsParts) error {
	m := &x.m
	if m.Rows == 0 {
		return nil
	}
	rows, e, k, hid := int(m.Rows), int(m.Experts), int(m.K), int(m.Hidden)
	routes := rows * k
	run := moeRuns.Get()
	defer func() { *run = moeRun{}; moeRuns.Put(run) }()
	run.x = x
	rb := ws.bytes(x.parts.routing)
	run.probs = kernels.ViewAs[float32](rb)[:rows*e]
	rb = rb[4*rows*e:]
	run.rexp = kernels.ViewAs[int32](rb)[:routes]
	run.rw = kernels.ViewAs[float32](rb[4*routes:])[:routes]
	run.order = kernels.ViewAs[int32](rb[8*routes:])[:routes]
	run.off = kernels.ViewAs[int32](rb[12*routes:])[:e+1]
	run.xs = kernels.ViewAs[float32](ws.bytes(x.parts.x))
	run.h = kernels.ViewAs[float32](ws.bytes(x.parts.h))
	if x.parts.h3 >= 0 {
		run.h3 = kernels.ViewAs[float32](ws.bytes(x.parts.h3))
	}
	if x.parts.acc >= 0 {
		run.acc = kernels.ViewAs[float32](ws.bytes(x.parts.acc))[:rows*hid]
	} else {
		run.acc = out[0].Float32s()[:rows*hid]
	}
	var gws []float32
	if x.parts.gemm >= 0 {
		gws = kernels.ViewAs[float32](ws.bytes(x.parts.gemm))
	}

	run.phase = moeRoute
	runRanges(run, in, out, rows, e*k, weightTranscendental, x.workers)
	x.sortRoutes(run)
	chunks := (rows*hid + parGrainElems - 1) / parGrainElems
	run.phase = moeClear
	runRanges(run, in, out, chunks, parGrainElems, weightPlain, x.workers)

	fc1Out, inter := int(m.FC1Out), int(m.Inter)
	for ex := 0; ex < e; ex++ {
		lo, hi := run.off[ex], run.off[ex+1]
		if lo == hi {
			continue
		}
		c := int(hi - lo)
		run.e, run.routes = ex, run.order[lo:hi]
		run.phase = moeGather
		runRanges(run, in, out, c, hid, weightPlain, x.workers)
		a := gemm.Mat{Data: run.xs[:c*hid], Ld: hid}
		x.product(run, in[2], ex, a, run.h[:c*fc1Out], c, fc1Out, hid, gws)
		if m.FC3 {
			x.product(run, in[6], ex, a, run.h3[:c*inter], c, inter, hid, gws)
		}
		run.phase = moeAct
		runRanges(run, in, out, c, inter, weightTranscendental, x.workers)
		x.product(run, in[4], ex, gemm.Mat{Data: run.h[:(c-1)*fc1Out+inter], Ld: fc1Out}, run.xs[:c*hid], c, hid, inter, gws)
		run.phase = moeAdd
		runRanges(run, in, out, c, hid, weightPlain, x.workers)
	}
	if x.parts.acc >= 0 {
		run.phase = moeConvert
		runRanges(run, in, out, chunks, parGrainElems, weightPlain, x.workers)
	}
	return nil
}

// product computes c = a * W[ex]^T for rows rows of a and expert ex's matrix of w ([n, kk] in the
// current layout, [kk, n] in the legacy one): c is rows x n, row-major.
func (x *moe) product(run *moeRun, w kernels.Tensor, ex int, a gemm.Mat, c []float32, rows, n, kk int, ws []float32) {
	p := gemm.NewPlan(rows, n, kk, x.layout, x.workers)
	size := n * kk
	var b gemm.Mat
	var src gemm.Source
	switch x.layout {
	case gemm.Transposed:
		b = gemm.Mat{Data: w.Float32s()[ex*size:][:size], Ld: kk, Trans: true}
	case gemm.RowMajor:
		b = gemm.Mat{Data: w.Float32s()[ex*size:][:size], Ld: n}
	default:
		run.src = moeSource{w: w.Uint16s()[ex*size:][:size], ld: kk, legacy: x.m.Legacy, bf: x.bf}
		if x.m.Legacy {
			run.src.ld = n
		}
		src = &run.src
	}
	p.Run(a, b, src, c, n, 1, false, ws[:p.WorkspaceFloats()])
}

// sortRoutes orders the routes of positive weight by expert (a counting sort, stable: each
// expert's routes in ascending order), into run.order and run.off.
func (x *moe) sortRoutes(run *moeRun) {
	off := run.off
	clear(off)
	for r, w := range run.rw {
		if w > 0 {
			off[run.rexp[r]+1]++
		}
	}
	for i := 1; i < len(off); i++ {
		off[i] += off[i-1]
	}
	for r, w := range run.rw {
		if w > 0 {
			e := run.rexp[r]
			run.order[off[e]] = int32(r)
			off[e]++
		}
	}
	copy(off[1:], off[:len(off)-1]) // off[e] is now e's end, which is e+1's start
	off[0] = 0
}

func (run *moeRun) runRange(in, out []kernels.Tensor, lo, hi int) {
	x := run.x
	switch run.phase {
	case moeRoute:
		if x.m.DType == graph.Float32 {
			moeRouteRows(run, in[1].Float32s(), lo, hi)
		} else {
			moeRouteRows(run, in[1].Uint16s(), lo, hi)
		}
	case moeClear:
		clear(run.acc[lo*parGrainElems : min(hi*parGrainElems, len(run.acc))])
	case moeGather:
		if x.m.DType == graph.Float32 {
			moeGatherRows(run, in[0].Float32s(), lo, hi)
		} else {
			moeGatherRows(run, in[0].Uint16s(), lo, hi)
		}
	case moeAct:
		if x.m.DType == graph.Float32 {
			moeActRows[float32](run, in, lo, hi)
		} else {
			moeActRows[uint16](run, in, lo, hi)
		}
	case moeAdd:
		if x.m.DType == graph.Float32 {
			moeAddRows[float32](run, in, lo, hi)
		} else {
			moeAddRows[uint16](run, in, lo, hi)
		}
	case moeConvert:
		y := out[0].Uint16s()
		for i := lo * parGrainElems; i < min(hi*parGrainElems, len(run.acc)); i++ {
			y[i] = st[uint16](run.acc[i], x.bf)
		}
	}
}

// moeAbove reports whether (p, i) ranks above (q, j) in the routing order: the higher
// probability, ties to the larger index, NaN below every number.
func moeAbove(p float32, i int, q float32, j int) bool {
	if pn, qn := p != p, q != q; pn || qn {
		if pn && qn {
			return i > j
		}
		return qn
	}
	return p > q || p == q && i > j
}

// moeRouteRows routes rows [lo, hi): their probabilities, the K experts of each and their
// weights, in ascending expert order.
func moeRouteRows[E elt](run *moeRun, logits []E, lo, hi int) {
	x := run.x
	e, k := int(x.m.Experts), int(x.m.K)
	for t := lo; t < hi; t++ {
		row := logits[t*e : (t+1)*e]
		p := run.probs[t*e : (t+1)*e]
		mx := ld(row[0], x.bf)
		for _, v := range row[1:] {
			if f := ld(v, x.bf); f > mx {
				mx = f
			}
		}
		var sum float32
		for j, v := range row {
			p[j] = float32(math.Exp(float64(ld(v, x.bf) - mx)))
			sum += p[j]
		}
		for j := range p {
			p[j] /= sum
		}
		ids, ws := run.rexp[t*k:(t+1)*k], run.rw[t*k:(t+1)*k]
		// the K best in rank order: each the best below the one before
		for r := range k {
			best := -1
			for j, v := range p {
				if r > 0 && !moeAbove(ws[r-1], int(ids[r-1]), v, j) {
					continue
				}
				if best < 0 || moeAbove(v, j, p[best], best) {
					best = j
				}
			}
			ids[r], ws[r] = int32(best), p[best]
		}
		if x.m.Normalize {
			var s float32
			for _, w := range ws {
				s += w
			}
			for r := range ws {
				ws[r] /= s
			}
		}
		for r := 1; r < k; r++ { // ascending expert order
			for q := r; q > 0 && ids[q] < ids[q-1]; q-- {
				ids[q], ids[q-1] = ids[q-1], ids[q]
				ws[q], ws[q-1] = ws[q-1], ws[q]
			}
		}
	}
}

// moeGatherRows copies the input rows of the expert's routes [lo, hi) into "x" as float32.
func moeGatherRows[E elt](run *moeRun, xin []E, lo, hi int) {
	x := run.x
	hid, k := int(x.m.Hidden), int(x.m.K)
	for i := lo; i < hi; i++ {
		t := int(run.routes[i]) / k
		dst, src := run.xs[i*hid:(i+1)*hid], xin[t*hid:(t+1)*hid]
		if s32, ok := any(src).([]float32); ok {
			copy(dst, s32)
			continue
		}
		for j, v := range src {
			dst[j] = ld(v, x.bf)
		}
	}
}

// moeActRows applies the biases and the activation to the expert's rows [lo, hi) of "h", in place:
// row i's first Inter elements become its activations.
func moeActRows[E elt](run *moeRun, in []kernels.Tensor, lo, hi int) {
	x := run.x
	m := &x.m
	fc1Out, inter, ex := int(m.FC1Out), int(m.Inter), run.e
	var b1, b3 []E
	if m.FC1Bias {
		b1 = kernels.ViewAs[E](in[3].Data)[ex*fc1Out:][:fc1Out]
	}
	if m.FC3Bias {
		b3 = kernels.ViewAs[E](in[7].Data)[ex*inter:][:inter]
	}
	bias := func(b []E, j int) float32 {
		if b == nil {
			return 0
		}
		return ld(b[j], x.bf)
	}
	for i := lo; i < hi; i++ {
		h := run.h[i*fc1Out:][:fc1Out]
		switch {
		case m.Act == kernels.MoESwiGLU:
			gi, li, step := 0, 1, 2 // interleaved
			if m.Fusion == 2 {
				gi, li, step = 0, inter, 1
			}
			for j := range inter {
				g, l := h[gi+j*step]+bias(b1, gi+j*step), h[li+j*step]+bias(b1, li+j*step)
				h[j] = moeSwiGLU(g, l, m.Alpha, m.Beta, m.Limit)
			}
		case m.FC3:
			h3 := run.h3[i*inter:][:inter]
			for j := range inter {
				h[j] = moeActivate(m.Act, h[j]+bias(b1, j)) * (h3[j] + bias(b3, j))
			}
		default:
			for j := range inter {
				h[j] = moeActivate(m.Act, h[j]+bias(b1, j))
			}
		}
	}
}

// moeActivate is the elementwise activation a, as onnxruntime's CPU kernel computes it.
func moeActivate(a kernels.MoEActivation, v float32) float32 {
	switch a {
	case kernels.MoERelu:
		if 0 < v {
			return v
		}
		return 0
	case kernels.MoEGelu:
		t := float32(math.Tanh(float64(0.7978845608 * (v + 0.044715*v*v*v))))
		return 0.5 * v * (1 + t)
	case kernels.MoESilu:
		return v * (1 / (1 + float32(math.Exp(float64(-v)))))
	}
	return v
}

// moeSwiGLU is swiglu of one (gate, linear) pair: the gate clamped above and the linear part on
// both sides by limit, then gate * sigmoid(alpha * gate) * (linear + beta), the sigmoid in
// onnxruntime's two-sided form.
func moeSwiGLU(g, l, alpha, beta, limit float32) float32 {
	g = min(g, limit)
	l = min(max(l, -limit), limit)
	a := alpha * g
	var s float32
	if a > 0 {
		s = 1 / (1 + float32(math.Exp(float64(-a))))
	} else {
		e := float32(math.Exp(float64(a)))
		s = e / (1 + e)
	}
	return g * s * (l + beta)
}

// moeAddRows adds the expert's rows [lo, hi) of y ("x"), plus fc2's bias, times their routes'
// weights into their rows' float32 sums.
func moeAddRows[E elt](run *moeRun, in []kernels.Tensor, lo, hi int) {
	x := run.x
	hid, k, ex := int(x.m.Hidden), int(x.m.K), run.e
	var b2 []E
	if x.m.FC2Bias {
		b2 = kernels.ViewAs[E](in[5].Data)[ex*hid:][:hid]
	}
	for i := lo; i < hi; i++ {
		r := int(run.routes[i])
		w, t := run.rw[r], r/k
		y, acc := run.xs[i*hid:(i+1)*hid], run.acc[t*hid:(t+1)*hid]
		if b2 == nil {
			for j, v := range y {
				acc[j] += w * v
			}
			continue
		}
		for j, v := range y {
			acc[j] += w * (v + ld(b2[j], x.bf))
		}
	}
}

func moeOps() []*op {
	return []*op{{key: kernels.Key(kernels.DomainMicrosoft, "MoE"), sel: selectMoE, bound: boundMoE,
		tactics: []kernels.TacticInfo{{Name: "grouped", Workspace: true,
			Summary: "softmax top-k routing, routes sorted by expert, each expert's rows gathered and run through its two products (package gemm) with the activation between, summed per row in float32"}}}}
}
