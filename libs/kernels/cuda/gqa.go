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
	if decode {
		parts, err = x.addPartials(parts, decodeChunks(g.b, g.nkv, g.t, int64(t.SMs)), g.b*g.nq, g.d)
	} else {
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
	if g.b*g.s*g.nq > 0 {
		steps, err := attnSteps(dt, g, tac, x, t)
		if err != nil {
			return plan{}, err
		}
		prog = append(prog, steps...)
	}
	return plan{tactic: tac.name(), parts: parts, prog: prog}, nil
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
	if len(parts) == 0 {
		return kernels.Bound{}, nil
	}
	return recipeBound(tactic, parts)
}
