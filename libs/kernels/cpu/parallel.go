package cpu

import (
	"sync/atomic"

	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/par"
)

// Elementwise and row-wise kernels split large runs over the worker pool: a piece of work is
// worth handing to another worker from about parMinElems elements on (waking a worker costs a
// few microseconds, an element a fraction of a nanosecond), in chunks of about parGrainElems.
// A loop takes one participant per parSlotElems elements of work, up to the kernel's workers:
// each one it wakes costs microseconds (more on many-core machines, where helpers contend for
// the loop and pull its operands from other cores' caches), so a loop of a few tens of
// microseconds in all gains nothing from a twelfth of it on each of 12 cores. parSlotElems is
// parMinElems, so that below 2*parMinElems a loop still takes 2 participants, as it did.
const (
	parMinElems   = 1 << 15
	parGrainElems = 1 << 14
	parSlotElems  = parMinElems
)

// Work weights: how many elements of a plain elementwise op (an Add) one element of a kernel
// costs. A loop's serial threshold, chunk size and participants are taken over its weighted
// work, so a kernel whose elements cost more goes parallel sooner, in smaller chunks, on more
// cores. Measured on 16 cores: RotaryEmbedding over [8, 128, 64] (64K elements at about 3 ns
// each, an Add's about 0.35 ns) took 102 us on the 2 participants its element count gave,
// against onnxruntime's 26 us; the norms over the same shape, about 2.4 ns an element, 80 us
// each against 42 us. RotaryEmbedding, vectorised since (about 0.1 ns an element on one core
// of a 2-core machine), keeps weightRow all the same: on the 16 cores its loop over that shape
// took 14 us on 1 participant, 23 on 2, 19 on 4 and 14 on 8 or 16 (a split moves the rows
// between cores' caches), so a split in 2 or 4 would cost more than it saves.
const (
	weightPlain          = 1
	weightTranscendental = 4 // an exp, erf or tanh an element: softmax, GELU
	weightRow            = 8 // short rows with work per row and per element: norms, rotary embeddings
)

// parSlots is the participants worth waking for elems elements of work: one per parSlotElems
// (rounded up), at least 1 and at most workers.
func parSlots(elems, workers int) int {
	return max(min(workers, (elems+parSlotElems-1)/parSlotElems), 1)
}

// loopShape is how a loop over n items of about perItem elements, each element weight plain
// ones' work, runs with up to workers participants: on the caller alone (slots 1) when the
// work is small, n < 2 or there is one worker, else in chunks of grain items over slots
// participants.
func loopShape(n, perItem, weight, workers int) (grain, slots int) {
	item := max(perItem, 1) * max(weight, 1) // an item's weighted work
	if workers <= 1 || n < 2 || n*item < parMinElems {
		return max(n, 1), 1
	}
	return max(1, parGrainElems/item), parSlots(n*item, workers)
}

// attnParticipants is the participants worth waking for attention over b x heads x s query rows
// and t keys of head sizes d and dv (one multiply-add per element of each product), at most
// slots (which size the per-slot scratch). A decode step or a 7-token prompt is a few thousand
// multiply-adds a head: waking 15 helpers for it costs more than it saves.
func attnParticipants(slots, b, heads, s, t, d, dv int) int {
	return min(slots, parSlots(b*heads*s*t*(d+dv), slots))
}

// rangeRunner is a kernel whose work is items [0, n) that can run in any order and in
// parallel: runRange does items [lo, hi).
type rangeRunner interface {
	runRange(in, out []kernels.Tensor, lo, hi int)
}

// rangeBody hands a rangeRunner's items to the pool. The runner is the instance's own
// (immutable) plan and in/out are the caller's, so nothing here allocates.
type rangeBody struct {
	r       rangeRunner
	in, out []kernels.Tensor
}

func (b *rangeBody) Do(_, lo, hi int) { b.r.runRange(b.in, b.out, lo, hi) }

var rangeBodies par.Pool[rangeBody]

// runRanges runs r over n items of about perItem elements each, each element weight plain
// ones' work: on the calling goroutine when the work is small or there is one worker, else over
// the pool in chunks.
func runRanges(r rangeRunner, in, out []kernels.Tensor, n, perItem, weight, workers int) {
	if n <= 0 {
		return
	}
	grain, slots := loopShape(n, perItem, weight, workers)
	if slots <= 1 {
		r.runRange(in, out, 0, n)
		return
	}
	b := rangeBodies.Get()
	*b = rangeBody{r: r, in: in, out: out}
	par.For(n, grain, slots, b)
	*b = rangeBody{}
	rangeBodies.Put(b)
}

// itemsBody hands items [lo, hi) of one kernel run to fn, with the run's kernel, operands and
// integers: kernels whose split depends on run-time values (axes from an input, a reduced
// row's length) use it instead of a rangeRunner. fn is a top-level function, not a closure,
// and the body comes from a free list, so that nothing allocates.
type itemsBody struct {
	fn      func(b *itemsBody, lo, hi int)
	k       any // the kernel instance, a pointer
	in, out []kernels.Tensor
	n       [4]int
	failed  atomic.Bool // set by an fn that found bad input (an index out of range)
}

func (b *itemsBody) Do(_, lo, hi int) { b.fn(b, lo, hi) }

var itemsBodies par.Pool[itemsBody]

// forItems runs fn over n items of about perItem elements each, like runRanges, and reports
// whether every fn call succeeded (none set failed).
func forItems(fn func(b *itemsBody, lo, hi int), k any, in, out []kernels.Tensor, ints [4]int, n, perItem, workers int) (ok bool) {
	if n <= 0 {
		return true
	}
	b := itemsBodies.Get()
	b.fn, b.k, b.in, b.out, b.n = fn, k, in, out, ints
	b.failed.Store(false)
	if grain, slots := loopShape(n, perItem, weightPlain, workers); slots <= 1 {
		fn(b, 0, n)
	} else {
		par.For(n, grain, slots, b)
	}
	ok = !b.failed.Load()
	b.fn, b.k, b.in, b.out = nil, nil, nil, nil
	itemsBodies.Put(b)
	return ok
}
