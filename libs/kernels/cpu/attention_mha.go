package cpu

import (
	"fmt"
	"slices"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

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
