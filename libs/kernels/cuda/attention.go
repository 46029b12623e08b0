package cuda

import (
	"fmt"
	"math"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Attention (com.microsoft GroupQueryAttention and MultiHeadAttention) runs one core kernel
// (csrc/attention.cu) over a query view and one key/value view each, after copy steps that put
// new keys and values where the core reads them (the present caches, or workspace "kv" when the
// node has no present outputs).
//
// Tactics, a pure function of shapes and the target's multiprocessor count:
//   - "fused": one block per (query row tile, batch, key/value head) walks all the keys with an
//     online softmax and writes the output. No workspace beyond "kv".
//   - "split-kv" (flash-decoding): when those blocks would leave multiprocessors idle (decode
//     steps: one query row per head group) and there are at least attnSplitMinT keys, the keys
//     are cut into chunks of attnChunkUnit multiples, each block writes its chunk's unnormalized
//     output, max and sum to workspace "partials", and a combine kernel merges the chunks. The
//     chunk count is at most 2*SMs/blocks, so the partials stay small (a few MiB) at any context
//     length.
//   - "decode" (GroupQueryAttention only, attention_decode.go): one query token per batch: a
//     core that also writes the new key and value and splits the valid keys (read on the
//     device) over up to decodeMaxChunks blocks per key/value head, then a combine; workspace
//     "partials" as split-kv's.

const (
	attnWarps     = 4
	attnSplitMinT = 512
	attnChunkUnit = 128
	// kernel flags (csrc/attention.cu)
	attGQA         = 1
	attCausalExcl  = 2
	attCausalAdd   = 4
	attInterleaved = 8
	attPosIDs      = 16
	attRotary      = 32
)

// attnGeom is what the tactic and the recipe depend on.
type attnGeom struct {
	b, s, nq, nkv, d, dv, t int64
}

// attnTactic is the launch shape of the core.
type attnTactic struct {
	dpl      int64 // head dims per lane: Dv <= 32*dpl
	rowsPer  int64 // query rows (token, grouped head) per block
	rowTiles int64
	chunks   int64
	chunkLen int64
}

func (a attnTactic) name() string {
	if a.chunks > 1 {
		return "split-kv"
	}
	return "fused"
}

// rowsMax is the most query rows a block holds for dpl head dims per lane (csrc RBM): the
// accumulators of every row stay in registers.
func rowsMax(dpl int64) int64 {
	if dpl >= 4 {
		return 8
	}
	return 16
}

func dplFor(dv int64) (int64, error) {
	for _, p := range []int64{1, 2, 4, 8} {
		if dv <= 32*p {
			return p, nil
		}
	}
	return 0, fmt.Errorf("head size %d; the CUDA attention kernel takes at most 256", dv)
}

// splitChunks is the chunk count bound for blocks blocks over t keys: at most 2*SMs/blocks
// chunks, none shorter than attnChunkUnit; 1 when splitting does not apply.
func splitChunks(blocks, t, sms int64) int64 {
	if t < attnSplitMinT || blocks >= sms {
		return 1
	}
	return min((2*sms+blocks-1)/blocks, (t+attnChunkUnit-1)/attnChunkUnit)
}

func attnPlan(g attnGeom, sms int64) (attnTactic, error) {
	var a attnTactic
	var err error
	if g.nkv <= 0 || g.nq%g.nkv != 0 {
		return a, fmt.Errorf("%d query heads over %d key/value heads", g.nq, g.nkv)
	}
	if a.dpl, err = dplFor(g.dv); err != nil {
		return a, err
	}
	if g.d > 256 {
		return a, fmt.Errorf("head size %d; the CUDA attention kernel takes at most 256", g.d)
	}
	rows := g.s * (g.nq / g.nkv)
	a.rowsPer = max(min(rowsMax(a.dpl), rows), 1)
	a.rowTiles = max((rows+a.rowsPer-1)/a.rowsPer, 1)
	a.chunks, a.chunkLen = 1, max(g.t, 1)
	if c := splitChunks(a.rowTiles*g.b*g.nkv, g.t, sms); c > 1 {
		per := (g.t + c - 1) / c
		a.chunkLen = (per + attnChunkUnit - 1) / attnChunkUnit * attnChunkUnit
		a.chunks = (g.t + a.chunkLen - 1) / a.chunkLen
	}
	return a, nil
}

// partialsPart is the split-kv workspace: per chunk and row, Dv unnormalized outputs, a max and
// a sum (float32).
func partialsPart(chunks, rows, dv int64) (alloc.Part, error) {
	pairs, err := kernels.Product(chunks, rows)
	if err != nil {
		return alloc.Part{}, err
	}
	sz, err := partialsBytes(pairs, dv)
	return alloc.Part{Name: "partials", Size: sz}, err
}

// addPartials appends to parts the split-kv workspace "partials" of chunks chunks over rows
// rows when there are several chunks, and points x's partials at it: how every attention op's
// selection adds it.
func (x *attnArgs) addPartials(parts []alloc.Part, chunks, rows, dv int64) ([]alloc.Part, error) {
	if chunks <= 1 {
		return parts, nil
	}
	part, err := partialsPart(chunks, rows, dv)
	if err != nil {
		return nil, err
	}
	x.part = wsp(len(parts))
	return append(parts, part), nil
}

// partialsBytes is the size of the partials of pairs (chunk, row) pairs: what partialsPart holds,
// and what the bounds (attnBoundParts, decodeBound) take at their largest count of pairs.
func partialsBytes(pairs, dv int64) (int64, error) { return kernels.Product(pairs, dv+2, 4) }

// attnWarpsFor picks the warps of a core block (at most attnWarps) and its dynamic shared
// memory: the queries as float32, then per warp a 32-key tile of keys (rows padded by 16 bytes)
// and values, which the warps' merge area reuses afterwards.
func attnWarpsFor(g attnGeom, a attnTactic, es int64, t kernels.Target) (int64, uint32, error) {
	q := a.rowsPer * g.d * 4
	dp := g.d + 16/es
	for w := int64(attnWarps); w >= 1; w-- {
		b := q + max(w*32*(dp+g.dv)*es, w*a.rowsPer*(g.dv+2)*4)
		if b <= t.SharedMemPerBlock {
			return w, uint32(b), nil
		}
	}
	return 0, 0, fmt.Errorf("attention with head sizes %d/%d needs more shared memory per block than the target's %d bytes", g.d, g.dv, t.SharedMemPerBlock)
}

// attnArgs are the core's parameters besides the geometry.
type attnArgs struct {
	q, k, v, out, part, seqlens, total, mask, bias, cos, sin, pos param
	qss, qsh, ksb, ksh, kst, vsb, vsh, vst                        int64
	pastLen, maskKind, maskT, biasSB, biasSH, biasT, rot          int64
	flags                                                         int
	scale, softcap, filter                                        float32
	window, maxPos                                                int64
}

// attnSteps is the core launch and, for split-kv, the combine launch. partIdx is the workspace
// index of "partials".
func attnSteps(dt graph.DType, g attnGeom, a attnTactic, x attnArgs, t kernels.Target) ([]step, error) {
	if !fits32(g.b, g.s, g.nq, g.nkv, g.d, g.dv, g.t, x.pastLen, x.qss, x.qsh, x.ksh, x.kst, x.vsh, x.vst,
		x.maskKind, x.maskT, x.biasSB, x.biasSH, x.biasT, x.rot, a.chunkLen, a.rowsPer) {
		return nil, fmt.Errorf("attention geometry %+v is too large for the CUDA kernel", g)
	}
	if g.b*g.nkv > 65535 || a.chunks > 65535 {
		return nil, fmt.Errorf("attention grid of %d x %d x %d blocks is too large", a.rowTiles, g.b*g.nkv, a.chunks)
	}
	warps, shared, err := attnWarpsFor(g, a, dt.Size(), t)
	if err != nil {
		return nil, err
	}
	name := dtName(dt)
	core := step{
		kernel: fmt.Sprintf("carve_attn_%s_%d", name, a.dpl),
		grid:   Dim3{X: uint32(a.rowTiles), Y: uint32(g.b * g.nkv), Z: uint32(a.chunks)},
		block:  Dim3{X: uint32(warps * 32), Y: 1, Z: 1}, shared: shared,
		params: []param{
			x.q, x.k, x.v, x.out, x.part, x.seqlens, x.total, x.mask, x.bias, x.cos, x.sin, x.pos,
			pack32(g.b, g.s), pack32(g.nq, g.nkv), pack32(g.d, g.dv), pack32(g.t, x.pastLen),
			pack32(x.qss, x.qsh), i64p(x.ksb), pack32(x.ksh, x.kst), i64p(x.vsb), pack32(x.vsh, x.vst),
			pack32(x.maskKind, x.maskT), pack32(x.biasSB, x.biasSH), pack32(x.biasT, x.rot),
			pack32(a.chunkLen, a.rowsPer), i32p(x.flags), f32p(x.scale), f32p(x.softcap), f32p(x.filter),
			i32p(int(x.window)), i32p(int(x.maxPos)),
		},
	}
	steps := []step{core}
	if a.chunks > 1 {
		rows := g.b * g.nq * g.s
		if rows >= 1<<31 {
			return nil, fmt.Errorf("%d attention rows are too many for the CUDA combine kernel", rows)
		}
		steps = append(steps, step{
			kernel: "carve_attn_combine_" + name,
			grid:   Dim3{X: uint32(rows), Y: 1, Z: 1}, block: Dim3{X: 128, Y: 1, Z: 1}, shared: uint32(a.chunks * 4),
			params: []param{x.out, x.part, i64p(rows), i32p(int(g.dv)), i32p(int(a.chunks)), pack32(g.nq, g.s)},
		})
	}
	return steps, nil
}

// attnBoundParts is W of the core's partials over ranges: for every batch and query length in
// range (only those whose blocks leave multiprocessors idle can split), the chunk count is at
// most splitChunks at the largest key count, and the partials hold chunks x rows rows. With
// decodeS1, a query length of 1 takes GroupQueryAttention's decode tactic instead (decodeBound).
func attnBoundParts(bLo, bHi, sLo, sHi, nq, nkv, dv, tHi int64, decodeS1 bool, t kernels.Target) (int64, error) {
	dpl, err := dplFor(dv)
	if err != nil {
		return 0, err
	}
	sms := int64(t.SMs)
	if tHi < attnSplitMinT {
		return 0, nil
	}
	var best int64
	g := nq / max(nkv, 1)
	for b := bLo; b <= bHi; b++ {
		for s := sLo; s <= sHi; s++ {
			if s == 1 && decodeS1 {
				continue
			}
			rows := s * g
			rowsPer := max(min(rowsMax(dpl), rows), 1)
			tiles := max((rows+rowsPer-1)/rowsPer, 1)
			if tiles*b*nkv >= sms {
				break // more query rows only add blocks
			}
			c := splitChunks(tiles*b*nkv, tHi, sms)
			if c > 1 {
				best = max(best, c*b*nq*s)
			}
		}
		if max((sLo*g+rowsMax(dpl)-1)/rowsMax(dpl), 1)*b*nkv >= sms {
			break
		}
	}
	if best == 0 {
		return 0, nil
	}
	return partialsBytes(best, dv)
}

// maskKind returns the csrc mask kind of a key mask shape (onnxruntime's formats) and its T.
func maskKindOf(v kernels.Value, b, s, t int64) (int64, int64, error) {
	switch {
	case len(v.Shape) == 1 && v.Shape[0] == b:
		return 1, 0, nil
	case len(v.Shape) == 1 && v.Shape[0] == 2*b:
		return 2, 0, nil
	case len(v.Shape) == 2 && v.Shape[0] == b && v.Shape[1] <= t:
		return 3, v.Shape[1], nil
	case len(v.Shape) == 3 && v.Shape[0] == b && v.Shape[1] == s && v.Shape[2] <= t:
		return 4, v.Shape[2], nil
	}
	return 0, 0, fmt.Errorf("mask shape %v is not supported (want [B], [2B], [B, T] or [B, S, T])", v.Shape)
}

// biasArgs validates an attention_bias [B or 1, N or 1, S, <= T] and sets its strides.
func biasArgs(v kernels.Value, dt graph.DType, b, s, n, t int64, x *attnArgs) error {
	sh := v.Shape
	if len(sh) != 4 || (sh[0] != 1 && sh[0] != b) || (sh[1] != 1 && sh[1] != n) || sh[2] != s || sh[3] > t {
		return fmt.Errorf("attention_bias shape %v, want [%d or 1, %d or 1, %d, <= %d]", sh, b, n, s, t)
	}
	if v.DType != dt {
		return fmt.Errorf("attention_bias is %v, want %v", v.DType, dt)
	}
	x.biasT = sh[3]
	if sh[0] != 1 {
		x.biasSB = sh[1] * sh[2] * sh[3]
	}
	if sh[1] != 1 {
		x.biasSH = sh[2] * sh[3]
	}
	return nil
}

func attnScale(at graph.Attributes, d int64) float32 {
	if s := at.Float("scale", 0); s != 0 {
		return s
	}
	return float32(1 / math.Sqrt(float64(d)))
}

// ---------------------------------------------------------------- GroupQueryAttention

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

// rangeDims returns one end of every dim range of a value (nil when absent).
func rangeDims(v kernels.ValueRange, ok bool, hi bool) []int64 {
	if !ok {
		return nil
	}
	out := make([]int64, len(v.Dims))
	for i, d := range v.Dims {
		out[i] = pick(d, hi)
	}
	return out
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
