package cpu

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// mhaLayout is kernels.MHALayout, by its short names here.
type mhaLayout = kernels.MHALayout

const (
	mhaSeparate  = kernels.MHASeparate
	mhaPackedQKV = kernels.MHAPackedQKV
	mhaPackedKV  = kernels.MHAPackedKV
	mhaBNSH      = kernels.MHABNSH
)

func mhaGeom(src geomSrc, hi bool) (attnDims, error) {
	m, err := kernels.MHADims(src.attrs(), dimEnds(src.dims(0), hi), dimEnds(src.dims(1), hi), dimEnds(src.dims(2), hi), dimEnds(src.dims(6), hi))
	if err != nil {
		return attnDims{}, err
	}
	g := attnDims{b: m.B, s: m.S, nq: m.Heads, d: m.D, dv: m.Dv, t: m.T}
	if src.dims(3) != nil && m.Layout == mhaSeparate { // bias: biased copies of Q, K and V
		part, err := f32Part("biased", g.b, g.s*m.Heads*m.D+m.L*m.Heads*m.D+m.L*m.Heads*m.Dv)
		if err != nil {
			return attnDims{}, err
		}
		g.extra = []alloc.Part{part}
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
	mn, err := kernels.CheckMHA(n)
	if err != nil {
		return plan{}, err
	}
	if dt := n.Inputs[0].DType; dt != graph.Float32 {
		return plan{}, fmt.Errorf("the query is %v, want float32", dt)
	}
	g, err := mhaGeom(nodeSrc{n}, true)
	if err != nil {
		return plan{}, err
	}
	at := n.Attrs
	heads := int(mn.Heads)
	m := &mha{workers: d.Workers, layout: mn.Layout, l: int(mn.L), p: int(mn.P), bias: mn.Bias, presentK: mn.PresentK, presentV: mn.PresentV}
	c := &m.core
	c.b, c.s, c.nq, c.nkv, c.d, c.dv = int(mn.B), int(mn.S), heads, heads, int(mn.D), int(mn.Dv)
	m.hq, m.hk, m.hv = heads*c.d, heads*c.d, heads*c.dv
	c.t = int(mn.T)
	c.scale = attnScale(at, c.d)
	c.filter = at.Float("mask_filter_value", -10000)
	c.causalAdd = at.Int("unidirectional", 0) != 0
	if mk, ok := n.Input(4); ok {
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
