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

// dimEnds is one end of dims, nil when absent.
func dimEnds(dims []kernels.DimRange, hi bool) []int64 {
	if dims == nil {
		return nil
	}
	out := make([]int64, len(dims))
	for i, d := range dims {
		out[i] = pick(d, hi)
	}
	return out
}

func gqaGeom(src geomSrc, hi bool) (attnDims, error) {
	at := src.attrs()
	m, err := kernels.GQADims(at, dimEnds(src.dims(0), hi), dimEnds(src.dims(1), hi), dimEnds(src.dims(3), hi), dimEnds(src.outDims(1), hi))
	if err != nil {
		return attnDims{}, err
	}
	heads, kv, d := m.Heads, m.KVHeads, m.D
	g := attnDims{b: m.B, s: m.S, nq: heads, d: d, dv: d, t: m.T}
	present := src.outDims(1)
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
	gn, err := kernels.CheckGQA(n)
	if err != nil {
		return plan{}, err
	}
	q := n.Inputs[0]
	if q.DType != graph.Float32 {
		return plan{}, fmt.Errorf("query %v, want float32 [B, S, heads*head_size]", q)
	}
	g, err := gqaGeom(nodeSrc{n}, true)
	if err != nil {
		return plan{}, err
	}
	at := n.Attrs
	x := &gqa{width: int(q.Shape[2]), packed: gn.Packed, p: int(gn.P), hasPast: gn.Past, presentOut: gn.Present}
	c := &x.core
	c.b, c.s, c.nq, c.nkv = int(gn.B), int(gn.S), int(gn.Heads), int(gn.KVHeads)
	c.d, c.dv, c.t = int(gn.D), int(gn.D), int(gn.T)
	c.scale = attnScale(at, c.d)
	c.softcap = gn.Softcap
	c.causalExcl = gn.Causal
	c.window = int(gn.Window)
	if gn.Rotary {
		x.rotary, x.interleaved, x.posIDs = true, gn.Interleaved, gn.PosIDs
		x.rot, x.maxPos = int(gn.Rot), int(gn.MaxPos)
	}
	if ab, ok := n.Input(10); ok {
		if err := c.checkBias(ab); err != nil {
			return plan{}, err
		}
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
