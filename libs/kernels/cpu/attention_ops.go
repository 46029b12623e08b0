package cpu

import (
	"fmt"
	"slices"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// dimsOf returns the dims of input i of a node or range as (lo, hi) pairs, so the same
// geometry code serves Select (lo == hi) and Bound.
type geomSrc interface {
	dims(i int) []kernels.DimRange // nil when absent
	outDims(i int) []kernels.DimRange
	attrs() graph.Attributes
}

type nodeSrc struct{ n *kernels.Node }

func (s nodeSrc) dims(i int) []kernels.DimRange {
	v, ok := s.n.Input(i)
	if !ok {
		return nil
	}
	return kernels.FixedValue(v).Dims
}

func (s nodeSrc) outDims(i int) []kernels.DimRange {
	v, ok := s.n.Output(i)
	if !ok {
		return nil
	}
	return kernels.FixedValue(v).Dims
}

func (s nodeSrc) attrs() graph.Attributes { return s.n.Attrs }

type rangeSrc struct{ r *kernels.NodeRange }

func (s rangeSrc) dims(i int) []kernels.DimRange {
	v, ok := s.r.Input(i)
	if !ok {
		return nil
	}
	return v.Dims
}

func (s rangeSrc) outDims(i int) []kernels.DimRange {
	v, ok := s.r.Output(i)
	if !ok {
		return nil
	}
	return v.Dims
}

func (s rangeSrc) attrs() graph.Attributes { return s.r.Attrs }

// attnDims is an attention node's geometry at its largest: what the recipe depends on.
type attnDims struct {
	b, s, nq, t, d, dv int64
	extra              []alloc.Part
	// proj is an input projection of m x k by k x n run before the core, whose gemm
	// workspace part follows extra's (none when m, n or k is 0).
	proj [3]int64 // op-specific parts, placed before the core's
}

// attnRecipe is the full recipe for geometry g.
func attnRecipe(g attnDims, workers int) ([]alloc.Part, error) {
	core, err := attnScratchParts(g.b, g.nq, g.s, g.t, g.d, g.dv, int64(workers))
	if err != nil {
		return nil, err
	}
	proj := gemmPart(gemm.Workspace(g.proj[0], g.proj[1], g.proj[2], gemm.RowMajor, workers))
	return slices.Concat(g.extra, proj, core), nil
}

// attnBound bounds an attention op over ranges: the recipe is monotone in every dim, so it is
// evaluated at the largest shapes for each tactic the key length's range can reach (the
// full tactic's T is capped below the split-kv threshold).
func attnBound(geom func(geomSrc, bool) (attnDims, error)) func(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	return func(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
		lo, err := geom(rangeSrc{r}, false)
		if err != nil {
			return kernels.Bound{}, err
		}
		hi, err := geom(rangeSrc{r}, true)
		if err != nil {
			return kernels.Bound{}, err
		}
		var best kernels.Bound
		if lo.t < splitKVMinT { // "full" reachable
			g := hi
			g.t = min(hi.t, splitKVMinT-1)
			parts, err := attnRecipe(g, max(d.Workers, 1))
			if err != nil {
				return kernels.Bound{}, err
			}
			b, err := recipeBound("full", parts)
			if err != nil {
				return kernels.Bound{}, err
			}
			best = best.Max(b)
		}
		if hi.t >= splitKVMinT { // "split-kv" reachable
			parts, err := attnRecipe(hi, max(d.Workers, 1))
			if err != nil {
				return kernels.Bound{}, err
			}
			b, err := recipeBound("split-kv", parts)
			if err != nil {
				return kernels.Bound{}, err
			}
			best = best.Max(b)
		}
		return best, nil
	}
}

func pick(d kernels.DimRange, hi bool) int64 {
	if hi {
		return d.Hi
	}
	return d.Lo
}

func f32Part(name string, dims ...int64) (alloc.Part, error) {
	sz, err := kernels.Product(append(dims, 4)...)
	return alloc.Part{Name: name, Size: sz}, err
}

// ---------------------------------------------------------------- com.microsoft.Attention

// attentionGeom: input [B, S, Hin], weights [Hin, Hq+Hk+Hv], past [2, B, N, P, D].
func attentionGeom(src geomSrc, hi bool) (attnDims, error) {
	x, w := src.dims(0), src.dims(1)
	if len(x) != 3 || len(w) != 2 {
		return attnDims{}, fmt.Errorf("input %d-D and weights %d-D, want 3-D and 2-D", len(x), len(w))
	}
	at := src.attrs()
	heads := at.Int("num_heads", 0)
	if heads <= 0 {
		return attnDims{}, fmt.Errorf("num_heads must be positive")
	}
	total := pick(w[1], hi)
	hq, hv := total/3, total/3
	if sz := at.Ints("qkv_hidden_sizes"); len(sz) == 3 {
		hq, hv = sz[0], sz[2]
	}
	g := attnDims{b: pick(x[0], hi), s: pick(x[1], hi), nq: heads, d: hq / heads, dv: hv / heads}
	g.t = g.s
	if p := src.dims(4); p != nil {
		if len(p) != 5 {
			return attnDims{}, fmt.Errorf("past has %d dims, want 5", len(p))
		}
		g.t += pick(p[3], hi)
	}
	part, err := f32Part("qkv", g.b, g.s, total)
	if err != nil {
		return attnDims{}, err
	}
	g.extra = []alloc.Part{part}
	g.proj = [3]int64{g.b * g.s, total, pick(x[2], hi)}
	return g, nil
}

type attention struct {
	core          attnCore
	hin           int
	hq, hk, hv    int
	p             int
	bias, present bool
	hasPast       bool
	proj          gemm.Plan
	projWS        bool // the recipe has the projection's gemm part
	workers       int
	// The fused run (attention_fused.go): whether, its loop's participants, the heads of a
	// task, and a task's projections (Q and K, V).
	fused         bool
	fusedParts    int
	fusedHeads    int
	projQK, projV gemm.Plan
}

func selectAttention(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckArity(n, 2, 7, 1, 2); err != nil {
		return plan{}, err
	}
	at := n.Attrs
	if at.Int("do_rotary", 0) != 0 || at.Int("past_present_share_buffer", 0) != 0 {
		return plan{}, fmt.Errorf("do_rotary and past_present_share_buffer are not supported")
	}
	if _, ok := n.Input(6); ok {
		return plan{}, fmt.Errorf("past_sequence_length is not supported")
	}
	x, w := n.Inputs[0], n.Inputs[1]
	if x.DType != graph.Float32 || w.DType != graph.Float32 || len(x.Shape) != 3 || len(w.Shape) != 2 || w.Shape[0] != x.Shape[2] {
		return plan{}, fmt.Errorf("input %v and weights %v, want float32 [B, S, H] and [H, 3H']", x, w)
	}
	g, err := attentionGeom(nodeSrc{n}, true)
	if err != nil {
		return plan{}, err
	}
	a := &attention{hin: int(x.Shape[2]), workers: d.Workers}
	total := int(w.Shape[1])
	a.hq, a.hk, a.hv = total/3, total/3, total/3
	if sz := at.Ints("qkv_hidden_sizes"); sz != nil {
		if len(sz) != 3 {
			return plan{}, fmt.Errorf("qkv_hidden_sizes %v", sz)
		}
		a.hq, a.hk, a.hv = int(sz[0]), int(sz[1]), int(sz[2])
	}
	heads := int(g.nq)
	if a.hq+a.hk+a.hv != total || a.hq != a.hk || a.hq%heads != 0 || a.hv%heads != 0 {
		return plan{}, fmt.Errorf("hidden sizes %d/%d/%d do not fit weights %v and %d heads", a.hq, a.hk, a.hv, w.Shape, heads)
	}
	c := &a.core
	c.b, c.s, c.nq, c.nkv, c.d, c.dv = int(g.b), int(g.s), heads, heads, a.hq/heads, a.hv/heads
	c.t = int(g.t)
	c.scale = attnScale(at, c.d)
	c.filter = at.Float("mask_filter_value", -10000)
	c.causalAdd = at.Int("unidirectional", 0) != 0
	if b, ok := n.Input(2); ok {
		if b.DType != graph.Float32 || numel(b.Shape) != total {
			return plan{}, fmt.Errorf("bias %v, want float32[%d]", b, total)
		}
		a.bias = true
	}
	if m, ok := n.Input(3); ok {
		if m.DType != graph.Int32 {
			return plan{}, fmt.Errorf("mask_index is %v, want int32", m.DType)
		}
		if c.mask, err = newKeyMask(m, int64(c.b), int64(c.s), int64(c.t)); err != nil {
			return plan{}, err
		}
		c.hasMask = true
	}
	if p, ok := n.Input(4); ok {
		want := []int64{2, int64(c.b), int64(heads), p.Shape[3], int64(c.d)}
		if p.DType != graph.Float32 || !slices.Equal(p.Shape, want) || a.hv != a.hq {
			return plan{}, fmt.Errorf("past %v, want float32%v (and equal Q/K/V sizes)", p, want)
		}
		a.p, a.hasPast = int(p.Shape[3]), true
	}
	if ab, ok := n.Input(5); ok {
		if err := c.checkBias(ab); err != nil {
			return plan{}, err
		}
	}
	if err := kernels.CheckOutput(n, 0, graph.Float32, []int64{int64(c.b), int64(c.s), int64(a.hv)}); err != nil {
		return plan{}, err
	}
	if _, ok := n.Output(1); ok {
		if a.hv != a.hq {
			return plan{}, fmt.Errorf("present needs equal Q/K/V hidden sizes")
		}
		if err := kernels.CheckOutput(n, 1, graph.Float32, []int64{2, int64(c.b), int64(heads), int64(c.t), int64(c.d)}); err != nil {
			return plan{}, err
		}
		a.present = true
	}
	c.setTactic(d.Workers)
	parts, err := attnRecipe(g, d.Workers)
	if err != nil {
		return plan{}, err
	}
	a.proj = gemm.NewPlan(c.b*c.s, total, a.hin, gemm.RowMajor, d.Workers)
	a.projWS = len(gemmPart(gemm.Workspace(g.proj[0], g.proj[1], g.proj[2], gemm.RowMajor, d.Workers))) > 0
	a.planFused(d.Workers)
	return plan{tactic: c.tactic, parts: parts, r: a}, nil
}

func (a *attention) run(in, out []kernels.Tensor, ws wsParts) error {
	c := &a.core
	total := a.hq + a.hk + a.hv
	qkv := kernels.ViewAs[float32](ws.bytes(0))[:c.b*c.s*total]
	var pw []float32
	if a.projWS {
		pw = kernels.ViewAs[float32](ws.bytes(1))
		ws = ws.skip(1)
	}
	ws = ws.skip(1) // the core's parts
	run := attnRuns.Get()
	defer func() { *run = attnRun{}; attnRuns.Put(run) }()
	run.c = c
	run.curLen = c.s
	if a.hasPast {
		past := in[4].Float32s()
		half := c.b * c.nq * a.p * c.d
		run.past, run.pastV = bnsh(past[:half], c.nq, a.p, c.d), bnsh(past[half:2*half], c.nq, a.p, c.d)
		run.pastLen = a.p
	}
	run.o = bsnh(out[0].Float32s(), 0, c.s, a.hv, c.dv)
	if c.hasMask {
		run.mask = in[3].Int32s()
	}
	if c.hasBias {
		run.bias = in[5].Float32s()
	}
	if a.fused {
		f := fusedRuns.Get()
		*f = fusedAttn{a: a, r: run, x: in[0].Float32s(), w: in[1].Float32s(), qkv: qkv}
		if a.bias {
			f.bias = in[2].Float32s()[:total]
		}
		if a.present {
			f.present = out[1].Float32s()
		}
		run.scratch = kernels.ViewAs[float32](ws.bytes(0))
		par.For(c.b*c.nq/a.fusedHeads, 1, a.fusedParts, f)
		*f = fusedAttn{}
		fusedRuns.Put(f)
		return nil
	}
	x, w := gemm.Mat{Data: in[0].Float32s(), Ld: max(a.hin, 1)}, gemm.Mat{Data: in[1].Float32s(), Ld: max(total, 1)}
	if a.bias { // the product sets each tile's rows to the bias first: no pass (and loop) of its own
		a.proj.RunBias(x, w, nil, in[2].Float32s()[:total], qkv, max(total, 1), 1, pw)
	} else {
		a.proj.Run(x, w, nil, qkv, max(total, 1), 1, false, pw)
	}
	run.q = bsnh(qkv, 0, c.s, total, c.d)
	run.cur = bsnh(qkv, a.hq, c.s, total, c.d)
	run.curV = bsnh(qkv, a.hq+a.hk, c.s, total, c.dv)
	if a.present {
		writePresent(run, out[1].Float32s(), c)
	}
	c.execute(run, ws)
	return nil
}

// writePresent writes the concatenated past and new keys and values as [2, B, N, T, D].
func writePresent(r *attnRun, present []float32, c *attnCore) {
	pk, pv := presentViews(present, c)
	copyKV(r, pk, pv, c)
}

// presentViews are the keys and values halves of Attention's present output [2, B, N, T, D]
// as BNSH views (present needs equal head sizes, so D serves both).
func presentViews(present []float32, c *attnCore) (pk, pv view3) {
	half := c.b * c.nkv * c.t * c.d
	return bnsh(present[:half], c.nkv, c.t, c.d), bnsh(present[half:2*half], c.nkv, c.t, c.d)
}

// copyKV copies every key and value of r into the BNSH views pk and pv.
func copyKV(r *attnRun, pk, pv view3, c *attnCore) {
	for b := 0; b < c.b; b++ {
		for h := 0; h < c.nkv; h++ {
			copyKVHead(r, pk, pv, c, b, h)
		}
	}
}

// copyKVHead copies the keys and values of (batch b, kv head h) of r into pk and pv.
func copyKVHead(r *attnRun, pk, pv view3, c *attnCore, b, h int) {
	for j := 0; j < r.pastLen+r.curLen; j++ {
		o := pk.at(b, h, j)
		copy(pk.data[o:o+c.d], r.key(b, h, j))
		o = pv.at(b, h, j)
		copy(pv.data[o:o+c.dv], r.value(b, h, j))
	}
}

// ---------------------------------------------------------------- com.microsoft.MultiHeadAttention

type mhaLayout uint8

const (
	mhaSeparate  mhaLayout = iota // Q [B,S,Hq], K [B,L,Hk], V [B,L,Hv]
	mhaPackedQKV                  // Q [B,S,N,3,D]
	mhaPackedKV                   // K [B,L,N,2,D]
	mhaBNSH                       // K [B,N,L,D], V [B,N,L,Dv]
)

func mhaGeom(src geomSrc, hi bool) (attnDims, error) {
	q := src.dims(0)
	heads := src.attrs().Int("num_heads", 0)
	if heads <= 0 {
		return attnDims{}, fmt.Errorf("num_heads must be positive")
	}
	k, v := src.dims(1), src.dims(2)
	g := attnDims{nq: heads}
	switch {
	case len(q) == 3:
		g.b, g.s = pick(q[0], hi), pick(q[1], hi)
	case len(q) == 5 && k == nil:
		g.b, g.s = pick(q[0], hi), pick(q[1], hi)
		g.t, g.d, g.dv = g.s, pick(q[4], hi), pick(q[4], hi)
		return mhaPast(src, hi, g)
	default:
		return attnDims{}, fmt.Errorf("query has %d dims, want 3 (or 5 when packed)", len(q))
	}
	switch {
	case len(k) == 3 && len(v) == 3:
		g.t, g.d, g.dv = pick(k[1], hi), pick(q[2], hi)/heads, pick(v[2], hi)/heads
	case len(k) == 5 && v == nil:
		g.t, g.d, g.dv = pick(k[1], hi), pick(k[4], hi), pick(k[4], hi)
	case len(k) == 4 && len(v) == 4:
		g.t, g.d, g.dv = pick(k[2], hi), pick(k[3], hi), pick(v[3], hi)
		return g, nil // a BNSH key/value is the whole history: no past
	default:
		return attnDims{}, fmt.Errorf("key %d-D and value %d-D are not a supported layout", len(k), len(v))
	}
	if src.dims(3) != nil { // bias: biased copies of Q, K and V
		part, err := f32Part("biased", g.b, (g.s*pick(q[2], hi) + g.t*pick(k[2], hi) + g.t*pick(v[2], hi)))
		if err != nil {
			return attnDims{}, err
		}
		g.extra = []alloc.Part{part}
	}
	return mhaPast(src, hi, g)
}

func mhaPast(src geomSrc, hi bool, g attnDims) (attnDims, error) {
	if p := src.dims(6); p != nil {
		if len(p) != 4 {
			return attnDims{}, fmt.Errorf("past_key has %d dims, want 4", len(p))
		}
		g.t += pick(p[2], hi)
	}
	return g, nil
}

type mha struct {
	core       attnCore
	layout     mhaLayout
	hq, hk, hv int
	l, p       int
	bias       bool
	presentK   bool
	presentV   bool
	workers    int
}

func selectMHA(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckArity(n, 1, 8, 1, 3); err != nil {
		return plan{}, err
	}
	for _, i := range []int{8, 9} {
		if _, ok := n.Input(i); ok {
			return plan{}, fmt.Errorf("input %d (past_sequence_length / cache_indirection) is not supported", i)
		}
	}
	if _, ok := n.Output(3); ok {
		return plan{}, fmt.Errorf("the qk output is not supported")
	}
	for i, v := range n.Inputs {
		if v.Present() && i != 4 && v.DType != graph.Float32 {
			return plan{}, fmt.Errorf("input %d is %v, want float32", i, v.DType)
		}
	}
	g, err := mhaGeom(nodeSrc{n}, true)
	if err != nil {
		return plan{}, err
	}
	at := n.Attrs
	m := &mha{workers: d.Workers}
	c := &m.core
	heads := int(g.nq)
	q := n.Inputs[0]
	k, okK := n.Input(1)
	v, okV := n.Input(2)
	c.b, c.s, c.nq, c.nkv = int(g.b), int(g.s), heads, heads
	switch {
	case len(q.Shape) == 5:
		if q.Shape[2] != int64(heads) || q.Shape[3] != 3 {
			return plan{}, fmt.Errorf("packed QKV %v, want [B, S, %d, 3, D]", q.Shape, heads)
		}
		m.layout = mhaPackedQKV
		c.d, c.dv = int(q.Shape[4]), int(q.Shape[4])
		m.l = c.s
	case okK && len(k.Shape) == 5:
		if k.Shape[0] != q.Shape[0] || k.Shape[2] != int64(heads) || k.Shape[3] != 2 || q.Shape[2] != int64(heads)*k.Shape[4] {
			return plan{}, fmt.Errorf("packed KV %v for query %v", k.Shape, q.Shape)
		}
		m.layout = mhaPackedKV
		c.d, c.dv = int(k.Shape[4]), int(k.Shape[4])
		m.l = int(k.Shape[1])
	case okK && okV && len(k.Shape) == 4:
		if k.Shape[0] != q.Shape[0] || k.Shape[1] != int64(heads) || v.Shape[1] != int64(heads) || k.Shape[2] != v.Shape[2] || q.Shape[2] != int64(heads)*k.Shape[3] {
			return plan{}, fmt.Errorf("BNSH key %v and value %v for query %v", k.Shape, v.Shape, q.Shape)
		}
		m.layout = mhaBNSH
		c.d, c.dv = int(k.Shape[3]), int(v.Shape[3])
		m.l = int(k.Shape[2])
	case okK && okV && len(k.Shape) == 3 && len(v.Shape) == 3:
		if k.Shape[0] != q.Shape[0] || v.Shape[0] != q.Shape[0] || k.Shape[1] != v.Shape[1] || q.Shape[2] != k.Shape[2] || q.Shape[2]%int64(heads) != 0 || v.Shape[2]%int64(heads) != 0 {
			return plan{}, fmt.Errorf("query %v, key %v, value %v", q.Shape, k.Shape, v.Shape)
		}
		m.layout = mhaSeparate
		c.d, c.dv = int(q.Shape[2])/heads, int(v.Shape[2])/heads
		m.l = int(k.Shape[1])
	default:
		return plan{}, fmt.Errorf("unsupported query/key/value layout")
	}
	m.hq, m.hk, m.hv = heads*c.d, heads*c.d, heads*c.dv
	c.t = int(g.t)
	c.scale = attnScale(at, c.d)
	c.filter = at.Float("mask_filter_value", -10000)
	c.causalAdd = at.Int("unidirectional", 0) != 0
	if b, ok := n.Input(3); ok {
		if m.layout != mhaSeparate || numel(b.Shape) != m.hq+m.hk+m.hv {
			return plan{}, fmt.Errorf("bias %v is only supported for separate 3-D Q, K, V of total width %d", b, m.hq+m.hk+m.hv)
		}
		m.bias = true
	}
	if mk, ok := n.Input(4); ok {
		if mk.DType != graph.Int32 {
			return plan{}, fmt.Errorf("key_padding_mask is %v, want int32", mk.DType)
		}
		if c.mask, err = newKeyMask(mk, int64(c.b), int64(c.s), int64(c.t)); err != nil {
			return plan{}, err
		}
		c.hasMask = true
	}
	if ab, ok := n.Input(5); ok {
		if err := c.checkBias(ab); err != nil {
			return plan{}, err
		}
	}
	pk, okPK := n.Input(6)
	pv, okPV := n.Input(7)
	if okPK != okPV || okPK && m.layout == mhaBNSH {
		return plan{}, fmt.Errorf("past_key and past_value go together, and not with a BNSH key")
	}
	if okPK {
		want := []int64{int64(c.b), int64(heads), pk.Shape[2], int64(c.d)}
		if !slices.Equal(pk.Shape, want) || !slices.Equal(pv.Shape, []int64{int64(c.b), int64(heads), pk.Shape[2], int64(c.dv)}) {
			return plan{}, fmt.Errorf("past_key %v and past_value %v, want %v", pk.Shape, pv.Shape, want)
		}
		m.p = int(pk.Shape[2])
	}
	if err := kernels.CheckOutput(n, 0, graph.Float32, []int64{int64(c.b), int64(c.s), int64(m.hv)}); err != nil {
		return plan{}, err
	}
	if _, ok := n.Output(1); ok {
		if err := kernels.CheckOutput(n, 1, graph.Float32, []int64{int64(c.b), int64(heads), int64(c.t), int64(c.d)}); err != nil {
			return plan{}, err
		}
		m.presentK = true
	}
	if _, ok := n.Output(2); ok {
		if err := kernels.CheckOutput(n, 2, graph.Float32, []int64{int64(c.b), int64(heads), int64(c.t), int64(c.dv)}); err != nil {
			return plan{}, err
		}
		m.presentV = true
	}
	c.setTactic(d.Workers)
	parts, err := attnRecipe(g, d.Workers)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: c.tactic, parts: parts, r: m}, nil
}

func (m *mha) run(in, out []kernels.Tensor, ws wsParts) error {
	c := &m.core
	run := attnRuns.Get()
	defer func() { *run = attnRun{}; attnRuns.Put(run) }()
	run.c = c
	q := in[0].Float32s()
	switch m.layout {
	case mhaPackedQKV:
		w := c.nq * 3 * c.d
		run.q = view3{data: q, sb: c.s * w, sh: 3 * c.d, st: w}
		run.cur = view3{data: q, off: c.d, sb: c.s * w, sh: 3 * c.d, st: w}
		run.curV = view3{data: q, off: 2 * c.d, sb: c.s * w, sh: 3 * c.d, st: w}
	case mhaPackedKV:
		kv := in[1].Float32s()
		w := c.nq * 2 * c.d
		run.q = bsnh(q, 0, c.s, m.hq, c.d)
		run.cur = view3{data: kv, sb: m.l * w, sh: 2 * c.d, st: w}
		run.curV = view3{data: kv, off: c.d, sb: m.l * w, sh: 2 * c.d, st: w}
	case mhaBNSH:
		run.q = bsnh(q, 0, c.s, m.hq, c.d)
		run.cur = bnsh(in[1].Float32s(), c.nq, m.l, c.d)
		run.curV = bnsh(in[2].Float32s(), c.nq, m.l, c.dv)
	default:
		k, v := in[1].Float32s(), in[2].Float32s()
		if m.bias {
			biased := kernels.ViewAs[float32](ws.bytes(0))
			bias := in[3].Float32s()
			nq, nk, nv := c.b*c.s*m.hq, c.b*m.l*m.hk, c.b*m.l*m.hv
			addRowsPar(biased[:nq], q, bias[:m.hq], m.workers)
			addRowsPar(biased[nq:nq+nk], k, bias[m.hq:m.hq+m.hk], m.workers)
			addRowsPar(biased[nq+nk:nq+nk+nv], v, bias[m.hq+m.hk:], m.workers)
			q, k, v = biased[:nq], biased[nq:nq+nk], biased[nq+nk:nq+nk+nv]
			ws = ws.skip(1)
		}
		run.q = bsnh(q, 0, c.s, m.hq, c.d)
		run.cur = bsnh(k, 0, m.l, m.hk, c.d)
		run.curV = bsnh(v, 0, m.l, m.hv, c.dv)
	}
	run.curLen = m.l
	if m.p > 0 || len(in) > 6 && in[6].Data != nil {
		run.past = bnsh(in[6].Float32s(), c.nq, m.p, c.d)
		run.pastV = bnsh(in[7].Float32s(), c.nq, m.p, c.dv)
		run.pastLen = m.p
	}
	run.o = bsnh(out[0].Float32s(), 0, c.s, m.hv, c.dv)
	if c.hasMask {
		run.mask = in[4].Int32s()
	}
	if c.hasBias {
		run.bias = in[5].Float32s()
	}
	if m.presentK || m.presentV {
		for b := 0; b < c.b; b++ {
			for h := 0; h < c.nq; h++ {
				for j := 0; j < c.t; j++ {
					if m.presentK {
						pk := bnsh(out[1].Float32s(), c.nq, c.t, c.d)
						o := pk.at(b, h, j)
						copy(pk.data[o:o+c.d], run.key(b, h, j))
					}
					if m.presentV {
						pv := bnsh(out[2].Float32s(), c.nq, c.t, c.dv)
						o := pv.at(b, h, j)
						copy(pv.data[o:o+c.dv], run.value(b, h, j))
					}
				}
			}
		}
	}
	c.execute(run, ws)
	return nil
}

// addRows writes x + bias (bias broadcast over rows) into dst, which may be x.
func addRows(dst, x, bias []float32) {
	w := len(bias)
	for r := 0; r+w <= len(x); r += w {
		vec.VV(vec.Add, dst[r:r+w], x[r:r+w], bias)
	}
}

// addRowsBody is addRows over the pool, a range of rows a participant; with x nil it copies
// bias into the rows.
type addRowsBody struct{ dst, x, bias []float32 }

func (b *addRowsBody) Do(_, lo, hi int) {
	w := len(b.bias)
	if b.x == nil {
		for r := lo; r < hi; r++ {
			copy(b.dst[r*w:(r+1)*w], b.bias)
		}
		return
	}
	addRows(b.dst[lo*w:hi*w], b.x[lo*w:hi*w], b.bias)
}

var addRowsBodies par.Pool[addRowsBody]

// addRowsPar is addRows split over up to workers participants when dst is large. With x nil
// it sets every row of dst to bias.
func addRowsPar(dst, x, bias []float32, workers int) {
	w := max(len(bias), 1)
	b := addRowsBodies.Get()
	*b = addRowsBody{dst: dst, x: x, bias: bias}
	if rows := len(dst) / w; workers <= 1 || rows < 2 || len(dst) < parMinElems {
		b.Do(0, 0, rows)
	} else {
		par.For(rows, max(1, parGrainElems/w), parSlots(len(dst), workers), b)
	}
	*b = addRowsBody{}
	addRowsBodies.Put(b)
}
