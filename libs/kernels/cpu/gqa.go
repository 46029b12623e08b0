package cpu

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// gqa is com.microsoft.GroupQueryAttention: causal (by default) attention of num_heads query
// heads over kv_num_heads key/value heads with a BNSH key/value cache. New keys and values are
// written into the present cache (or, when the present outputs are absent, into workspace
// "kv"), rotated by the rotary caches first when do_rotary is set (queries go to workspace
// "q_rot"). Query head n reads key/value head n / (num_heads / kv_num_heads) in place: the
// grouped heads are expanded by indexing, without copies.
type gqa struct {
	core        attnCore
	packed      bool
	width       int // query's last dim
	p           int // past_key's sequence dim (0 when absent)
	hasPast     bool
	presentOut  bool
	rotary      bool
	interleaved bool
	rot, maxPos int
	posIDs      bool
}

func gqaHeads(at graph.Attributes) (int64, int64, error) {
	n, kv := at.Int("num_heads", 0), at.Int("kv_num_heads", 0)
	if n <= 0 || kv <= 0 || n%kv != 0 {
		return 0, 0, fmt.Errorf("num_heads %d and kv_num_heads %d: want positive, num_heads a multiple of kv_num_heads", n, kv)
	}
	return n, kv, nil
}

func gqaGeom(src geomSrc, hi bool) (attnDims, error) {
	q := src.dims(0)
	if len(q) != 3 {
		return attnDims{}, fmt.Errorf("query has %d dims, want 3", len(q))
	}
	at := src.attrs()
	heads, kv, err := gqaHeads(at)
	if err != nil {
		return attnDims{}, err
	}
	g := attnDims{b: pick(q[0], hi), s: pick(q[1], hi), nq: heads}
	width := pick(q[2], hi)
	den := heads
	if src.dims(1) == nil {
		den = heads + 2*kv
	}
	d := width / max(den, 1)
	g.d, g.dv = d, d
	present := src.outDims(1)
	switch {
	case len(present) == 4:
		g.t = pick(present[2], hi)
	default:
		g.t = g.s
		if p := src.dims(3); len(p) == 4 {
			g.t += pick(p[2], hi)
		}
	}
	if at.Int("do_rotary", 0) != 0 {
		part, err := f32Part("q_rot", g.b, g.s, heads, d)
		if err != nil {
			return attnDims{}, err
		}
		g.extra = append(g.extra, part)
	}
	if len(present) != 4 {
		part, err := f32Part("kv", 2, g.b, kv, g.t, d)
		if err != nil {
			return attnDims{}, err
		}
		g.extra = append(g.extra, part)
	}
	return g, nil
}

func selectGQA(n *kernels.Node, d kernels.Target) (plan, error) {
	if err := kernels.CheckGQA(n); err != nil {
		return plan{}, err
	}
	at := n.Attrs
	heads, kvHeads, err := gqaHeads(at)
	if err != nil {
		return plan{}, err
	}
	g, err := gqaGeom(nodeSrc{n}, true)
	if err != nil {
		return plan{}, err
	}
	q := n.Inputs[0]
	x := &gqa{width: int(q.Shape[2])}
	c := &x.core
	c.b, c.s, c.nq, c.nkv = int(g.b), int(g.s), int(heads), int(kvHeads)
	c.d, c.dv, c.t = int(g.dv), int(g.dv), int(g.t)
	_, okK := n.Input(1)
	_, okV := n.Input(2)
	if okK != okV {
		return plan{}, fmt.Errorf("key and value go together")
	}
	x.packed = !okK
	den := heads
	if x.packed {
		den = heads + 2*kvHeads
	}
	if q.DType != graph.Float32 || q.Shape[2]%den != 0 || c.d == 0 {
		return plan{}, fmt.Errorf("query %v, want float32 [B, S, %d*head_size]", q, den)
	}
	kvW := int64(c.nkv * c.d)
	if !x.packed {
		for i := 1; i <= 2; i++ {
			v := n.Inputs[i]
			if v.DType != graph.Float32 || !equalShape(v.Shape, []int64{int64(c.b), int64(c.s), kvW}) {
				return plan{}, fmt.Errorf("input %d is %v, want float32[%d %d %d]", i, v, c.b, c.s, kvW)
			}
		}
	}
	pk, okPK := n.Input(3)
	pv, okPV := n.Input(4)
	if okPK != okPV {
		return plan{}, fmt.Errorf("past_key and past_value go together")
	}
	if okPK {
		if pk.DType != graph.Float32 || len(pk.Shape) != 4 || pk.Shape[0] != int64(c.b) || pk.Shape[1] != int64(c.nkv) || pk.Shape[3] != int64(c.d) || !equalShape(pk.Shape, pv.Shape) {
			return plan{}, fmt.Errorf("past_key %v and past_value %v, want float32[%d %d P %d]", pk, pv, c.b, c.nkv, c.d)
		}
		x.p, x.hasPast = int(pk.Shape[2]), true
	}
	for i := 5; i <= 6; i++ {
		v := n.Inputs[i]
		if v.DType != graph.Int32 {
			return plan{}, fmt.Errorf("input %d is %v, want int32", i, v.DType)
		}
	}
	if numel(n.Inputs[5].Shape) != c.b || numel(n.Inputs[6].Shape) != 1 {
		return plan{}, fmt.Errorf("seqlens_k %v and total_sequence_length %v, want [%d] and a scalar", n.Inputs[5].Shape, n.Inputs[6].Shape, c.b)
	}
	c.scale = attnScale(at, c.d)
	c.softcap = at.Float("softcap", 0)
	c.causalExcl = at.Int("causal", 1) != 0
	c.window = int(at.Int("local_window_size", -1))
	if c.window > 0 && !c.causalExcl {
		return plan{}, fmt.Errorf("local_window_size needs causal attention")
	}
	if at.Int("do_rotary", 0) != 0 {
		x.rotary = true
		x.interleaved = at.Int("rotary_interleaved", 0) != 0
		cs, okC := n.Input(7)
		sn, okS := n.Input(8)
		if !okC || !okS || cs.DType != graph.Float32 || len(cs.Shape) != 2 || !equalShape(cs.Shape, sn.Shape) {
			return plan{}, fmt.Errorf("do_rotary needs float32 cos_cache and sin_cache [max_position, rotary_dim/2]")
		}
		x.rot, x.maxPos = int(cs.Shape[1])*2, int(cs.Shape[0])
		if x.rot > c.d || x.rot == 0 {
			return plan{}, fmt.Errorf("rotary dim %d for head size %d", x.rot, c.d)
		}
		if p, ok := n.Input(9); ok {
			if p.DType != graph.Int64 || !equalShape(p.Shape, []int64{int64(c.b), int64(c.s)}) {
				return plan{}, fmt.Errorf("position_ids %v, want int64[%d %d]", p, c.b, c.s)
			}
			x.posIDs = true
		}
	}
	if ab, ok := n.Input(10); ok {
		if err := c.checkBias(ab); err != nil {
			return plan{}, err
		}
	}
	if err := kernels.CheckOutput(n, 0, graph.Float32, []int64{int64(c.b), int64(c.s), int64(c.nq * c.d)}); err != nil {
		return plan{}, err
	}
	_, okOK := n.Output(1)
	_, okOV := n.Output(2)
	if okOK != okOV {
		return plan{}, fmt.Errorf("present_key and present_value go together")
	}
	if okOK {
		want := []int64{int64(c.b), int64(c.nkv), int64(c.t), int64(c.d)}
		for i := 1; i <= 2; i++ {
			if err := kernels.CheckOutput(n, i, graph.Float32, want); err != nil {
				return plan{}, err
			}
		}
		if c.t < x.p {
			return plan{}, fmt.Errorf("present length %d is shorter than past length %d", c.t, x.p)
		}
		x.presentOut = true
	}
	c.setTactic(d.Workers)
	parts, err := attnRecipe(g, d.Workers)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: c.tactic, parts: parts, r: x}, nil
}

func (x *gqa) run(in, out []kernels.Tensor, ws wsParts) error {
	c := &x.core
	seqlens := in[5].Int32s()[:c.b]
	total := int(in[6].Int32s()[0])
	first := c.s == total
	// validate every length before writing anything
	for b, sl := range seqlens {
		tb := int(sl) + 1
		pb := tb - c.s
		if first {
			pb = 0
		}
		if tb < 1 || tb > c.t || pb < 0 || pb+c.s > c.t || (!first && x.hasPast && pb > x.p) || (!first && !x.hasPast && pb > 0) {
			return fmt.Errorf("batch %d: seqlens_k %d, total_sequence_length %d do not fit %d new tokens, past %d and cache %d", b, sl, total, c.s, x.p, c.t)
		}
	}
	if x.rotary {
		for b := range seqlens {
			for s := 0; s < c.s; s++ {
				if p := x.position(in, seqlens, first, b, s); p < 0 || p >= x.maxPos {
					return fmt.Errorf("rotary position %d outside the cache of %d", p, x.maxPos)
				}
			}
		}
	}
	var pk, pv view3
	extra := 0
	if x.rotary {
		extra++
	}
	if x.presentOut {
		pk, pv = bnsh(out[1].Float32s(), c.nkv, c.t, c.d), bnsh(out[2].Float32s(), c.nkv, c.t, c.d)
	} else {
		kv := kernels.ViewAs[float32](ws.bytes(extra))
		half := c.b * c.nkv * c.t * c.d
		pk, pv = bnsh(kv[:half], c.nkv, c.t, c.d), bnsh(kv[half:2*half], c.nkv, c.t, c.d)
		extra++
	}
	q := in[0].Float32s()
	qW := x.width
	var qv, kv, vv view3
	qv = bsnh(q, 0, c.s, qW, c.d)
	if x.packed {
		kv = bsnh(q, c.nq*c.d, c.s, qW, c.d)
		vv = bsnh(q, (c.nq+c.nkv)*c.d, c.s, qW, c.d)
	} else {
		kv = bsnh(in[1].Float32s(), 0, c.s, c.nkv*c.d, c.d)
		vv = bsnh(in[2].Float32s(), 0, c.s, c.nkv*c.d, c.d)
	}
	var cos, sin []float32
	if x.rotary {
		cos, sin = in[7].Float32s(), in[8].Float32s()
	}
	half := x.rot / 2
	for b, sl := range seqlens {
		pb := int(sl) + 1 - c.s
		if first {
			pb = 0
		}
		if x.hasPast && !first && pb > 0 {
			past, pastV := bnsh(in[3].Float32s(), c.nkv, x.p, c.d), bnsh(in[4].Float32s(), c.nkv, x.p, c.d)
			for h := 0; h < c.nkv; h++ {
				src, dst := past.at(b, h, 0), pk.at(b, h, 0)
				if !sameMemory(kernels.BytesOf(past.data[src:src+1]), kernels.BytesOf(pk.data[dst:dst+1])) {
					copy(pk.data[dst:dst+pb*c.d], past.data[src:src+pb*c.d])
					copy(pv.data[dst:dst+pb*c.d], pastV.data[src:src+pb*c.d])
				}
			}
		}
		for s := 0; s < c.s; s++ {
			var cr, sr []float32
			if x.rotary {
				p := x.position(in, seqlens, first, b, s)
				cr, sr = cos[p*half:(p+1)*half], sin[p*half:(p+1)*half]
			}
			for h := 0; h < c.nkv; h++ {
				src, dst := kv.at(b, h, s), pk.at(b, h, pb+s)
				if x.rotary {
					rope(pk.data[dst:dst+c.d], kv.data[src:src+c.d], cr, sr, x.rot, x.interleaved, false)
				} else {
					copy(pk.data[dst:dst+c.d], kv.data[src:src+c.d])
				}
				src, dst = vv.at(b, h, s), pv.at(b, h, pb+s)
				copy(pv.data[dst:dst+c.d], vv.data[src:src+c.d])
			}
		}
	}
	run := attnRuns.Get()
	defer func() { *run = attnRun{}; attnRuns.Put(run) }()
	run.c = c
	if x.rotary {
		qr := kernels.ViewAs[float32](ws.bytes(0))
		rv := view3{data: qr, sb: c.s * c.nq * c.d, sh: c.d, st: c.nq * c.d}
		for b := range seqlens {
			for s := 0; s < c.s; s++ {
				p := x.position(in, seqlens, first, b, s)
				cr, sr := cos[p*half:(p+1)*half], sin[p*half:(p+1)*half]
				for h := 0; h < c.nq; h++ {
					src, dst := qv.at(b, h, s), rv.at(b, h, s)
					rope(qr[dst:dst+c.d], q[src:src+c.d], cr, sr, x.rot, x.interleaved, false)
				}
			}
		}
		qv = rv
	}
	run.q = qv
	run.past, run.pastV, run.pastLen = pk, pv, c.t
	run.o = bsnh(out[0].Float32s(), 0, c.s, c.nq*c.d, c.d)
	run.totals, run.first = seqlens, first
	if c.hasBias {
		run.bias = in[10].Float32s()
	}
	c.execute(run, ws.skip(extra))
	return nil
}

// position is the rotary position of token s of batch b.
func (x *gqa) position(in []kernels.Tensor, seqlens []int32, first bool, b, s int) int {
	if x.posIDs {
		return int(in[9].Int64s()[b*x.core.s+s])
	}
	if first {
		return s
	}
	return int(seqlens[b]) + 1 - x.core.s + s
}
