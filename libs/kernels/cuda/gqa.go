package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// gqaDims reads a GQA node's (or range's) geometry from the query, key, past_key and
// present_key dims: kernels.GQADims's, in this backend's terms.
func gqaDims(at graph.Attributes, q, key, past, present []int64) (g attnGeom, packed bool, err error) {
	m, err := kernels.GQADims(at, q, key, past, present)
	return gqaGeomOf(m), m.Packed, err
}

func gqaGeomOf(m kernels.GQAGeom) attnGeom {
	return attnGeom{b: m.B, s: m.S, nq: m.Heads, nkv: m.KVHeads, d: m.D, dv: m.D, t: m.T}
}

// gqaKVPart is workspace "kv" when the present outputs are absent: the keys and values the core
// reads, [2, B, Nkv, T, D].
func gqaKVPart(g attnGeom, es int64) (alloc.Part, error) {
	sz, err := kernels.Product(2, g.b, g.nkv, g.t, g.d, es)
	return alloc.Part{Name: "kv", Size: sz}, err
}

func selectGQA(n *kernels.Node, t kernels.Target) (plan, error) {
	gn, err := kernels.CheckGQA(n)
	if err != nil {
		return plan{}, err
	}
	at := n.Attrs
	q := n.Inputs[0]
	dt := q.DType
	es := dt.Size()
	g, packed, p := gqaGeomOf(gn.GQAGeom), gn.Packed, gn.P
	okPK, okOK := gn.Past, gn.Present
	kvW := g.nkv * g.d
	x := attnArgs{
		q: inp(0), out: outp(0), part: nullp(), seqlens: inp(5), total: inp(6), mask: nullp(), bias: nullp(),
		cos: nullp(), sin: nullp(), pos: nullp(),
		qss: q.Shape[2], qsh: g.d, scale: attnScale(at, g.d), softcap: gn.Softcap,
		window: gn.Window, flags: attGQA,
	}
	if gn.Causal {
		x.flags |= attCausalExcl
	}
	if gn.Rotary {
		x.flags |= attRotary
		if gn.Interleaved {
			x.flags |= attInterleaved
		}
		x.rot, x.maxPos = gn.Rot, gn.MaxPos
		x.cos, x.sin = inp(7), inp(8)
		if gn.PosIDs {
			x.flags |= attPosIDs
			x.pos = inp(9)
		}
	}
	if ab, ok := n.Input(10); ok {
		if err := biasArgs(ab, dt, g.b, g.s, g.nq, g.t, &x); err != nil {
			return plan{}, err
		}
		x.bias = inp(10)
	}
	if !fits32(g.b, g.s, g.nkv, g.d, g.t, p, q.Shape[2], kvW, x.maxPos) {
		return plan{}, fmt.Errorf("GQA geometry %+v is too large for the CUDA kernels", g)
	}
	tac, err := attnPlan(g, int64(t.SMs))
	if err != nil {
		return plan{}, err
	}
	decode := gqaDecodes(g, x.bias.kind != litRef, t)
	var parts []alloc.Part
	kdst, vdst := outp(1), outp(2)
	if !okOK {
		part, err := gqaKVPart(g, es)
		if err != nil {
			return plan{}, err
		}
		parts = append(parts, part)
		kdst, vdst = wsp(0), wsp(0).at(g.b*g.nkv*g.t*g.d*es)
	}
	mma := !decode && gqaMMA(dt, g, gn, q.Shape[2], x.bias.kind != litRef)
	qrot := -1 // the workspace part of the rotated queries (mma with do_rotary)
	switch {
	case decode:
		parts, err = x.addPartials(parts, decodeChunks(g.b, g.nkv, g.t, int64(t.SMs)), g.b*g.nq, g.d)
	case mma && gn.Rotary:
		var part alloc.Part
		if part, err = gqaQPart(g, es); err == nil {
			qrot, parts = len(parts), append(parts, part)
		}
	case !mma:
		parts, err = x.addPartials(parts, tac.chunks, g.b*g.nq*g.s, g.dv)
	}
	if err != nil {
		return plan{}, err
	}
	var prog program
	name := dtName(dt)
	bs, nd := pack32(g.b, g.s), pack32(g.nkv, g.d)
	if okPK && p > 0 {
		cp := func(dst, src param) step {
			st := step{kernel: "carve_kv_copy_past_" + name, grid: grid1(g.b*g.nkv*p*g.d, 1, t), block: block1,
				params: []param{dst, src, inp(5), inp(6), bs, nd, pack32(p, g.t)}}
			if dst.kind == outRef {
				st.skipSame = [2]param{src, dst}
			}
			return st
		}
		prog = append(prog, cp(kdst, inp(3)), cp(vdst, inp(4)))
	}
	ksrc, vsrc, kss, vss := inp(1), inp(2), kvW, kvW
	if packed {
		ksrc, vsrc = inp(0).at(g.nq*g.d*es), inp(0).at((g.nq+g.nkv)*g.d*es)
		kss, vss = q.Shape[2], q.Shape[2]
	}
	x.k, x.v = kdst, vdst
	x.ksb, x.ksh, x.kst = g.nkv*g.t*g.d, g.t*g.d, g.d
	x.vsb, x.vsh, x.vst = x.ksb, x.ksh, x.kst
	if decode {
		if g.b*g.nq > 0 {
			steps, err := decodeSteps(dt, g, x, ksrc, vsrc, kss, t)
			if err != nil {
				return plan{}, err
			}
			prog = append(prog, steps...)
		}
		return plan{tactic: "decode", parts: parts, prog: prog}, nil
	}
	if g.b*g.s*kvW > 0 {
		prog = append(prog, step{kernel: "carve_kv_append_" + name, grid: grid1(g.b*g.s*kvW, 1, t), block: block1,
			params: []param{kdst, vdst, ksrc, vsrc, inp(5), inp(6), x.cos, x.sin, x.pos, bs, nd, pack32(g.t, kss),
				pack32(vss, x.rot), i32p(x.flags), i32p(int(x.maxPos))}})
	}
	if g.b*g.s*g.nq == 0 {
		return plan{tactic: tac.name(), parts: parts, prog: prog}, nil
	}
	if mma {
		steps, err := gqaMMASteps(dt, g, gn, x, q.Shape[2], qrot, t)
		if err != nil {
			return plan{}, err
		}
		return plan{tactic: "flash-mma", parts: parts, prog: append(prog, steps...)}, nil
	}
	steps, err := attnSteps(dt, g, tac, x, t)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: tac.name(), parts: parts, prog: append(prog, steps...)}, nil
}

// gqaMMA reports whether a prefill (S > 1) runs csrc/attention23.cu's tensor-core core
// (tactic "flash-mma") after carve_kv_append has written its keys and values: float16 or
// bfloat16 at head size 64 or 128, causal, without attention_bias or softcap, and query rows of
// whole 16-byte units. The core reads the past per batch from seqlens_k and
// total_sequence_length (a23GQA), causality and the local window as the band of ONNX Attention.
func gqaMMA(dt graph.DType, g attnGeom, gn kernels.GQANode, qss int64, bias bool) bool {
	half := dt == graph.Float16 || dt == graph.BFloat16
	return half && g.s > 1 && (g.d == 64 || g.d == 128) && gn.Causal && !bias && gn.Softcap == 0 &&
		(gn.Rotary || qss%8 == 0) && g.b*g.nq <= 65535
}

// gqaQPart is workspace "q", the rotated queries [B, S, N, D] the flash-mma core reads.
func gqaQPart(g attnGeom, es int64) (alloc.Part, error) {
	sz, err := kernels.Product(g.b, g.s, g.nq, g.d, es)
	return alloc.Part{Name: "q", Size: sz}, err
}

// gqaMMASteps is the flash-mma tactic's launches after the keys and values are in the caches x
// points at: the queries rotated into workspace part qrot (with do_rotary), then the core over
// the caches [B, Nkv, T, D] with the past per batch.
func gqaMMASteps(dt graph.DType, g attnGeom, gn kernels.GQANode, x attnArgs, qss int64, qrot int, t kernels.Target) ([]step, error) {
	name := dtName(dt)
	var prog []step
	q, qs := x.q, a23Strides{b: g.s * qss, h: g.d, r: qss}
	if qrot >= 0 {
		q, qs = wsp(qrot), a23Strides{b: g.s * g.nq * g.d, h: g.d, r: g.nq * g.d}
		prog = append(prog, step{kernel: "carve_gqa_rope_q_" + name, grid: grid1(g.b*g.s*g.nq*g.d, 1, t), block: block1,
			params: []param{q, x.q, x.seqlens, x.total, x.cos, x.sin, x.pos, pack32(g.b, g.s), pack32(g.nq, g.d),
				pack32(qss, x.rot), i32p(x.flags), i32p(int(x.maxPos))}})
	}
	ks := a23Strides{b: x.ksb, h: x.ksh, r: x.kst}
	vs := a23Strides{b: x.vsb, h: x.vsh, r: x.vst}
	os := a23Strides{b: g.s * g.nq * g.d, h: g.d, r: g.nq * g.d}
	// Keys [0, T) of the caches, causal after each batch's past; the local window (keys
	// [hi - window, hi) of a row that sees up to hi) as the band's left edge.
	ag := a23Geom{b: g.b, hq: g.nq, hkv: g.nkv, s: g.s, l: g.s, t: g.t, d: g.d, dv: g.d}
	flags, win := a23Causal|a23GQA, graph.AttentionBand{Left: -1, Right: -1}
	if gn.Window > 0 {
		flags, win = a23GQA, graph.AttentionBand{Left: gn.Window - 1, Right: 0}
	}
	if !fits32(ag.b, ag.hq, ag.s, ag.t, ag.d, qs.h, qs.r, ks.h, ks.r, vs.h, vs.r, os.h, os.r, win.Left+1) {
		return nil, fmt.Errorf("attention geometry %+v is too large for the CUDA kernels", g)
	}
	ps := a23Params(a23Views{q: q, k: x.k, v: x.v, out: x.out, qs: qs, ks: ks, vs: vs, os: os}, ag,
		nullp(), 0, 0, a23Strides{}, flags, x.scale, 0, win, x.seqlens, x.total)
	rows, err := a23RowsStep(name, ag, ps)
	if err != nil {
		return nil, err
	}
	return append(prog, a23MMAStep(name, ag, a23MMAVariant(0, 0, x.scale, !win.Unbounded()), ps, rows)), nil
}

func boundGQA(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	q, okQ := r.Input(0)
	if !okQ {
		return kernels.Bound{}, fmt.Errorf("query is missing")
	}
	k, okK := r.Input(1)
	pk, okP := r.Input(3)
	pr, okPr := r.Output(1)
	lo, _, err := gqaDims(r.Attrs, rangeDims(q, true, false), rangeDims(k, okK, false), rangeDims(pk, okP, false), rangeDims(pr, okPr, false))
	if err != nil {
		return kernels.Bound{}, err
	}
	hi, _, err := gqaDims(r.Attrs, rangeDims(q, true, true), rangeDims(k, okK, true), rangeDims(pk, okP, true), rangeDims(pr, okPr, true))
	if err != nil {
		return kernels.Bound{}, err
	}
	var parts []alloc.Part
	if !okPr {
		part, err := gqaKVPart(hi, q.DType.Size())
		if err != nil {
			return kernels.Bound{}, err
		}
		parts = append(parts, part)
	}
	tactic := "fused"
	_, bias := r.Input(10)
	loOne, hiOne := lo, hi
	loOne.s, hiOne.s = 1, 1
	decode := gqaDecodes(loOne, bias, t) && gqaDecodes(hiOne, bias, t)
	pb, err := attnBoundParts(lo.b, hi.b, lo.s, hi.s, hi.nq, hi.nkv, hi.dv, hi.t, decode, t)
	if err != nil {
		return kernels.Bound{}, err
	}
	if decode && lo.s <= 1 && hi.s >= 1 {
		db, err := decodeBound(lo.b, hi.b, hi.nq, hi.nkv, hi.d, hi.t, t)
		if err != nil {
			return kernels.Bound{}, err
		}
		if db > 0 && pb == 0 {
			tactic = "decode"
		}
		pb = max(pb, db)
	}
	if pb > 0 {
		if tactic == "fused" {
			tactic = "split-kv"
		}
		parts = append(parts, alloc.Part{Name: "partials", Size: pb})
	}
	// A prefill with do_rotary may take flash-mma, which rotates the queries into "q" (and
	// needs no partials: the sum of both bounds either).
	if dt := q.DType; hi.s > 1 && r.Attrs.Int("do_rotary", 0) == 1 && (dt == graph.Float16 || dt == graph.BFloat16) {
		part, err := gqaQPart(hi, dt.Size())
		if err != nil {
			return kernels.Bound{}, err
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return kernels.Bound{}, nil
	}
	return recipeBound(tactic, parts)
}
