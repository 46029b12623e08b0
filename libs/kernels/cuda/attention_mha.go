package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// com.microsoft.MultiHeadAttention: the query, key and value layouts of onnxruntime (separate
// 3-D, packed QKV, packed KV, BNSH key/value), an optional bias added into workspace "biased",
// past keys and values concatenated with the new ones into the present outputs (or workspace
// "kv" when the node has a past but no present outputs), key padding masks and attention_bias
// added with mask_filter_value, and the additive causal rule of unidirectional.

// mhaLayout is kernels.MHALayout, by its short names here.
type mhaLayout = kernels.MHALayout

const (
	mhaSeparate  = kernels.MHASeparate
	mhaPackedQKV = kernels.MHAPackedQKV
	mhaPackedKV  = kernels.MHAPackedKV
	mhaBNSH      = kernels.MHABNSH
)

type mhaGeom struct {
	attnGeom
	layout mhaLayout
	l, p   int64 // new keys, past keys
}

// mhaDims reads the geometry from the query, key, value and past_key dims (nil when absent):
// kernels.MHADims's, in this backend's terms.
func mhaDims(at graph.Attributes, q, k, v, pk []int64) (mhaGeom, error) {
	m, err := kernels.MHADims(at, q, k, v, pk)
	return mhaGeomOf(m), err
}

func mhaGeomOf(m kernels.MHAGeom) mhaGeom {
	return mhaGeom{attnGeom: attnGeom{b: m.B, s: m.S, nq: m.Heads, nkv: m.Heads, d: m.D, dv: m.Dv, t: m.T}, layout: m.Layout, l: m.L, p: m.P}
}

// mhaParts is the recipe before the partials: "biased" (bias given) and "kv" (keys or values
// that have a past but no present output), in that order.
func mhaParts(g mhaGeom, es int64, bias, kvK, kvV bool) ([]alloc.Part, error) {
	var parts []alloc.Part
	if bias {
		sz, err := kernels.Product(g.b, g.s*g.nq*g.d+g.l*g.nq*g.d+g.l*g.nq*g.dv, es)
		if err != nil {
			return nil, err
		}
		parts = append(parts, alloc.Part{Name: "biased", Size: sz})
	}
	if kvK || kvV {
		var w int64
		if kvK {
			w += g.d
		}
		if kvV {
			w += g.dv
		}
		sz, err := kernels.Product(g.b, g.nq, g.t, w, es)
		if err != nil {
			return nil, err
		}
		parts = append(parts, alloc.Part{Name: "kv", Size: sz})
	}
	return parts, nil
}

// kvView is where the core reads keys or values: a reference and element strides for batch,
// head and position.
type kvView struct {
	ref        param
	sb, sh, st int64
}

// coreOver sets the core's keys and values to the views k and v, checks that the strides fit
// the kernels' 32-bit arguments and appends the core's launches (none for an empty output) to
// prog: how MultiHeadAttention and the contrib Attention end their selection. op names the op
// in the error.
func coreOver(prog program, dt graph.DType, g attnGeom, tac attnTactic, x attnArgs, k, v kvView, op string, t kernels.Target) (program, error) {
	x.k, x.ksb, x.ksh, x.kst = k.ref, k.sb, k.sh, k.st
	x.v, x.vsb, x.vsh, x.vst = v.ref, v.sb, v.sh, v.st
	if !fits32(x.qss, x.qsh, x.ksh, x.kst, x.vsh, x.vst) {
		return nil, fmt.Errorf("%s strides are too large for the CUDA kernels", op)
	}
	if g.b*g.s*g.nq == 0 {
		return prog, nil
	}
	steps, err := attnSteps(dt, g, tac, x, t)
	if err != nil {
		return nil, err
	}
	return append(prog, steps...), nil
}

// cacheSteps lays keys or values out at dst as a BNSH cache of b x n heads, total positions of
// width elements each: the past's p positions from past first (when copyPast and p > 0; past is
// BNSH of p positions), then src's s new positions after them. It returns the copies and dst's
// view. MultiHeadAttention and the contrib Attention both build their present this way.
func cacheSteps(b, n, p, s, total, width, es int64, src kvView, past param, copyPast bool, dst param, t kernels.Target) ([]step, kvView, error) {
	view := kvView{dst, n * total * width, total * width, width}
	var steps []step
	if copyPast && p > 0 {
		l, err := newLayout([]int64{b, n, p, width}, stridesOf([]int64{b, n, p, width}), []int64{view.sb, view.sh, view.st, 1})
		if err != nil {
			return nil, kvView{}, err
		}
		if steps, err = copySteps(l, es, past, dst, t); err != nil {
			return nil, kvView{}, err
		}
	}
	l, err := newLayout([]int64{b, n, s, width}, []int64{src.sb, src.sh, src.st, 1}, []int64{view.sb, view.sh, view.st, 1})
	if err != nil {
		return nil, kvView{}, err
	}
	news, err := copySteps(l, es, src.ref, dst.at(p*width*es), t)
	if err != nil {
		return nil, kvView{}, err
	}
	return append(steps, news...), view, nil
}

func selectMHA(n *kernels.Node, t kernels.Target) (plan, error) {
	mn, err := kernels.CheckMHA(n)
	if err != nil {
		return plan{}, err
	}
	dt := n.Inputs[0].DType
	es := dt.Size()
	g := mhaGeomOf(mn.MHAGeom)
	at := n.Attrs
	N, D, Dv := g.nq, g.d, g.dv
	hq, hv := N*D, N*Dv
	x := attnArgs{
		out: outp(0), part: nullp(), seqlens: nullp(), total: nullp(), mask: nullp(), bias: nullp(),
		cos: nullp(), sin: nullp(), pos: nullp(), pastLen: g.p,
		scale: attnScale(at, D), filter: at.Float("mask_filter_value", -10000), window: -1,
	}
	if at.Int("unidirectional", 0) != 0 {
		x.flags |= attCausalAdd
	}
	hasBias, okPK, presK, presV := mn.Bias, mn.Past, mn.PresentK, mn.PresentV
	if mk, ok := n.Input(4); ok {
		if x.maskKind, x.maskT, err = maskKindOf(mk, g.b, g.s, g.t); err != nil {
			return plan{}, err
		}
		x.mask = inp(4)
	}
	if ab, ok := n.Input(5); ok {
		if err := biasArgs(ab, dt, g.b, g.s, N, g.t, &x); err != nil {
			return plan{}, err
		}
		x.bias = inp(5)
	}
	if !fits32(g.b, g.s, N, D, Dv, g.t, g.l, g.p) {
		return plan{}, fmt.Errorf("MHA geometry %+v is too large for the CUDA kernels", g.attnGeom)
	}
	kvK, kvV := okPK && !presK, okPK && !presV
	parts, err := mhaParts(g, es, hasBias, kvK, kvV)
	if err != nil {
		return plan{}, err
	}
	tac, err := attnPlan(g.attnGeom, int64(t.SMs))
	if err != nil {
		return plan{}, err
	}
	if parts, err = x.addPartials(parts, tac.chunks, g.b*N*g.s, Dv); err != nil {
		return plan{}, err
	}

	// where the new queries, keys and values are
	var prog program
	var kSrc, vSrc kvView
	x.q, x.qss, x.qsh = inp(0), hq, D
	switch g.layout {
	case mhaPackedQKV:
		w := N * 3 * D
		x.qss, x.qsh = w, 3*D
		kSrc = kvView{inp(0).at(D * es), g.s * w, 3 * D, w}
		vSrc = kvView{inp(0).at(2 * D * es), g.s * w, 3 * D, w}
	case mhaPackedKV:
		w := N * 2 * D
		kSrc = kvView{inp(1), g.l * w, 2 * D, w}
		vSrc = kvView{inp(1).at(D * es), g.l * w, 2 * D, w}
	case mhaBNSH:
		kSrc = kvView{inp(1), N * g.l * D, g.l * D, D}
		vSrc = kvView{inp(2), N * g.l * Dv, g.l * Dv, Dv}
	default:
		kSrc = kvView{inp(1), g.l * hq, D, hq}
		vSrc = kvView{inp(2), g.l * hv, Dv, hv}
		if hasBias {
			nq, nk := g.b*g.s*hq, g.b*g.l*hq
			qb, kb, vb := wsp(0), wsp(0).at(nq*es), wsp(0).at((nq+nk)*es)
			for _, a := range []struct {
				dst, src param
				shape    []int64
				w, off   int64
			}{{qb, inp(0), []int64{g.b, g.s, hq}, hq, 0}, {kb, inp(1), []int64{g.b, g.l, hq}, hq, hq}, {vb, inp(2), []int64{g.b, g.l, hv}, hv, 2 * hq}} {
				steps, err := ewSteps(dt, ewAdd, graph.Undefined, a.shape, a.dst, operand{a.src, a.shape}, operand{inp(3).at(a.off * es), []int64{a.w}}, absent(), 0, 0, t)
				if err != nil {
					return plan{}, err
				}
				prog = append(prog, steps...)
			}
			x.q = qb
			kSrc.ref, vSrc.ref = kb, vb
		}
	}

	// keys and values the core reads: the sources, or the present outputs / workspace holding
	// the past followed by the new ones
	kvIdx := 0
	if hasBias {
		kvIdx = 1
	}
	place := func(src kvView, past param, present bool, outIdx int, width, kvOff int64) (kvView, error) {
		if !present && !okPK {
			return src, nil
		}
		dst := outp(outIdx)
		if !present {
			dst = wsp(kvIdx).at(kvOff)
		}
		steps, view, err := cacheSteps(g.b, N, g.p, g.l, g.t, width, es, src, past, okPK, dst, t)
		prog = append(prog, steps...)
		return view, err
	}
	kv, err := place(kSrc, inp(6), presK, 1, D, 0)
	if err != nil {
		return plan{}, err
	}
	vOff := int64(0)
	if kvK {
		vOff = g.b * N * g.t * D * es
	}
	vv, err := place(vSrc, inp(7), presV, 2, Dv, vOff)
	if err != nil {
		return plan{}, err
	}
	if prog, err = coreOver(prog, dt, g.attnGeom, tac, x, kv, vv, "MHA", t); err != nil {
		return plan{}, err
	}
	return plan{tactic: tac.name(), parts: parts, prog: prog}, nil
}

func boundMHA(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	q, okQ := r.Input(0)
	if !okQ {
		return kernels.Bound{}, fmt.Errorf("query is missing")
	}
	k, okK := r.Input(1)
	v, okV := r.Input(2)
	pk, okP := r.Input(6)
	geom := func(hi bool) (mhaGeom, error) {
		return mhaDims(r.Attrs, rangeDims(q, true, hi), rangeDims(k, okK, hi), rangeDims(v, okV, hi), rangeDims(pk, okP, hi))
	}
	lo, err := geom(false)
	if err != nil {
		return kernels.Bound{}, err
	}
	hi, err := geom(true)
	if err != nil {
		return kernels.Bound{}, err
	}
	_, bias := r.Input(3)
	_, presK := r.Output(1)
	_, presV := r.Output(2)
	parts, err := mhaParts(hi, q.DType.Size(), bias, okP && !presK, okP && !presV)
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
	if len(parts) == 0 {
		return kernels.Bound{}, nil
	}
	return recipeBound(tactic, parts)
}
