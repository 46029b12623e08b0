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
// node has no present outputs). The ops' selects are in files named as the CPU's: gqa.go,
// attention_mha.go and attention_contrib.go (com.microsoft.Attention).
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

// maskKindOf is the csrc mask kind of a key mask (kernels.CheckKeyMask's format) and its T.
func maskKindOf(v kernels.Value, b, s, t int64) (int64, int64, error) {
	kind, tm, err := kernels.CheckKeyMask(v, b, s, t)
	return int64(kind), tm, err // the kernels' mask codes are kernels.KeyMask's
}

// biasArgs validates an attention_bias [B or 1, N or 1, S, <= T] and sets its strides.
func biasArgs(v kernels.Value, dt graph.DType, b, s, n, t int64, x *attnArgs) error {
	ab, err := kernels.CheckAttentionBias(v, dt, b, n, s, t)
	if err != nil {
		return err
	}
	x.biasT, x.biasSB, x.biasSH = ab.T, ab.SB, ab.SH
	return nil
}

func attnScale(at graph.Attributes, d int64) float32 {
	if s := at.Float("scale", 0); s != 0 {
		return s
	}
	return float32(1 / math.Sqrt(float64(d)))
}

// ---------------------------------------------------------------- GroupQueryAttention

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

func attentionOps() []*op {
	ms := kernels.DomainMicrosoft
	tac := []kernels.TacticInfo{
		{Name: "fused", Summary: "one block per (query rows, batch, key/value head): online softmax over all keys; workspace only for keys and values without a present output", Workspace: true},
		{Name: "split-kv", Summary: "decode-sized grids: keys cut into chunks (at most 2*SMs/blocks), per-chunk partial outputs, maxima and sums in workspace, combined after (flash-decoding)", Workspace: true},
	}
	return []*op{
		{key: kernels.Key(ms, "Attention"), tactics: tac, sel: selectAttention, bound: boundAttention},
		{key: kernels.Key(ms, "MultiHeadAttention"), tactics: tac, sel: selectMHA, bound: boundMHA},
		{key: kernels.Key(ms, "GroupQueryAttention"), tactics: tac, sel: selectGQA, bound: boundGQA},
	}
}
