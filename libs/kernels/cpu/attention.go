package cpu

import (
	"fmt"
	"math"
	"sync"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
)

// The attention kernels (Attention, MultiHeadAttention, GroupQueryAttention) share one core:
// each query row's scores against its keys go to per-worker scratch in the workspace, are
// softmaxed there, and weight the values.
//
// Tactics, switched on the key length T (a pure function of shapes):
//   - "full" (T < splitKVMinT): tasks of (batch, head, block of query rows); each row's T
//     scores live in the task's scratch slot.
//   - "split-kv" (T >= splitKVMinT): the keys are cut into chunks of splitKVChunk; a task is
//     (batch, head, chunk) and writes, per query row, its chunk's unnormalized output, running
//     max and running sum to workspace partials; a second pass combines the chunks of a row
//     (flash-decoding). It gives decode steps (one query, long history) parallel work.
const (
	splitKVMinT  = 512
	splitKVChunk = 128
	attnRowBlock = 16
)

// attnTactic is the tactic rule.
func attnTactic(t int64) string {
	if t >= splitKVMinT {
		return "split-kv"
	}
	return "full"
}

// attnScratchParts is the recipe of the attention core: per-slot score scratch and, for
// split-kv, the partials. slots is the number of workers that can hold a scratch row at once.
func attnScratchParts(b, heads, s, t, dv, workers int64) ([]alloc.Part, error) {
	if attnTactic(t) == "full" {
		tasks, err := kernels.Product(b, heads, (s+attnRowBlock-1)/attnRowBlock)
		if err != nil {
			return nil, err
		}
		sz, err := kernels.Product(max(min(workers, tasks), 1), t, 4)
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
	sc, err := kernels.Product(max(min(workers, tasks), 1), splitKVChunk, 4)
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

// keyMask is an attention mask in one of onnxruntime's formats; its data is read at run time.
type keyMask struct {
	kind string // "", "lengths" [B], "startend" [2B], "raw2" [B, T], "raw3" [B, S, T]
	t    int    // last dim of the raw formats
	s    int
}

func newKeyMask(v kernels.Value, b, s, t int64) (keyMask, error) {
	switch {
	case len(v.Shape) == 1 && v.Shape[0] == b:
		return keyMask{kind: "lengths"}, nil
	case len(v.Shape) == 1 && v.Shape[0] == 2*b:
		return keyMask{kind: "startend"}, nil
	case len(v.Shape) == 2 && v.Shape[0] == b && v.Shape[1] <= t:
		return keyMask{kind: "raw2", t: int(v.Shape[1])}, nil
	case len(v.Shape) == 3 && v.Shape[0] == b && v.Shape[1] == s && v.Shape[2] <= t:
		return keyMask{kind: "raw3", t: int(v.Shape[2]), s: int(s)}, nil
	}
	return keyMask{}, fmt.Errorf("mask shape %v is not supported (want [B], [2B], [B, T] or [B, S, T])", v.Shape)
}

// masked reports whether key j is masked for query i of batch b.
func (m *keyMask) masked(data []int32, b, i, j, bsz int) bool {
	switch m.kind {
	case "lengths":
		return j >= int(data[b])
	case "startend":
		return j >= int(data[b]) || j < int(data[bsz+b])
	case "raw2":
		return j >= m.t || data[b*m.t+j] == 0
	case "raw3":
		return j >= m.t || data[(b*m.s+i)*m.t+j] == 0
	}
	return false
}

// attnCore is the geometry and semantics of one attention node, fixed at Select.
type attnCore struct {
	b, s, nq, nkv, d, dv int
	t                    int // key capacity
	tactic               string
	chunks               int
	slots                int
	scale                float32
	filter               float32 // mask_filter_value, added to masked scores
	causalAdd            bool    // Attention/MHA unidirectional: future keys get filter added
	causalExcl           bool    // GQA: future keys are excluded
	window               int     // GQA local window; <= 0 means none
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

var attnRuns = sync.Pool{New: func() any { return new(attnRun) }}

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
			if c.window > 0 && hi > c.window+1 {
				lo = hi - c.window - 1
			}
		}
	}
	return lo, hi
}

// dot and axpy use gonum's level-1 BLAS, whose unit-stride kernels are assembly.
func dot(a, b []float32) float32 { return blasImpl.Sdot(len(a), a, 1, b[:len(a)], 1) }

func axpy(alpha float32, x, y []float32) { blasImpl.Saxpy(len(y), alpha, x[:len(y)], 1, y, 1) }

// scores fills sc with the exponentiated, max-shifted scores of row i of (b, head n) against
// keys [j0, j1) and returns the max and the sum of the exponentials. Excluded keys get 0.
func (r *attnRun) scores(b, n, i, j0, j1 int, sc []float32) (m, l float64) {
	c := r.c
	kh := n / (c.nq / c.nkv)
	lo, hi := r.keyRange(b, i)
	qo := r.q.at(b, n, i)
	q := r.q.data[qo : qo+c.d]
	m = math.Inf(-1)
	pastTotal := r.pastLen // absolute position of query i is pastTotal + i for the additive causal rule
	for j := j0; j < j1; j++ {
		if j < lo || j >= hi {
			sc[j-j0] = float32(math.Inf(-1))
			continue
		}
		v := c.scale * dot(q, r.key(b, kh, j))
		if c.softcap > 0 {
			v = c.softcap * float32(math.Tanh(float64(v/c.softcap)))
		}
		if c.hasBias && j < c.biasT {
			v += r.bias[b*c.biasSB+n*c.biasSH+i*c.biasT+j]
		}
		if c.causalAdd && j > pastTotal+i {
			v += c.filter
		}
		if c.hasMask && c.mask.masked(r.mask, b, i, j, c.b) {
			v += c.filter
		}
		sc[j-j0] = v
		m = max(m, float64(v))
	}
	if math.IsInf(m, -1) {
		clear(sc[:j1-j0])
		return m, 0
	}
	for j := range sc[:j1-j0] {
		e := math.Exp(float64(sc[j]) - m)
		sc[j] = float32(e)
		l += e
	}
	return m, l
}

func (r *attnRun) Do(slot, lo, hi int) {
	c := r.c
	switch {
	case c.tactic == "full":
		sc := r.scratch[slot*c.t : (slot+1)*c.t]
		blocks := (c.s + attnRowBlock - 1) / attnRowBlock
		for task := lo; task < hi; task++ {
			bn, rb := task/blocks, task%blocks
			b, n := bn/c.nq, bn%c.nq
			kh := n / (c.nq / c.nkv)
			for i := rb * attnRowBlock; i < min((rb+1)*attnRowBlock, c.s); i++ {
				_, l := r.scores(b, n, 0+i, 0, r.pastLen+r.curLen, sc)
				oo := r.o.at(b, n, i)
				out := r.o.data[oo : oo+c.dv]
				clear(out)
				if l == 0 {
					continue
				}
				inv := float32(1 / l)
				for j, p := range sc[:r.pastLen+r.curLen] {
					if p != 0 {
						axpy(p*inv, r.value(b, kh, j), out)
					}
				}
			}
		}
	case r.pass == 0: // split-kv partials
		sc := r.scratch[slot*splitKVChunk : (slot+1)*splitKVChunk]
		for task := lo; task < hi; task++ {
			bn, ch := task/c.chunks, task%c.chunks
			b, n := bn/c.nq, bn%c.nq
			kh := n / (c.nq / c.nkv)
			j0 := ch * splitKVChunk
			j1 := min(j0+splitKVChunk, r.pastLen+r.curLen)
			for i := 0; i < c.s; i++ {
				row := task*c.s + i
				po := r.po[row*c.dv : (row+1)*c.dv]
				clear(po)
				m, l := r.scores(b, n, i, j0, max(j1, j0), sc)
				r.pm[row], r.pl[row] = float32(m), float32(l)
				if l == 0 {
					continue
				}
				for j := j0; j < j1; j++ {
					if p := sc[j-j0]; p != 0 {
						axpy(p, r.value(b, kh, j), po)
					}
				}
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
					w := float32(math.Exp(float64(r.pm[row])-mx) / den)
					axpy(w, r.po[row*c.dv:(row+1)*c.dv], out)
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
		par.For(tasks, 1, c.slots, r)
		return
	}
	r.po, r.pm, r.pl = kernels.ViewAs[float32](ws.bytes(1)), kernels.ViewAs[float32](ws.bytes(2)), kernels.ViewAs[float32](ws.bytes(3))
	r.pass = 0
	par.For(c.b*c.nq*c.chunks, 1, c.slots, r)
	r.pass = 1
	par.For(c.b*c.nq*c.s, 16, c.slots, r)
}

// setTactic fixes the tactic and slot count from the key capacity.
func (c *attnCore) setTactic(workers int) {
	c.tactic = attnTactic(int64(c.t))
	c.chunks = (c.t + splitKVChunk - 1) / splitKVChunk
	tasks := c.b * c.nq * ((c.s + attnRowBlock - 1) / attnRowBlock)
	if c.tactic != "full" {
		tasks = c.b * c.nq * c.chunks
	}
	c.slots = max(min(workers, tasks), 1)
}

// checkBias validates an attention_bias of shape [B or 1, N or 1, S, T] and sets its strides.
func (c *attnCore) checkBias(v kernels.Value) error {
	s := v.Shape
	if len(s) != 4 || (s[0] != 1 && s[0] != int64(c.b)) || (s[1] != 1 && s[1] != int64(c.nq)) || s[2] != int64(c.s) || s[3] > int64(c.t) {
		return fmt.Errorf("attention_bias shape %v, want [%d or 1, %d or 1, %d, <= %d]", s, c.b, c.nq, c.s, c.t)
	}
	if v.DType != graph.Float32 {
		return fmt.Errorf("attention_bias is %v, want float32", v.DType)
	}
	c.hasBias, c.biasT = true, int(s[3])
	if s[0] != 1 {
		c.biasSB = int(s[1] * s[2] * s[3])
	}
	if s[1] != 1 {
		c.biasSH = int(s[2] * s[3])
	}
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
