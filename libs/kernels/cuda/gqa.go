package cuda

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// gqaDims reads a GQA node's (or range's) geometry: dims(i) and outDims(i) give input and
// output dims at one end of the ranges.
func gqaDims(at graph.Attributes, q, key, past, present []int64) (g attnGeom, packed bool, err error) {
	heads, kv := at.Int("num_heads", 0), at.Int("kv_num_heads", 0)
	if heads <= 0 || kv <= 0 || heads%kv != 0 {
		return g, false, fmt.Errorf("num_heads %d and kv_num_heads %d: want positive, num_heads a multiple of kv_num_heads", heads, kv)
	}
	if len(q) != 3 {
		return g, false, fmt.Errorf("query has %d dims, want 3", len(q))
	}
	packed = key == nil
	den := heads
	if packed {
		den = heads + 2*kv
	}
	g = attnGeom{b: q[0], s: q[1], nq: heads, nkv: kv, d: q[2] / den}
	g.dv = g.d
	switch {
	case len(present) == 4:
		g.t = present[2]
	default:
		g.t = g.s
		if len(past) == 4 {
			g.t += past[2]
		}
	}
	return g, packed, nil
}

// gqaKVPart is workspace "kv" when the present outputs are absent: the keys and values the core
// reads, [2, B, Nkv, T, D].
func gqaKVPart(g attnGeom, es int64) (alloc.Part, error) {
	sz, err := kernels.Product(2, g.b, g.nkv, g.t, g.d, es)
	return alloc.Part{Name: "kv", Size: sz}, err
}

func selectGQA(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckGQA(n); err != nil {
		return plan{}, err
	}
	at := n.Attrs
	q := n.Inputs[0]
	dt := q.DType
	if !isFloat(dt) {
		return plan{}, errDType("the query", dt, "float32, float16 or bfloat16")
	}
	es := dt.Size()
	key, okK := n.Input(1)
	_, okV := n.Input(2)
	if okK != okV {
		return plan{}, fmt.Errorf("key and value go together")
	}
	var keyShape, pastShape, presentShape []int64
	if okK {
		keyShape = key.Shape
	}
	pk, okPK := n.Input(3)
	pv, okPV := n.Input(4)
	if okPK != okPV {
		return plan{}, fmt.Errorf("past_key and past_value go together")
	}
	if okPK {
		pastShape = pk.Shape
	}
	_, okOK := n.Output(1)
	_, okOV := n.Output(2)
	if okOK != okOV {
		return plan{}, fmt.Errorf("present_key and present_value go together")
	}
	if okOK {
		presentShape = n.Outputs[1].Shape
	}
	g, packed, err := gqaDims(at, q.Shape, keyShape, pastShape, presentShape)
	if err != nil {
		return plan{}, err
	}
	den := g.nq
	if packed {
		den = g.nq + 2*g.nkv
	}
	if q.Shape[2]%den != 0 || g.d == 0 {
		return plan{}, fmt.Errorf("query %v, want [B, S, %d*head_size]", q, den)
	}
	kvW := g.nkv * g.d
	if !packed {
		for i := 1; i <= 2; i++ {
			v := n.Inputs[i]
			if v.DType != dt || !equalShape(v.Shape, []int64{g.b, g.s, kvW}) {
				return plan{}, fmt.Errorf("input %d is %v, want %v[%d %d %d]", i, v, dt, g.b, g.s, kvW)
			}
		}
	}
	var p int64
	if okPK {
		if pk.DType != dt || len(pk.Shape) != 4 || pk.Shape[0] != g.b || pk.Shape[1] != g.nkv || pk.Shape[3] != g.d || !equalShape(pk.Shape, pv.Shape) {
			return plan{}, fmt.Errorf("past_key %v and past_value %v, want %v[%d %d P %d]", pk, pv, dt, g.b, g.nkv, g.d)
		}
		p = pk.Shape[2]
	}
	for i := 5; i <= 6; i++ {
		if v := n.Inputs[i]; v.DType != graph.Int32 {
			return plan{}, fmt.Errorf("input %d is %v, want int32", i, v.DType)
		}
	}
	if numel(n.Inputs[5].Shape) != g.b || numel(n.Inputs[6].Shape) != 1 {
		return plan{}, fmt.Errorf("seqlens_k %v and total_sequence_length %v, want [%d] and a scalar", n.Inputs[5].Shape, n.Inputs[6].Shape, g.b)
	}
	x := attnArgs{
		q: inp(0), out: outp(0), part: nullp(), seqlens: inp(5), total: inp(6), mask: nullp(), bias: nullp(),
		cos: nullp(), sin: nullp(), pos: nullp(),
		qss: q.Shape[2], qsh: g.d, scale: attnScale(at, g.d), softcap: at.Float("softcap", 0),
		window: at.Int("local_window_size", -1), flags: attGQA,
	}
	if at.Int("causal", 1) != 0 {
		x.flags |= attCausalExcl
	} else if x.window > 0 {
		return plan{}, fmt.Errorf("local_window_size needs causal attention")
	}
	if at.Int("do_rotary", 0) != 0 {
		x.flags |= attRotary
		if at.Int("rotary_interleaved", 0) != 0 {
			x.flags |= attInterleaved
		}
		cs, okC := n.Input(7)
		sn, okS := n.Input(8)
		if !okC || !okS || cs.DType != dt || len(cs.Shape) != 2 || !equalShape(cs.Shape, sn.Shape) {
			return plan{}, fmt.Errorf("do_rotary needs %v cos_cache and sin_cache [max_position, rotary_dim/2]", dt)
		}
		x.rot, x.maxPos = cs.Shape[1]*2, cs.Shape[0]
		if x.rot > g.d || x.rot == 0 {
			return plan{}, fmt.Errorf("rotary dim %d for head size %d", x.rot, g.d)
		}
		x.cos, x.sin = inp(7), inp(8)
		if pi, ok := n.Input(9); ok {
			if pi.DType != graph.Int64 || !equalShape(pi.Shape, []int64{g.b, g.s}) {
				return plan{}, fmt.Errorf("position_ids %v, want int64[%d %d]", pi, g.b, g.s)
			}
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
	if err := kernels.CheckOutput(n, 0, dt, []int64{g.b, g.s, g.nq * g.d}); err != nil {
		return plan{}, err
	}
	if okOK {
		want := []int64{g.b, g.nkv, g.t, g.d}
		for i := 1; i <= 2; i++ {
			if err := kernels.CheckOutput(n, i, dt, want); err != nil {
				return plan{}, err
			}
		}
		if g.t < p {
			return plan{}, fmt.Errorf("present length %d is shorter than past length %d", g.t, p)
		}
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
