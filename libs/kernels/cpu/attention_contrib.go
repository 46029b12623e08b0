package cpu

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/gemm"
	"carve.dev/libs/kernels/internal/par"
)

// attentionGeom: input [B, S, Hin], weights [Hin, Hq+Hk+Hv], past [2, B, N, P, D].
func attentionGeom(src geomSrc, hi bool) (attnDims, error) {
	m, err := kernels.ContribDims(src.attrs(), dimEnds(src.dims(0), hi), dimEnds(src.dims(1), hi), dimEnds(src.dims(4), hi))
	if err != nil {
		return attnDims{}, err
	}
	total := m.Total
	g := attnDims{b: m.B, s: m.S, nq: m.Heads, d: m.D, dv: m.Dv, t: m.T}
	part, err := f32Part("qkv", g.b, g.s, total)
	if err != nil {
		return attnDims{}, err
	}
	g.extra = []alloc.Part{part}
	g.proj = [3]int64{g.b * g.s, total, m.Hin}
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
	ca, err := kernels.CheckContribAttention(n)
	if err != nil {
		return plan{}, err
	}
	if x, w := n.Inputs[0], n.Inputs[1]; x.DType != graph.Float32 {
		return plan{}, fmt.Errorf("input %v and weights %v, want float32 [B, S, H] and [H, 3H']", x, w)
	}
	g, err := attentionGeom(nodeSrc{n}, true)
	if err != nil {
		return plan{}, err
	}
	at := n.Attrs
	a := &attention{hin: int(ca.Hin), workers: d.Workers, bias: ca.Bias, present: ca.Present}
	total := int(ca.Total)
	a.hq, a.hk, a.hv = int(ca.HQ), int(ca.HK), int(ca.HV)
	heads := int(ca.Heads)
	c := &a.core
	c.b, c.s, c.nq, c.nkv, c.d, c.dv = int(ca.B), int(ca.S), heads, heads, int(ca.D), int(ca.Dv)
	c.t = int(ca.T)
	c.scale = attnScale(at, c.d)
	c.filter = at.Float("mask_filter_value", -10000)
	c.causalAdd = at.Int("unidirectional", 0) != 0
	if m, ok := n.Input(3); ok {
		if c.mask, err = newKeyMask(m, int64(c.b), int64(c.s), int64(c.t)); err != nil {
			return plan{}, err
		}
		c.hasMask = true
	}
	if ca.Past {
		a.p, a.hasPast = int(ca.P), true
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
