package cpu

import (
	"fmt"
	"math"
	"unsafe"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
	"carve.dev/libs/kernels/internal/vec"
)

// onnxAttention is ONNX's Attention (ai.onnx, opset 23): softmax(scale * Q K^T [+ mask]) V
// with Q [B, Hq, S, D], K [B, Hkv, L, D] and V [B, Hkv, L, Dv] (or all 3-D, [B, S, H*D], with
// q_num_heads and kv_num_heads), grouped heads (query head h reads kv head h / (Hq/Hkv)),
// past_key / past_value [B, Hkv, P, D|Dv] before the new keys (T = P + L keys in all), and
// present_key / present_value outputs holding all T.
//
//   - attn_mask broadcasts to [B, Hq, S, T]: a bool mask keeps the keys where it is true, a
//     float mask (Q's type) is added to the scores; keys past its last dim are masked out.
//   - is_causal masks key j for query i when j > P + i, as the ONNX reference does; carve's
//     window_left and window_right bound the keys on each side (graph.AttentionBand), and
//     the keys outside the band are never read.
//   - softcap, when positive, maps a score x to softcap*tanh(x/softcap) before the mask.
//   - carve's relative bias (graph.AttnRelC2P, kernels.CheckRelBias) adds to each score, with
//     the mask, the terms its tables' indices pick at i - j + T - 1, key block by key block.
//   - A query row whose every key is masked out gets a zero output, as PyTorch's
//     scaled_dot_product_attention gives (the exporter writes it as Softmax, IsNaN and Where);
//     ONNX's reference gives NaN there.
//
// Tactic "flash": a task is (batch, query head, block of query rows); the keys are streamed in
// blocks, keeping a running maximum, sum and output accumulator per row (online softmax). For
// float32 (attention23_blocked.go) a block of 64 rows meets a block of 256 keys in two matrix
// products; for float16 and bfloat16 each row streams its keys in blocks of flashBlock with
// the softmax in float64. The workspace is a block of scores and the products' packing per
// worker (for 16-bit types: one block of scores, one accumulator and one converted query and
// key or value row), whatever S and T are: it does not grow with the sequence.
type onnxAttention struct {
	dt                    graph.DType
	half, bf              bool
	b, hq, hkv, s, l, p   int
	t, d, dv              int
	geom                  kernels.ONNXAttentionGeom // the views of Q, K, V and Y
	scale, softcap        float32
	band                  graph.AttentionBand
	mask                  graph.DType // graph.Undefined: no mask
	maskT                 int         // the mask's last dim
	maskSB, maskSH, maskS int         // the mask's strides for batch, head and query row (0: broadcast)
	presentK, presentV    bool
	rel                   kernels.RelBias
	blk, tasks, slots     int
	participants          int // slots worth waking (attnParticipants): at most slots
}

const (
	flashBlock    = 128 // keys scored at once
	flashRowBlock = 16  // query rows per task
)

// attn23Dims is the geometry the recipe depends on.
type attn23Dims struct {
	b, hq, s, t, d, dv int64
	half               bool
}

// attn23Geom reads the geometry of a node (hi picks the largest dims of a range), as
// kernels.ONNXAttentionDims reads it.
func attn23Geom(src geomSrc, hi bool) (attn23Dims, error) {
	at := src.attrs()
	var shapes [3][]int64
	for i := range shapes {
		for _, d := range src.dims(i) {
			shapes[i] = append(shapes[i], pick(d, hi))
		}
	}
	og, err := kernels.ONNXAttentionDims(at, shapes[0], shapes[1], shapes[2])
	if err != nil {
		return attn23Dims{}, err
	}
	g := attn23Dims{b: og.B, hq: og.Hq, s: og.S, t: og.L, d: og.D, dv: og.Dv}
	if pk := src.dims(4); pk != nil {
		if len(pk) != 4 {
			return attn23Dims{}, fmt.Errorf("past_key has %d dims, want 4", len(pk))
		}
		g.t += pick(pk[2], hi)
	}
	return g, nil
}

// attn23Parts is the flash tactic's recipe for geometry g.
func attn23Parts(g attn23Dims, workers int64) ([]alloc.Part, error) {
	tasks, err := kernels.Product(g.b, g.hq, (g.s+flashRowBlock-1)/flashRowBlock)
	if err != nil {
		return nil, err
	}
	slots := max(min(workers, tasks), 1)
	blk := max(min(g.t, flashBlock), 1)
	scores, err := f32Part("scores", slots, blk)
	if err != nil {
		return nil, err
	}
	acc, err := f32Part("accumulator", slots, g.dv)
	if err != nil {
		return nil, err
	}
	parts := []alloc.Part{scores, acc}
	if g.half {
		conv, err := f32Part("converted", slots, g.d+max(g.d, g.dv))
		if err != nil {
			return nil, err
		}
		parts = append(parts, conv)
	}
	return parts, nil
}

// boundONNXAttention is W: the recipe grows with every dim, so it is taken at the largest.
func boundONNXAttention(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	g, err := attn23Geom(rangeSrc{r}, true)
	if err != nil {
		return kernels.Bound{}, err
	}
	q, _ := r.Input(0)
	g.half = q.DType == graph.Float16 || q.DType == graph.BFloat16
	if !g.half {
		parts, err := attn23BlockedParts(g, int64(max(d.Workers, 1)))
		if err != nil {
			return kernels.Bound{}, err
		}
		return recipeBound("flash", parts)
	}
	parts, err := attn23Parts(g, int64(max(d.Workers, 1)))
	if err != nil {
		return kernels.Bound{}, err
	}
	return recipeBound("flash", parts)
}

func selectONNXAttention(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckONNXAttentionArity(n); err != nil {
		return plan{}, err
	}
	q, k, v := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if !halfOK(q.DType) || k.DType != q.DType || v.DType != q.DType {
		return plan{}, fmt.Errorf("Q, K and V are %v, %v and %v; want one of float32, float16, bfloat16", q.DType, k.DType, v.DType)
	}
	g, err := attn23Geom(nodeSrc{n}, true)
	if err != nil {
		return plan{}, err
	}
	at := n.Attrs
	og, err := kernels.ONNXAttentionDims(at, q.Shape, k.Shape, v.Shape)
	if err != nil {
		return plan{}, err
	}
	a := &onnxAttention{dt: q.DType, half: q.DType != graph.Float32, bf: q.DType == graph.BFloat16, geom: og}
	g.half = a.half
	a.b, a.hq, a.s, a.t, a.d, a.dv = int(g.b), int(g.hq), int(g.s), int(g.t), int(g.d), int(g.dv)
	a.hkv, a.l = int(og.Hkv), int(og.L)
	a.p = a.t - a.l
	pk, okK := n.Input(4)
	pv, okV := n.Input(5)
	if okK != okV {
		return plan{}, fmt.Errorf("past_key and past_value go together")
	}
	if okK {
		wk := []int64{int64(a.b), int64(a.hkv), int64(a.p), int64(a.d)}
		wv := []int64{int64(a.b), int64(a.hkv), int64(a.p), int64(a.dv)}
		if pk.DType != a.dt || pv.DType != a.dt || !equalShape(pk.Shape, wk) || !equalShape(pv.Shape, wv) {
			return plan{}, fmt.Errorf("past_key %v and past_value %v, want %v%v and %v%v", pk, pv, a.dt, wk, a.dt, wv)
		}
	}
	if m, ok := n.Input(3); ok {
		if err := a.setMask(m); err != nil {
			return plan{}, err
		}
	}
	if a.band, err = graph.ReadAttentionBand(at); err != nil {
		return plan{}, err
	}
	if a.rel, err = kernels.CheckRelBias(n, a.dt, int64(a.b), int64(a.hq), int64(a.s), int64(a.t), int64(a.p)); err != nil {
		return plan{}, err
	}
	a.scale = float32(1 / math.Sqrt(float64(a.d)))
	if at.Has("scale") {
		a.scale = at.Float("scale", 0)
	}
	if a.softcap = at.Float("softcap", 0); a.softcap < 0 {
		return plan{}, fmt.Errorf("softcap %g is negative", a.softcap)
	}
	if err := kernels.CheckOutput(n, 0, a.dt, og.YShape()); err != nil {
		return plan{}, err
	}
	if _, ok := n.Output(1); ok {
		if err := kernels.CheckOutput(n, 1, a.dt, []int64{int64(a.b), int64(a.hkv), int64(a.t), int64(a.d)}); err != nil {
			return plan{}, err
		}
		a.presentK = true
	}
	if _, ok := n.Output(2); ok {
		if err := kernels.CheckOutput(n, 2, a.dt, []int64{int64(a.b), int64(a.hkv), int64(a.t), int64(a.dv)}); err != nil {
			return plan{}, err
		}
		a.presentV = true
	}
	if !a.half { // float32: blocks of rows, two products per block of keys
		parts, err := attn23BlockedParts(g, int64(d.Workers))
		if err != nil {
			return plan{}, err
		}
		a.tasks = a.b * a.hq * ((a.s + blockRows - 1) / blockRows)
		a.slots = max(min(d.Workers, a.tasks), 1)
		a.participants = attnParticipants(a.slots, a.b, a.hq, a.s, a.t, a.d, a.dv)
		return plan{tactic: "flash", parts: parts, r: a}, nil
	}
	parts, err := attn23Parts(g, int64(d.Workers))
	if err != nil {
		return plan{}, err
	}
	a.tasks = a.b * a.hq * ((a.s + flashRowBlock - 1) / flashRowBlock)
	a.slots = max(min(d.Workers, a.tasks), 1)
	a.participants = attnParticipants(a.slots, a.b, a.hq, a.s, a.t, a.d, a.dv)
	a.blk = max(min(a.t, flashBlock), 1)
	return plan{tactic: "flash", parts: parts, r: a}, nil
}

// setMask checks attn_mask against the scores' shape [B, Hq, S, T] and sets its strides.
func (a *onnxAttention) setMask(m kernels.Value) error {
	if m.DType != graph.Bool && m.DType != a.dt {
		return fmt.Errorf("attn_mask is %v, want bool or %v", m.DType, a.dt)
	}
	r := len(m.Shape)
	want := []int64{int64(a.b), int64(a.hq), int64(a.s), int64(a.t)}
	if r == 0 || r > 4 || m.Shape[r-1] > int64(a.t) {
		return fmt.Errorf("attn_mask %v does not broadcast to the scores %v", m.Shape, want)
	}
	strides := stridesOf(m.Shape)
	sb := []*int{&a.maskSB, &a.maskSH, &a.maskS}
	for i := 0; i < r-1; i++ {
		axis := 4 - r + i
		switch m.Shape[i] {
		case want[axis]:
			*sb[axis] = strides[i]
		case 1:
		default:
			return fmt.Errorf("attn_mask %v does not broadcast to the scores %v", m.Shape, want)
		}
		if m.Shape[i] == 1 {
			*sb[axis] = 0
		}
	}
	a.mask, a.maskT = m.DType, int(m.Shape[r-1])
	return nil
}

// keyRange is the keys [first, end) query row i sees by its band (the mask may see fewer).
func (a *onnxAttention) keyRange(i int) (first, end int) {
	end = a.t
	if a.band.Right >= 0 {
		end = min(end, a.p+i+int(a.band.Right)+1)
	}
	if a.band.Left >= 0 {
		first = min(max(0, a.p+i-int(a.band.Left)), end)
	}
	return first, end
}

// attn23Run is one execution: the tensors and the workspace, for the pool of loop bodies.
type attn23Run struct {
	a                 *onnxAttention
	q, k, v, pk, pv   []byte
	mask, y           []byte
	c2p, p2c          []byte  // the relative bias's tables, nil when absent
	c2pIdx, p2cIdx    []int32 // and their indices
	scores, acc, conv []float32
}

var attn23Runs par.Pool[attn23Run]

func (a *onnxAttention) run(in, out []kernels.Tensor, ws wsParts) error {
	r := attn23Runs.Get()
	defer func() { *r = attn23Run{}; attn23Runs.Put(r) }()
	r.a = a
	r.q, r.k, r.v, r.y = in[0].Data, in[1].Data, in[2].Data, out[0].Data
	if a.p > 0 {
		r.pk, r.pv = in[4].Data, in[5].Data
	}
	if a.mask != graph.Undefined {
		r.mask = in[3].Data
	}
	for _, x := range []struct {
		t    kernels.RelTable
		name string
		tab  *[]byte
		ix   *[]int32
	}{{a.rel.C2P, "rel_c2p", &r.c2p, &r.c2pIdx}, {a.rel.P2C, "rel_p2c", &r.p2c, &r.p2cIdx}} {
		if !x.t.Present {
			continue
		}
		*x.tab, *x.ix = in[x.t.Tab].Data, kernels.ViewAs[int32](in[x.t.Index].Data)
		for e, v := range *x.ix {
			if int64(v) < -x.t.R || int64(v) >= x.t.R {
				return &kernels.RelIndexError{Table: x.name, At: e, Value: v, R: x.t.R}
			}
		}
	}
	r.scores = kernels.ViewAs[float32](ws.bytes(0))
	if a.half {
		r.acc, r.conv = kernels.ViewAs[float32](ws.bytes(1)), kernels.ViewAs[float32](ws.bytes(2))
	}
	par.For(a.tasks, 1, a.participants, r)
	if a.presentK || a.presentV {
		if a.half {
			writePresents[uint16](r, out)
		} else {
			writePresents[float32](r, out)
		}
	}
	return nil
}

func (r *attn23Run) Do(slot, lo, hi int) {
	if r.a.half {
		flashRows[uint16](r, slot, lo, hi)
	} else {
		blockedRows(r, slot, lo, hi)
	}
}

// kvViews are where keys (v false) or values of width w live: the past [B, Hkv, P, w] and the
// new ones through K's or V's view.
func (a *onnxAttention) kvViews(w int, values bool) (past, cur view3) {
	past = bnsh(nil, a.hkv, a.p, w)
	if values {
		return past, viewOf(a.geom.V)
	}
	return past, viewOf(a.geom.K)
}

// viewOf is a kernels.AttnView as a view3 (its data set by the caller).
func viewOf(v kernels.AttnView) view3 {
	return view3{off: int(v.Off), sb: int(v.SB), sh: int(v.SH), st: int(v.SS)}
}

// rowOf returns key or value j of (batch b, kv head h): from past below P, else from cur.
func rowOf[E elt](past, cur []E, pv, cv *view3, p, w, b, h, j int) []E {
	if j < p {
		o := pv.at(b, h, j)
		return past[o : o+w]
	}
	o := cv.at(b, h, j-p)
	return cur[o : o+w]
}

// toF32 returns src as float32s: src itself for float32 (buf is nil then), else converted
// into buf.
func toF32[E elt](src []E, buf []float32, bf bool) []float32 {
	if buf == nil {
		return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(src))), len(src))
	}
	buf = buf[:len(src)]
	for i, x := range src {
		buf[i] = ld(x, bf)
	}
	return buf
}

// flashRows runs tasks [lo, hi) as slot.
func flashRows[E elt](r *attn23Run, slot, lo, hi int) {
	a := r.a
	bf := a.bf
	sc := r.scores[slot*a.blk : (slot+1)*a.blk]
	acc := r.acc[slot*a.dv : (slot+1)*a.dv]
	var qbuf, kvbuf []float32
	if a.half {
		w := a.d + max(a.d, a.dv)
		conv := r.conv[slot*w : (slot+1)*w]
		qbuf, kvbuf = conv[:a.d], conv[a.d:]
	}
	q, k, v := kernels.ViewAs[E](r.q), kernels.ViewAs[E](r.k), kernels.ViewAs[E](r.v)
	pk, pv := kernels.ViewAs[E](r.pk), kernels.ViewAs[E](r.pv)
	y := kernels.ViewAs[E](r.y)
	var maskF []E
	if a.mask != graph.Undefined && a.mask != graph.Bool {
		maskF = kernels.ViewAs[E](r.mask)
	}
	qv, yv := viewOf(a.geom.Q), viewOf(a.geom.Y)
	kpast, kcur := a.kvViews(a.d, false)
	vpast, vcur := a.kvViews(a.dv, true)
	blocks := (a.s + flashRowBlock - 1) / flashRowBlock
	group := a.hq / a.hkv
	negInf := math.Inf(-1)
	rel := a.rel.Present()
	for task := lo; task < hi; task++ {
		bh, rb := task/blocks, task%blocks
		b, h := bh/a.hq, bh%a.hq
		kh := h / group
		for i := rb * flashRowBlock; i < min((rb+1)*flashRowBlock, a.s); i++ {
			qo := qv.at(b, h, i)
			qrow := toF32(q[qo:qo+a.d], qbuf, bf)
			first, keys := a.keyRange(i)
			mo := 0
			if a.mask != graph.Undefined {
				keys = min(keys, a.maskT)
				mo = b*a.maskSB + h*a.maskSH + i*a.maskS
			}
			clear(acc)
			m, l := negInf, 0.0
			for j0 := first; j0 < keys; j0 += a.blk {
				j1 := min(j0+a.blk, keys)
				bmax := negInf
				for j := j0; j < j1; j++ {
					x := a.scale * vec.Dot(qrow, toF32(rowOf(pk, k, &kpast, &kcur, a.p, a.d, b, kh, j), kvbuf, bf))
					if a.softcap > 0 {
						x = a.softcap * float32(math.Tanh(float64(x/a.softcap)))
					}
					if rel {
						x += relTerm[E](r, b, h, i, j)
					}
					switch {
					case maskF != nil:
						x += ld(maskF[mo+j], bf)
					case r.mask != nil && r.mask[mo+j] == 0:
						x = float32(negInf)
					}
					sc[j-j0] = x
					bmax = max(bmax, float64(x))
				}
				if math.IsInf(bmax, -1) {
					continue
				}
				if bmax > m {
					if l > 0 {
						alpha := math.Exp(m - bmax)
						l *= alpha
						for c := range acc {
							acc[c] *= float32(alpha)
						}
					}
					m = bmax
				}
				for j := j0; j < j1; j++ {
					if math.IsInf(float64(sc[j-j0]), -1) {
						continue
					}
					p := math.Exp(float64(sc[j-j0]) - m)
					l += p
					vec.Axpy(float32(p), toF32(rowOf(pv, v, &vpast, &vcur, a.p, a.dv, b, kh, j), kvbuf, bf), acc)
				}
			}
			yo := yv.at(b, h, i)
			yrow := y[yo : yo+a.dv]
			inv := float32(0)
			if l > 0 {
				inv = float32(1 / l)
			}
			if !a.half { // float32 written out: the generic stores are not inlined
				for c, x := range acc {
					yrow[c] = E(x * inv)
				}
				continue
			}
			for c, x := range acc {
				yrow[c] = st[E](x*inv, bf)
			}
		}
	}
}

// writePresents copies the past and the new keys and values into present_key and
// present_value, [B, Hkv, T, D|Dv].
func writePresents[E elt](r *attn23Run, out []kernels.Tensor) {
	a := r.a
	for _, o := range []struct {
		on       bool
		out      int
		past, kv []byte
		w        int
	}{{a.presentK, 1, r.pk, r.k, a.d}, {a.presentV, 2, r.pv, r.v, a.dv}} {
		if !o.on {
			continue
		}
		past, cur := kernels.ViewAs[E](o.past), kernels.ViewAs[E](o.kv)
		pv, cv := a.kvViews(o.w, o.out == 2)
		dst := kernels.ViewAs[E](out[o.out].Data)
		dv := bnsh(nil, a.hkv, a.t, o.w)
		for b := 0; b < a.b; b++ {
			for h := 0; h < a.hkv; h++ {
				for j := 0; j < a.t; j++ {
					d := dv.at(b, h, j)
					copy(dst[d:d+o.w], rowOf(past, cur, &pv, &cv, a.p, o.w, b, h, j))
				}
			}
		}
	}
}

func onnxAttentionOps() []*op {
	return []*op{{
		key: kernels.Key("", "Attention"),
		tactics: []kernels.TacticInfo{{Name: "flash", Workspace: true,
			Summary: "online softmax over blocks of keys (float32: 64 query rows x 256 keys as two gemm products); per-worker scratch independent of the sequence"}},
		sel:   selectONNXAttention,
		bound: boundONNXAttention,
	}}
}

// relTerm is the relative bias of query i's score for key j (batch b, query head h): each
// table's term at the entry its index holds for i - j + T - 1 (run checked the entries).
func relTerm[E elt](r *attn23Run, b, h, i, j int) float32 {
	a := r.a
	e := i - j + a.t - 1
	var x float32
	if t := a.rel.C2P; t.Present {
		k := int(r.c2pIdx[e])
		if k < 0 {
			k += int(t.R)
		}
		x += ld(kernels.ViewAs[E](r.c2p)[b*int(t.SB)+h*int(t.SH)+i*int(t.R)+k], a.bf)
	}
	if t := a.rel.P2C; t.Present {
		k := int(r.p2cIdx[e])
		if k < 0 {
			k += int(t.R)
		}
		x += ld(kernels.ViewAs[E](r.p2c)[b*int(t.SB)+h*int(t.SH)+j*int(t.R)+k], a.bf)
	}
	return x
}

// addRel adds the float32 relative bias of query i (batch b, query head h) to the scores x of
// keys j0, j0+1, ...: key j0+k reads entry d0-k of each index.
func (r *attn23Run) addRel(x []float32, b, h, i, j0 int) {
	a := r.a
	d0 := i - j0 + a.t - 1
	if t := a.rel.C2P; t.Present {
		o := b*int(t.SB) + h*int(t.SH) + i*int(t.R)
		row, idx, n := kernels.ViewAs[float32](r.c2p)[o:o+int(t.R)], r.c2pIdx[d0-len(x)+1:d0+1], int32(t.R)
		for k := range x {
			e := idx[len(x)-1-k]
			if e < 0 {
				e += n
			}
			x[k] += row[e]
		}
	}
	if t := a.rel.P2C; t.Present {
		o, w := b*int(t.SB)+h*int(t.SH)+j0*int(t.R), int(t.R)
		tab, idx, n := kernels.ViewAs[float32](r.p2c)[o:o+len(x)*w], r.p2cIdx[d0-len(x)+1:d0+1], int32(t.R)
		for k := range x {
			e := idx[len(x)-1-k]
			if e < 0 {
				e += n
			}
			x[k] += tab[k*w+int(e)]
		}
	}
}
