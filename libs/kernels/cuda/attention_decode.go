package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// GroupQueryAttention's decode tactic ("decode"): a step of one new token per batch runs as
// carve_gqa_dec (csrc/attention.cu), which also writes the new key and value into the cache,
// and carve_gqa_decode_combine, instead of the cache write, the split-kv core and the combine.
// The core's grid has decodeChunks blocks per (batch, key/value head), each taking an equal
// slice of the batch's valid keys as read on the device: every block has work at any length (a
// captured graph replays at every step), and no multiprocessor streams much of the cache. Its
// lanes split the head dims (a key's score is a few multiply-adds and a butterfly, not a lane's
// serial dot product). The slices' partial softmaxes go to workspace "partials" (the split-kv
// layout) and the combine, launched dependent so that its launch overlaps the core, merges them;
// with one chunk the core writes the output and there is no combine. On the H200 (TestDecodeLatency,
// a replayed graph), Qwen2.5-1.5B's shape (bfloat16, 12 query heads of 128 over 2 key/value
// heads) took 9.6, 17.9, 17.1 and 83.8 us a node at batch 1 and 8 by 1024 and 8192 keys, against
// 19.9, 29.3, 26.1 and 93.6 with the lane-per-key core it replaced; a launch alone is 1.6 us.
// Measured and not kept: a thread block cluster of 8 or 16 blocks a head merged over DSMEM in one
// launch (no faster than the dependent combine at the same blocks, and it caps the blocks a head);
// 8 dims a lane at head size 128 (no faster); a transposed reduction of the scores with every
// C-th key a block (no faster at 1024 keys, 5-20% slower at 8192).
//
// It applies when the node has one query token (S = 1), no attention_bias, at most decodeRows
// query heads per key/value head and a head size of at most 256, and its shared memory fits the
// target: a choice that depends on none of B and T, so a range's bound tells it from the ranges'
// ends (boundGQA).

const (
	decodeRows  = 8 // csrc DEC_ROWS: the most grouped query heads
	decodeWarps = 8 // csrc DEC_WARPS: the most warps per block
)

// decodeMaxChunks is the most chunks per (batch, key/value head), decodeMinKeys the fewest keys
// (of the capacity) a chunk is planned for, decodeBlockWarps the warps of a core block and
// decodePDL whether the core and the combine are launched dependent (launchDependent: the
// combine's launch overlaps the core, about 0.5 us a step, and the core's the kernel ahead).
// Variables so that a benchmark can sweep them; Select and Bound read the same values.
var (
	decodeMaxChunks  int64 = 64
	decodeMinKeys    int64 = 32
	decodeBlockWarps int64 = 8
	decodePDL              = true
)

// decLanes is carve_gqa_dec's lanes per key for head size d at dl dims a lane: the smallest
// power of two whose lanes cover d, at most 32.
func decLanes(d, dl int64) int64 {
	l := int64(1)
	for l < 32 && l*dl < d {
		l <<= 1
	}
	return l
}

// decDims is carve_gqa_dec's dims a lane for head size d (at most 256): the fewest that 32 lanes
// cover d with, 1, 2, 4 or 8 (dplFor).
func decDims(d int64) int64 {
	dl, _ := dplFor(d)
	return dl
}

// decRows is the rows carve_gqa_dec computes for g grouped query heads (csrc GQA_DEC_R): 2, 4,
// 6 or decodeRows, the rows past g computed on copies and dropped, so that no row waits behind a
// branch. Six serves groups of 5 or 6 heads (Qwen2's 12 over 2) with no wasted row of 8: on the
// H200 the Qwen2.5-1.5B decode step at batch 8 took 2.36 ms against 2.42 with 8 rows (batch 1
// the same, 1.75).
func decRows(g int64) int64 {
	if g == 5 || g == 6 {
		return 6
	}
	return pow2AtLeast(g, 2)
}

// decShared is carve_gqa_dec's dynamic shared memory for warps warps: the new key and value,
// then the larger of the queries as float32 and the processors' merge area and weights.
func decShared(g, d, es, warps int64) int64 {
	procs := warps * 32 / decLanes(d, decDims(d))
	head := ((2*d*es+3)/4 + 3) &^ 3
	return (head + max(g*d, procs*g*(d+2)+g*(procs+1))) * 4
}

// gqaDecodes reports whether a GQA node of geometry g (with attention_bias when bias) takes the
// decode tactic on t.
func gqaDecodes(g attnGeom, bias bool, t kernels.Target) bool {
	if g.s != 1 || bias || g.d != g.dv || g.d <= 0 || g.d > 256 || g.nkv <= 0 || g.nq%g.nkv != 0 {
		return false
	}
	return g.nq/g.nkv <= decodeRows && decShared(g.nq/g.nkv, g.d, 4, 1) <= t.SharedMemPerBlock
}

// decodeChunks is the core's blocks per (batch, key/value head) for b batches of nkv heads and
// a capacity of t keys: at most one block per multiprocessor (a block of 8 warps takes one, by
// its registers; a second wave doubles the time), at most decodeMaxChunks, none planned for
// fewer than decodeMinKeys keys.
func decodeChunks(b, nkv, t, sms int64) int64 {
	heads := max(b*nkv, 1)
	return max(min(decodeMaxChunks, max(sms, 1)/heads, (t+decodeMinKeys-1)/decodeMinKeys), 1)
}

// decodeWarpsFor is the warps of a core block: decodeWarps, fewer when the shared memory does
// not take them.
func decodeWarpsFor(g attnGeom, es int64, t kernels.Target) int64 {
	w := min(decodeBlockWarps, decodeWarps)
	for w > 1 && decShared(g.nq/g.nkv, g.d, es, w) > t.SharedMemPerBlock {
		w--
	}
	return w
}

// decodeBound is the most partials the decode tactic needs over batches bLo..bHi at up to tHi
// keys.
func decodeBound(bLo, bHi, nq, nkv, d, tHi int64, t kernels.Target) (int64, error) {
	var best int64
	for b := bLo; b <= bHi; b++ {
		c := decodeChunks(b, nkv, tHi, int64(t.SMs))
		if c > 1 {
			best = max(best, c*b*nq)
		}
	}
	if best == 0 {
		return 0, nil
	}
	return partialsBytes(best, d)
}

// decodeSteps is the core launch and, with several chunks, the combine. x holds the query,
// caches, output, partials and rotary parameters as selectGQA sets them; ksrc and vsrc are the
// new keys and values, rows kvss elements apart.
func decodeSteps(dt graph.DType, g attnGeom, x attnArgs, ksrc, vsrc param, kvss int64, t kernels.Target) ([]step, error) {
	c := decodeChunks(g.b, g.nkv, g.t, int64(t.SMs))
	if g.b*g.nkv > 65535 || g.b*g.nq >= 1<<31 {
		return nil, fmt.Errorf("attention grid of %d x %d blocks is too large", c, g.b*g.nkv)
	}
	if !fits32(g.b, g.nq, g.nkv, g.d, g.t, x.rot, x.qss, kvss) {
		return nil, fmt.Errorf("attention geometry %+v is too large for the CUDA kernel", g)
	}
	dpl, err := dplFor(g.d)
	if err != nil {
		return nil, err
	}
	es := dt.Size()
	w := decodeWarpsFor(g, es, t)
	name := dtName(dt)
	part := nullp()
	if c > 1 {
		part = x.part
	}
	kernel, shared := fmt.Sprintf("carve_gqa_dec_%s_%d_%d", name, dpl, decRows(g.nq/g.nkv)), decShared(g.nq/g.nkv, g.d, es, w)
	steps := []step{{
		kernel: kernel,
		grid:   Dim3{X: uint32(c), Y: uint32(g.b * g.nkv), Z: 1},
		block:  Dim3{X: uint32(w * 32), Y: 1, Z: 1}, shared: uint32(shared), dependent: decodePDL,
		params: []param{
			x.q, ksrc, vsrc, x.k, x.v, x.out, part, x.seqlens, x.total, x.cos, x.sin, x.pos,
			pack32(g.b, g.nq), pack32(g.nkv, g.d), pack32(g.t, x.rot), pack32(x.qss, kvss),
			i32p(x.flags), f32p(x.scale), f32p(x.softcap), i32p(int(x.window)), i32p(int(x.maxPos)),
		},
	}}
	if c > 1 {
		const threads = 512
		steps = append(steps, step{
			kernel: "carve_gqa_decode_combine_" + name,
			grid:   Dim3{X: uint32(g.b * g.nq), Y: 1, Z: 1}, block: Dim3{X: threads, Y: 1, Z: 1},
			shared: uint32((c + 1 + threads) * 4), dependent: decodePDL,
			params: []param{x.out, x.part, i64p(g.b * g.nq), i32p(int(g.d)), i32p(int(c))},
		})
	}
	return steps, nil
}
