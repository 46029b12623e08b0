package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// com.microsoft.Attention: the QKV projection (input x weights, a cuBLASLt GEMM into workspace
// "qkv", plus the bias), then the attention core over views of it. A past [2, B, N, P, D] is
// concatenated with the new keys and values into the present output (or workspace "kv").

type contribGeom struct {
	attnGeom
	hin, total, hq, hk, hv, p int64
}

// contribDims is kernels.ContribDims's geometry in this backend's terms.
func contribDims(at graph.Attributes, x, w, past []int64) (contribGeom, error) {
	m, err := kernels.ContribDims(at, x, w, past)
	if err != nil {
		return contribGeom{}, err
	}
	return contribGeom{attnGeom: attnGeom{b: m.B, s: m.S, nq: m.Heads, nkv: m.Heads, d: m.D, dv: m.Dv, t: m.T},
		hin: m.Hin, total: m.Total, hq: m.HQ, hk: m.HK, hv: m.HV, p: m.P}, nil
}

// contribParts is the recipe before the partials: "qkv", the GEMM's "cublas" cap and "kv" when
// there is a past but no present output.
func contribParts(g contribGeom, es int64, kv bool, t kernels.Target) ([]alloc.Part, error) {
	q, err := kernels.Product(g.b, g.s, g.total, es)
	if err != nil {
		return nil, err
	}
	parts := []alloc.Part{{Name: "qkv", Size: q}, {Name: gemmPart, Size: gemmWorkspace(t)}}
	if kv {
		sz, err := kernels.Product(2, g.b, g.nq, g.t, g.d, es)
		if err != nil {
			return nil, err
		}
		parts = append(parts, alloc.Part{Name: "kv", Size: sz})
	}
	return parts, nil
}

func selectAttention(n *kernels.Node, t kernels.Target) (plan, error) {
	ca, err := kernels.CheckContribAttention(n)
	if err != nil {
		return plan{}, err
	}
	at := n.Attrs
	x, w := n.Inputs[0], n.Inputs[1]
	dt := x.DType
	var pastShape []int64
	hasPast, present := ca.Past, ca.Present
	if hasPast {
		pastShape = n.Inputs[4].Shape
	}
	g, err := contribDims(at, x.Shape, w.Shape, pastShape)
	if err != nil {
		return plan{}, err
	}
	es := dt.Size()
	N, D, Dv := g.nq, g.d, g.dv
	xa := attnArgs{
		out: outp(0), part: nullp(), seqlens: nullp(), total: nullp(), mask: nullp(), bias: nullp(),
		cos: nullp(), sin: nullp(), pos: nullp(), pastLen: g.p,
		scale: attnScale(at, D), filter: at.Float("mask_filter_value", -10000), window: -1,
	}
	if at.Int("unidirectional", 0) != 0 {
		xa.flags |= attCausalAdd
	}
	bias := nullp()
	if ca.Bias {
		bias = inp(2)
	}
	if m, ok := n.Input(3); ok {
		if xa.maskKind, xa.maskT, err = maskKindOf(m, g.b, g.s, g.t); err != nil {
			return plan{}, err
		}
		xa.mask = inp(3)
	}
	if ab, ok := n.Input(5); ok {
		if err := biasArgs(ab, dt, g.b, g.s, N, g.t, &xa); err != nil {
			return plan{}, err
		}
		xa.bias = inp(5)
	}
	if !fits32(g.b, g.s, N, D, Dv, g.t, g.total, g.hin, g.p) {
		return plan{}, fmt.Errorf("Attention geometry %+v is too large for the CUDA kernels", g.attnGeom)
	}
	parts, err := contribParts(g, es, hasPast && !present, t)
	if err != nil {
		return plan{}, err
	}
	tac, err := attnPlan(g.attnGeom, int64(t.SMs))
	if err != nil {
		return plan{}, err
	}
	if parts, err = xa.addPartials(parts, tac.chunks, g.b*N*g.s, Dv); err != nil {
		return plan{}, err
	}
	rows := g.b * g.s
	prog := program{{call: &partProduct{label: "Attention/qkv", dt: dt, m: rows, n: g.total, k: g.hin, weight: 1, dst: wsp(0)}}}
	if bias.kind != litRef && rows > 0 {
		steps, err := ewSteps(dt, ewAdd, graph.Undefined, []int64{rows, g.total}, wsp(0), operand{wsp(0), []int64{rows, g.total}},
			operand{bias, []int64{g.total}}, absent(), 0, 0, t)
		if err != nil {
			return plan{}, err
		}
		prog = append(prog, steps...)
	}
	xa.q, xa.qss, xa.qsh = wsp(0), g.total, D
	kSrc := kvView{wsp(0).at(g.hq * es), g.s * g.total, D, g.total}
	vSrc := kvView{wsp(0).at((g.hq + g.hk) * es), g.s * g.total, Dv, g.total}
	kv, vv := kSrc, vSrc
	if present || hasPast {
		dst := outp(1)
		if !present {
			dst = wsp(2)
		}
		half := g.b * N * g.t * D * es
		place := func(src kvView, past, dst param) (kvView, error) {
			steps, view, err := cacheSteps(g.b, N, g.p, g.s, g.t, D, es, src, past, hasPast, dst, t)
			prog = append(prog, steps...)
			return view, err
		}
		pastHalf := g.b * N * g.p * D * es
		if kv, err = place(kSrc, inp(4), dst); err != nil {
			return plan{}, err
		}
		if vv, err = place(vSrc, inp(4).at(pastHalf), dst.at(half)); err != nil {
			return plan{}, err
		}
	}
	if prog, err = coreOver(prog, dt, g.attnGeom, tac, xa, kv, vv, "Attention", t); err != nil {
		return plan{}, err
	}
	return plan{tactic: tac.name(), parts: parts, prog: prog}, nil
}

func boundAttention(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	x, okX := r.Input(0)
	w, okW := r.Input(1)
	if !okX || !okW {
		return kernels.Bound{}, fmt.Errorf("input or weights missing")
	}
	p, okP := r.Input(4)
	geom := func(hi bool) (contribGeom, error) {
		return contribDims(r.Attrs, rangeDims(x, true, hi), rangeDims(w, true, hi), rangeDims(p, okP, hi))
	}
	lo, err := geom(false)
	if err != nil {
		return kernels.Bound{}, err
	}
	hi, err := geom(true)
	if err != nil {
		return kernels.Bound{}, err
	}
	_, present := r.Output(1)
	parts, err := contribParts(hi, x.DType.Size(), okP && !present, t)
	if err != nil {
		return kernels.Bound{}, err
	}
	tactic := "fused"
	pb, err := attnBoundParts(lo.b, hi.b, lo.s, hi.s, hi.nq, hi.nkv, hi.dv, hi.t, false, t)
	if err != nil {
		return kernels.Bound{}, err
	}
	if pb > 0 {
		tactic = "split-kv"
		parts = append(parts, alloc.Part{Name: "partials", Size: pb})
	}
	return recipeBound(tactic, parts)
}
