package cpu

import (
	"math"
	"slices"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// The attention kernels (Attention, MultiHeadAttention, GroupQueryAttention) share one core:
// a block of query rows' scores against a range of keys are one matrix product (package gemm)
// into per-worker scratch in the workspace, masked and softmaxed there in float32 (package vec),
// and weight the values in a second product.
//
// Tactics, switched on the key length T (a pure function of shapes):
//   - "full" (T < splitKVMinT): tasks of (batch, head, block of attnRowBlock query rows), run in
//     parallel; a block's scores against all T keys live in the task's scratch slot.
//   - "split-kv" (T >= splitKVMinT): the keys are cut into chunks of splitKVChunk; a task is
//     (batch, head, chunk) and writes, per query row, its chunk's unnormalized output, running
//     max and running sum to workspace partials; a second pass combines the chunks of a row
//     (flash-decoding). It gives decode steps (one query, long history) parallel work.
//
// The ops' selects are in attention_contrib.go (com.microsoft.Attention), attention_mha.go and
// gqa.go. Attention, which projects its own Q, K and V, can run the full tactic with the
// projection inside its tasks (attention_fused.go).
const (
	splitKVMinT  = 512
	splitKVChunk = 128
	attnRowBlock = 64
)

// attnTactic is the tactic rule.
func attnTactic(t int64) string {
	if t >= splitKVMinT {
		return "split-kv"
	}
	return "full"
}

// attnSlotFloats is one worker's scratch: the scores of rows query rows against keys keys,
// and the products' workspace (scores = Q K^T with K transposed, out = P V).
func attnSlotFloats(rows, keys, d, dv int64) int64 {
	return rows*keys + max(gemm.Workspace(rows, keys, d, gemm.Transposed, 1), gemm.Workspace(rows, dv, keys, gemm.RowMajor, 1))
}

// attnScratchParts is the recipe of the attention core: per-slot scratch and, for split-kv,
// the partials. slots is the number of workers that can hold a scratch slot at once.
func attnScratchParts(b, heads, s, t, d, dv, workers int64) ([]alloc.Part, error) {
	if _, err := kernels.Product(b, heads, s, max(t, d, dv, 1), 4); err != nil {
		return nil, err
	}
	if attnTactic(t) == "full" {
		tasks, err := kernels.Product(b, heads, (s+attnRowBlock-1)/attnRowBlock)
		if err != nil {
			return nil, err
		}
		sz, err := kernels.Product(max(min(workers, tasks), 1), attnSlotFloats(min(s, attnRowBlock), t, d, dv), 4)
		if err != nil {
			return nil, err
		}
		return []alloc.Part{{Name: "scores", Size: sz}}, nil
	}
	chunks := (t + splitKVChunk - 1) / splitKVChunk
	tasks, err := kernels.Product(b, heads, chunks)
	if err != nil {
		return nil, err
	}
	sc, err := kernels.Product(max(min(workers, tasks), 1), attnSlotFloats(s, splitKVChunk, d, dv), 4)
	if err != nil {
		return nil, err
	}
	po, err := kernels.Product(tasks, s, dv, 4)
	if err != nil {
		return nil, err
	}
	pm, err := kernels.Product(tasks, s, 4)
	if err != nil {
		return nil, err
	}
	return []alloc.Part{{Name: "scores", Size: sc}, {Name: "partial_out", Size: po}, {Name: "partial_max", Size: pm}, {Name: "partial_sum", Size: pm}}, nil
}

// view3 addresses rows of a float32 tensor by (batch, head, position).
type view3 struct {
	data            []float32
	off, sb, sh, st int
}

func (v *view3) at(b, h, t int) int { return v.off + b*v.sb + h*v.sh + t*v.st }

// bnsh views a [B, N, T, D] tensor.
func bnsh(data []float32, n, t, d int) view3 {
	return view3{data: data, sb: n * t * d, sh: t * d, st: d}
}

// bsnh views heads of width d starting at column off of a [B, S, width] tensor.
func bsnh(data []float32, off, s, width, d int) view3 {
	return view3{data: data, off: off, sb: s * width, sh: d, st: width}
}

// maskKind is the format of an attention mask.
// maskKind is kernels.KeyMask, by its short names here.
type maskKind = kernels.KeyMask

const (
	maskLengths  = kernels.KeyMaskLengths
	maskStartEnd = kernels.KeyMaskStartEnd
	maskRaw2     = kernels.KeyMaskRaw2
	maskRaw3     = kernels.KeyMaskRaw3
)

// keyMask is an attention mask in one of onnxruntime's formats; its data is read at run time.
type keyMask struct {
	kind maskKind
	t    int // last dim of the raw formats
	s    int
}

func newKeyMask(v kernels.Value, b, s, t int64) (keyMask, error) {
	kind, tm, err := kernels.CheckKeyMask(v, b, s, t)
	if err != nil {
		return keyMask{}, err
	}
	m := keyMask{kind: kind, t: int(tm)}
	if kind == maskRaw3 {
		m.s = int(s)
	}
	return m, nil
}

// apply adds filter to the scores s of query i of batch b against keys [j0, j0+len(s)) that
// the mask masks.
func (m *keyMask) apply(data []int32, b, i, j0, bsz int, s []float32, filter float32) {
	j1 := j0 + len(s)
	span := func(lo, hi int) { // add filter on keys [lo, hi)
		if lo, hi = max(lo, j0), min(hi, j1); lo < hi {
			vec.VS(vec.Add, s[lo-j0:hi-j0], s[lo-j0:hi-j0], filter)
		}
	}
	switch m.kind {
	case maskLengths:
		span(int(data[b]), j1)
	case maskStartEnd:
		end, start := int(data[b]), int(data[bsz+b])
		span(max(end, j0), j1)
		span(j0, min(start, end))
	case maskRaw2, maskRaw3:
		row := data[b*m.t : (b+1)*m.t]
		if m.kind == maskRaw3 {
			row = data[(b*m.s+i)*m.t : (b*m.s+i+1)*m.t]
		}
		if end := min(j1, m.t); j0 < end {
			ss := s[:end-j0]
			for j, v := range row[j0:end] {
				if v == 0 {
					ss[j] += filter
				}
			}
		}
		span(m.t, j1)
	}
}

// attnCore is the geometry and semantics of one attention node, fixed at Select.
type attnCore struct {
	b, s, nq, nkv, d, dv int
	t                    int // key capacity
	tactic               string
	chunks               int
	slots                int
	participants         int // slots worth waking (attnParticipants): at most slots
	slotFloats           int // per-slot scratch (see attnSlotFloats)
	scale                float32
	filter               float32 // mask_filter_value, added to masked scores
	causalAdd            bool    // Attention/MHA unidirectional: future keys get filter added
	causalExcl           bool    // GQA: future keys are excluded
	window               int     // GQA local_window_size: a row sees its last window keys (itself included); <= 0 means all
	softcap              float32
	hasBias              bool // attention_bias input
	biasSB, biasSH       int  // attention_bias strides for batch and head (0 when broadcast)
	biasT                int  // attention_bias last dim
	hasMask              bool
	mask                 keyMask
}

// attnRun is one execution of the core: where Q, K, V, the output and the scratch are.
type attnRun struct {
	c         *attnCore
	q, o      view3
	past, cur view3 // keys/values [0, pastLen) and [pastLen, pastLen+curLen)
	pastV     view3
	curV      view3
	pastLen   int
	curLen    int
	bias      []float32
	mask      []int32
	totals    []int32 // GQA: seqlens_k per batch (total - 1)
	first     bool    // GQA: first prompt (past lengths are 0)
	scratch   []float32
	po, pm    []float32
	pl        []float32
	pass      int
}

var attnRuns par.Pool[attnRun]

// key returns the index and view of key j of (batch b, kv head h).
func (r *attnRun) key(b, h, j int) []float32 {
	d := r.c.d
	if j < r.pastLen {
		o := r.past.at(b, h, j)
		return r.past.data[o : o+d]
	}
	o := r.cur.at(b, h, j-r.pastLen)
	return r.cur.data[o : o+d]
}

func (r *attnRun) value(b, h, j int) []float32 {
	dv := r.c.dv
	if j < r.pastLen {
		o := r.pastV.at(b, h, j)
		return r.pastV.data[o : o+dv]
	}
	o := r.curV.at(b, h, j-r.pastLen)
	return r.curV.data[o : o+dv]
}

// keyRange is the keys row i of batch b may see at all: [lo, hi). Keys outside are excluded
// (probability 0); inside, masks add mask_filter_value.
func (r *attnRun) keyRange(b, i int) (lo, hi int) {
	c := r.c
	hi = r.pastLen + r.curLen
	if r.totals != nil {
		total := int(r.totals[b]) + 1
		past := total - c.s
		if r.first {
			past = 0
		}
		hi = min(hi, total)
		if c.causalExcl {
			hi = min(past+i+1, r.pastLen+r.curLen)
			if c.window > 0 && hi > c.window { // the window keys up to and including row i, as onnxruntime
				lo = hi - c.window
			}
		}
	}
	return lo, hi
}

// keySpan is the keys any of query rows [i0, i0+rows) of batch b may see, within [j0, j1).
func (r *attnRun) keySpan(b, i0, rows, j0, j1 int) (lo, hi int) {
	lo, hi = j1, j0
	for i := i0; i < i0+rows; i++ {
		l, h := r.keyRange(b, i)
		lo, hi = min(lo, l), max(hi, h)
	}
	return max(lo, j0), min(hi, j1)
}

// segments calls fn for the parts of keys [lo, hi) in the past and the current keys, with the
// keys' and values' views, the first key's index within its view and the part's bounds.
func (r *attnRun) segments(lo, hi int, fn func(k, v view3, first, s0, s1 int)) {
	if s0, s1 := lo, min(hi, r.pastLen); s0 < s1 {
		fn(r.past, r.pastV, s0, s0, s1)
	}
	if s0, s1 := max(lo, r.pastLen), hi; s0 < s1 {
		fn(r.cur, r.curV, s0-r.pastLen, s0, s1)
	}
}

// scoreBlock sets sc (rows x (j1-j0), row-major) to the probabilities-to-be of query rows
// [i0, i0+rows) of (batch b, head n) against keys [j0, j1): e^(score - row max) with the row's
// max and sum in mx and sum (-Inf and 0 for a row that sees no key). Keys a row may not see
// get 0. It returns the span of keys any row sees (lo >= hi for none).
func (r *attnRun) scoreBlock(b, n, i0, rows, j0, j1 int, sc, ws []float32, mx, sum []float32) (lo, hi int) {
	c := r.c
	w := j1 - j0
	kh := n / (c.nq / c.nkv)
	lo, hi = r.keySpan(b, i0, rows, j0, j1)
	q := gemm.Mat{Data: r.q.data[r.q.at(b, n, i0):], Ld: r.q.st}
	r.segments(lo, hi, func(k, _ view3, first, s0, s1 int) {
		p := gemm.NewPlan(rows, s1-s0, c.d, gemm.Transposed, 1)
		p.Run(q, gemm.Mat{Data: k.data[k.at(b, kh, first):], Ld: k.st, Trans: true}, nil, sc[s0-j0:], w, c.scale, false, ws)
	})
	ninf := float32(math.Inf(-1))
	// A [B, T] mask is the same for every row of the block: when it masks none of the keys
	// (padding-free batches), the rows skip it.
	maskRows := c.hasMask
	if c.hasMask && c.mask.kind == maskRaw2 && lo < hi && hi <= c.mask.t {
		maskRows = slices.Contains(r.mask[b*c.mask.t+lo:b*c.mask.t+hi], 0)
	}
	for i := 0; i < rows; i++ {
		row := sc[i*w : (i+1)*w]
		l, h := r.keyRange(b, i0+i)
		l, h = max(l, j0), min(h, j1)
		if l >= h {
			clear(row)
			mx[i], sum[i] = ninf, 0
			continue
		}
		if c.softcap > 0 || c.hasBias || c.causalAdd || maskRows {
			r.adjust(b, n, i0+i, l, h, row[l-j0:h-j0], maskRows)
		}
		m := vec.Max(row[l-j0 : h-j0])
		if m == ninf {
			clear(row)
			mx[i], sum[i] = ninf, 0
			continue
		}
		clear(row[:l-j0])
		clear(row[h-j0:])
		mx[i], sum[i] = m, vec.ExpShift(row[l-j0:h-j0], row[l-j0:h-j0], m)
	}
	return lo, hi
}

// adjust applies the softcap, the attention bias and the additive masks (the key mask when
// mask is set) to the scores s of query row i of (b, head n) against keys [j0, j0+len(s)).
func (r *attnRun) adjust(b, n, i, j0, j1 int, s []float32, mask bool) {
	c := r.c
	if c.softcap > 0 {
		vec.VS(vec.Mul, s, s, 1/c.softcap)
		vec.Tanh(s, s)
		vec.VS(vec.Mul, s, s, c.softcap)
	}
	if c.hasBias && j0 < c.biasT {
		o := b*c.biasSB + n*c.biasSH + i*c.biasT
		e := min(j1, c.biasT)
		vec.VV(vec.Add, s[:e-j0], s[:e-j0], r.bias[o+j0:o+e])
	}
	if c.causalAdd {
		if lo := max(r.pastLen+i+1, j0); lo < j1 {
			vec.VS(vec.Add, s[lo-j0:], s[lo-j0:], c.filter)
		}
	}
	if mask {
		c.mask.apply(r.mask, b, i, j0, c.b, s, c.filter)
	}
}

// weigh computes out (rows x dv, leading dimension ldo) = P V over keys [lo, hi) of kv head
// kh of batch b, P the rows x (j1-j0) block sc starting at key j0 (zeros out when lo >= hi).
func (r *attnRun) weigh(b, kh, rows, j0, w, lo, hi int, sc, ws, out []float32, ldo int) {
	c := r.c
	if lo >= hi {
		for i := 0; i < rows; i++ {
			clear(out[i*ldo : i*ldo+c.dv])
		}
		return
	}
	acc := false
	r.segments(lo, hi, func(_, v view3, first, s0, s1 int) {
		p := gemm.NewPlan(rows, c.dv, s1-s0, gemm.RowMajor, 1)
		p.Run(gemm.Mat{Data: sc[s0-j0:], Ld: w}, gemm.Mat{Data: v.data[v.at(b, kh, first):], Ld: v.st}, nil, out, ldo, 1, acc, ws)
		acc = true
	})
}

// fullBlock is the full tactic's task: the output rows of query rows [i0, i0+attnRowBlock)
// (cut at S) of (batch b, head n), with slotWS the participant's scratch slot.
func (r *attnRun) fullBlock(b, n, i0 int, slotWS []float32) {
	c := r.c
	var mx, sum [attnRowBlock]float32
	total := r.pastLen + r.curLen
	rows := min(c.s, attnRowBlock)
	sc, ws := slotWS[:rows*total], slotWS[rows*total:]
	kh := n / (c.nq / c.nkv)
	nr := min(attnRowBlock, c.s-i0)
	klo, khi := r.scoreBlock(b, n, i0, nr, 0, total, sc, ws, mx[:nr], sum[:nr])
	out := r.o.data[r.o.at(b, n, i0):]
	r.weigh(b, kh, nr, 0, total, klo, khi, sc, ws, out, r.o.st)
	// Normalise the rows of the output (dv wide) rather than of the probabilities (as wide as
	// the keys): (P V) / sum equals (P / sum) V up to rounding, for a fraction of the
	// multiplications.
	for i := 0; i < nr; i++ {
		if sum[i] > 0 {
			vec.Scale(out[i*r.o.st:i*r.o.st+c.dv], 1/sum[i])
		}
	}
}

func (r *attnRun) Do(slot, lo, hi int) {
	c := r.c
	slotWS := r.scratch[slot*c.slotFloats : (slot+1)*c.slotFloats]
	var mx, sum [attnRowBlock]float32
	switch {
	case c.tactic == "full":
		blocks := (c.s + attnRowBlock - 1) / attnRowBlock
		for task := lo; task < hi; task++ {
			bn, rb := task/blocks, task%blocks
			r.fullBlock(bn/c.nq, bn%c.nq, rb*attnRowBlock, slotWS)
		}
	case r.pass == 0: // split-kv partials
		sc, ws := slotWS[:c.s*splitKVChunk], slotWS[c.s*splitKVChunk:]
		for task := lo; task < hi; task++ {
			bn, ch := task/c.chunks, task%c.chunks
			b, n := bn/c.nq, bn%c.nq
			kh := n / (c.nq / c.nkv)
			j0 := ch * splitKVChunk
			j1 := max(min(j0+splitKVChunk, r.pastLen+r.curLen), j0)
			for i0 := 0; i0 < c.s; i0 += attnRowBlock {
				nr := min(attnRowBlock, c.s-i0)
				row := task*c.s + i0
				blk := sc[i0*(j1-j0):]
				klo, khi := r.scoreBlock(b, n, i0, nr, j0, j1, blk, ws, mx[:nr], sum[:nr])
				copy(r.pm[row:row+nr], mx[:nr])
				copy(r.pl[row:row+nr], sum[:nr])
				r.weigh(b, kh, nr, j0, j1-j0, klo, khi, blk, ws, r.po[row*c.dv:], c.dv)
			}
		}
	default: // split-kv combine: one task per (b, n, i)
		for task := lo; task < hi; task++ {
			bn, i := task/c.s, task%c.s
			b, n := bn/c.nq, bn%c.nq
			oo := r.o.at(b, n, i)
			out := r.o.data[oo : oo+c.dv]
			clear(out)
			mx := math.Inf(-1)
			for ch := 0; ch < c.chunks; ch++ {
				row := (bn*c.chunks+ch)*c.s + i
				if r.pl[row] > 0 {
					mx = max(mx, float64(r.pm[row]))
				}
			}
			if math.IsInf(mx, -1) {
				continue
			}
			var den float64
			for ch := 0; ch < c.chunks; ch++ {
				row := (bn*c.chunks+ch)*c.s + i
				if r.pl[row] > 0 {
					den += float64(r.pl[row]) * math.Exp(float64(r.pm[row])-mx)
				}
			}
			for ch := 0; ch < c.chunks; ch++ {
				row := (bn*c.chunks+ch)*c.s + i
				if r.pl[row] > 0 {
					vec.Axpy(float32(math.Exp(float64(r.pm[row])-mx)/den), r.po[row*c.dv:(row+1)*c.dv], out)
				}
			}
		}
	}
}

// execute runs the core with the scratch parts ws (in the order attnScratchParts gives).
func (c *attnCore) execute(r *attnRun, ws wsParts) {
	r.c = c
	r.scratch = kernels.ViewAs[float32](ws.bytes(0))
	if c.tactic == "full" {
		tasks := c.b * c.nq * ((c.s + attnRowBlock - 1) / attnRowBlock)
		par.For(tasks, 1, c.participants, r)
		return
	}
	r.po, r.pm, r.pl = kernels.ViewAs[float32](ws.bytes(1)), kernels.ViewAs[float32](ws.bytes(2)), kernels.ViewAs[float32](ws.bytes(3))
	r.pass = 0
	par.For(c.b*c.nq*c.chunks, 1, c.participants, r)
	r.pass = 1
	par.For(c.b*c.nq*c.s, 16, c.participants, r)
}

// setTactic fixes the tactic, slot count and per-slot scratch from the key capacity.
func (c *attnCore) setTactic(workers int) {
	c.tactic = attnTactic(int64(c.t))
	c.chunks = (c.t + splitKVChunk - 1) / splitKVChunk
	tasks := c.b * c.nq * ((c.s + attnRowBlock - 1) / attnRowBlock)
	c.slotFloats = int(attnSlotFloats(int64(min(c.s, attnRowBlock)), int64(c.t), int64(c.d), int64(c.dv)))
	if c.tactic != "full" {
		tasks = c.b * c.nq * c.chunks
		c.slotFloats = int(attnSlotFloats(int64(c.s), splitKVChunk, int64(c.d), int64(c.dv)))
	}
	c.slots = max(min(workers, tasks), 1)
	c.participants = attnParticipants(c.slots, c.b, c.nq, c.s, c.t, c.d, c.dv)
}

// checkBias validates an attention_bias of shape [B or 1, N or 1, S, T] and sets its strides.
func (c *attnCore) checkBias(v kernels.Value) error {
	ab, err := kernels.CheckAttentionBias(v, graph.Float32, int64(c.b), int64(c.nq), int64(c.s), int64(c.t))
	if err != nil {
		return err
	}
	c.hasBias, c.biasT, c.biasSB, c.biasSH = true, int(ab.T), int(ab.SB), int(ab.SH)
	return nil
}

func attnScale(at interface {
	Float(string, float32) float32
}, d int) float32 {
	def := float32(1 / math.Sqrt(float64(d)))
	s := at.Float("scale", 0)
	if s == 0 {
		return def
	}
	return s
}

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

func attentionOps() []*op {
	ms := kernels.DomainMicrosoft
	tac := []kernels.TacticInfo{
		{Name: "full", Summary: "per block of 64 query rows: scores (a gemm), softmax and value sum (a gemm) in per-worker scratch, parallel over batch x heads x blocks", Workspace: true},
		{Name: "split-kv", Summary: "keys cut into chunks of 128 (from 512 keys on): per-chunk partial outputs, maxima and sums in workspace, combined after (flash-decoding)", Workspace: true},
	}
	return []*op{
		{key: kernels.Key(ms, "Attention"), tactics: tac, sel: selectAttention, bound: attnBound(attentionGeom)},
		{key: kernels.Key(ms, "MultiHeadAttention"), tactics: tac, sel: selectMHA, bound: attnBound(mhaGeom)},
		{key: kernels.Key(ms, "GroupQueryAttention"), tactics: tac, sel: selectGQA, bound: attnBound(gqaGeom)},
	}
}
