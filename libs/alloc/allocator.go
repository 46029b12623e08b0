package alloc

// Stream-ordered caching allocator.
//
// The allocator is of the class of PyTorch's CUDA caching allocator: device memory is obtained
// from the Device in segments, segments are carved into blocks, and freed blocks are cached and
// handed out again without calling the device. It differs in structure where Go allows better:
// each stream has its own heap with its own lock, so allocations on different streams do not
// contend, and an Allocation is a small value that carries its block, so Free needs no address
// map.
//
// Terms
//
//	segment  one device allocation (Device.Malloc). It belongs to exactly one heap for its whole
//	         life and is returned to the device only when it is one free block again.
//	block    a contiguous piece of a segment. The blocks of a segment tile it without gaps and
//	         are linked in address order (prev/next). A block is in exactly one of five states:
//	           allocated  handed to a caller (allocated=true);
//	           held       freed by the caller, but not reusable yet: it waits for events on the
//	                      streams that used it (holds>0, in heap.pending) or for a capture to end
//	                      or a graph to be released (holds>0, in capture.deferred/graph.retained);
//	           quick      freed, reusable at exactly its size, not yet coalesced (in heap.quick);
//	           indexed    freed, coalesced, in the heap's free index (indexed=true);
//	           spare      not part of any segment; a recycled struct in heap.spare.
//	heap     the segments, free index, quick blocks and pending events of one stream (a general
//	         heap), or of one stream inside one graph-private pool (a pool heap).
//	pool     small (blocks of at most 1 MiB, carved from 2 MiB segments) or large; a heap keeps a
//	         free index per pool and a request only ever takes blocks of its own pool.
//
// Sizes (roundSize, segmentSize, shouldSplit)
//
// Requests are rounded up to a multiple of 512 bytes (minBlockSize), so every block, offset and
// segment size is a multiple of 512 and every address is 512-aligned (more than the 256 the
// architecture asks for). Requests up to 1 MiB are small and share 2 MiB segments. Larger
// requests below 10 MiB share 20 MiB segments; requests of 10 MiB or more get a segment of their
// size rounded up to 2 MiB. A block is split when what remains is worth keeping: any remainder in
// the small pool, a remainder over 1 MiB in the large pool (smaller remainders stay inside the
// block, so large blocks do not shatter into slivers).
//
// Finding a block (take)
//
// A request first looks among the heap's quick blocks (the last few blocks freed) for one of
// exactly its size: that is a best fit, and reusing it skips coalescing and splitting, which
// makes the common free-then-allocate-again pattern cheap. Otherwise the quick blocks are
// coalesced into the free index and the index returns the best fit over all free memory of the
// request's pool: the smallest block that is large enough, the lowest address among equals
// (freeIndex). If nothing fits, the heap grows by a segment. If the device or the byte limit
// refuses, every heap's whole free segments go back to the device (after waiting for pending
// events) and the request is retried once; then it fails with an *OutOfMemoryError.
//
// Invariants, and where they are kept (and tested)
//
//  1. Blocks of a segment tile it in address order: prev.ptr+prev.size == ptr. Kept by take
//     (split) and release (coalesce), the only places that change ptr, size, prev or next.
//     (checkHeap in the tests, after every step of a randomized sequence.)
//  2. No two adjacent blocks are both indexed: release merges a block with indexed neighbours
//     before indexing it. Allocated, held and quick blocks are never merged; quick blocks are
//     merged when flushQuick hands them to release. (checkHeap.)
//  3. A block is indexed iff it is in the free index, in the bin of its size (freeIndex.insert
//     and removeAt are the only writers of indexed). (checkHeap.)
//  4. Stream rule: a block is reused only by allocations on its heap's stream. A block freed
//     while work on its stream may still use it is safe to hand out again on that stream,
//     because later work on the same stream runs after earlier work. Blocks never move between
//     heaps; a heap serves exactly one stream (heapFor). (TestStreamRule; TestStreamRuleBroken
//     removes the rule with testHooks.sharedHeap and shows the CPU device corrupting data.)
//  5. Record-stream rule: a block used on other streams (RecordStream) is held after Free
//     until an event recorded on each of those streams at Free time has completed
//     (recordUses, processEvents). Scratch holds its block the same way for its own stream, so a
//     workspace is free again only when its invocation is done. Events are recycled through
//     the allocator's event pool. (TestRecordStream and its Broken twin, the Scratch tests.)
//  6. Capture rule: while a stream is captured its allocations come from the capture's
//     GraphPool; blocks freed during a capture go back only to that pool, and only
//     immediately if no other stream used them (otherwise they are held until the capture
//     ends). Blocks of other pools freed during a capture are held by the capture's graph until
//     the graph is released, because the graph's replays may still touch them
//     (freeCapturedLocked). A pool's memory is never handed to allocations outside the pool:
//     pool heaps are reachable only through the capture that owns the pool, and a pool's
//     segments go back to the device, not to another heap, when the pool is released.
//     No device memory is freed during a capture (freeGate, freeSegments). (capture_test.go.)
//  7. A destroyed stream retains nothing: DestroyStream waits for the stream's work and the
//     heap's pending events, returns every whole free segment to the device and marks the heap
//     dead; a dead heap returns each segment to the device as soon as it is whole and free
//     again, and is retired (its statistics folded into the allocator's) when it has none.
//     (TestDestroyStreamRetainsNothing.)
//  8. Reserved bytes (segments and arenas) never exceed the byte limit: reserve checks and
//     adds atomically before every Device.Malloc. (TestByteLimit, TestArenaCapacity.)
//  9. No allocator lock is held across a call that waits for the device (Synchronize*,
//     Device.Free, which waits like cudaFree). Non-blocking device calls (Malloc, RecordEvent,
//     QueryEvent, CaptureInfo, NewEvent) may be made with a heap lock held. Consequently work
//     launched on a stream must not call into the allocator (as CUDA host functions must not
//     call CUDA): a Free that waits for that stream would wait for itself.
//
// Locking
//
// Allocator is safe for concurrent use by multiple goroutines. Its locks:
//
//	Allocator.mu        the stream registry's writers, the capture registry, graph pools and
//	                    their heaps, the set of heaps kept for statistics.
//	Allocator.freeGate  a read-write lock held for reading around device frees and for writing
//	                    by BeginCapture while it raises the capture count, so that no device
//	                    free starts once a capture has begun.
//	heap.mu             everything inside one heap: its blocks, free index, quick blocks,
//	                    pending events, spare structs and per-heap statistics.
//	Allocator.evMu      the pool of idle events.
//	Allocator.waitMu    blocks waiting for all captures to end (a use stream was captured when
//	                    their events were due), and the capture count's decrements.
//
// Lock order: Allocator.mu, then Allocator.freeGate, then heap.mu, then Allocator.evMu or
// Allocator.waitMu. At most one heap.mu is held at a time. The hot path (Alloc and Free with no capture underway) takes
// only its heap's mu: the stream registry is read through an atomic pointer to an immutable
// map, and allocator-wide statistics are atomics (one add per Alloc or Free). An Allocation
// carries its heap as well as its block, and a block struct is recycled only within its heap, so
// Free locks the right heap without looking at the block; the block's gen is then compared
// under that lock, so a stale or doubled Free is detected rather than corrupting the heap.

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
)

// Size classes; see the comment at the top of this file.
const (
	minBlockShift       = 9
	minBlockSize  int64 = 1 << minBlockShift // every block size is a multiple of this
	smallSize     int64 = 1 << 20            // largest request served from the small pool
	smallSegment  int64 = 2 << 20            // segment size of the small pool
	largeSegment  int64 = 20 << 20           // shared segment for requests in (smallSize, minLargeAlloc)
	minLargeAlloc int64 = 10 << 20           // requests of at least this get their own segment
	roundLarge    int64 = 2 << 20            // granularity of own segments
)

// maxRequest is the largest size Alloc accepts: its rounded segment must fit in an int64.
const maxRequest = math.MaxInt64 - roundLarge

// roundSize returns the block size for a request of n > 0 bytes.
func roundSize(n int64) int64 {
	return (n + minBlockSize - 1) &^ (minBlockSize - 1)
}

// segmentSize returns the device allocation made for a block of size bytes when no cached block
// fits.
func segmentSize(size int64) int64 {
	switch {
	case size <= smallSize:
		return smallSegment
	case size < minLargeAlloc:
		return largeSegment
	default:
		return (size + roundLarge - 1) &^ (roundLarge - 1)
	}
}

// shouldSplit reports whether a free block with remaining bytes beyond a request is split.
func shouldSplit(small bool, remaining int64) bool {
	if small {
		return remaining >= minBlockSize
	}
	return remaining > smallSize
}

// Options configure an Allocator.
type Options struct {
	// Limit caps the bytes the allocator reserves from the device (segments and arenas); 0 means
	// no cap beyond the device's memory.
	Limit int64
}

// Allocator is a stream-ordered caching allocator over one Device; see the comment at the top
// of allocator.go for its rules. It is safe for concurrent use by multiple goroutines.
type Allocator struct {
	dev   Device
	limit int64

	streams  atomic.Pointer[map[Stream]*heap] // general heaps by stream; immutable maps
	captures atomic.Int32                     // captures begun through the allocator and not ended
	st       counters                         // allocator-wide statistics

	mu          sync.Mutex
	heaps       map[*heap]bool // every heap not yet retired, for statistics and cache release
	retired     heapStats      // statistics of retired heaps
	byCapture   map[CaptureID]*capture
	byStream    map[Stream]*capture // captures by origin stream
	lastPool    uint64
	closed      atomic.Bool
	freeGate    sync.RWMutex // read-held around device frees; BeginCapture write-locks it
	hooks       testHooks
	sharedHeap  *heap // hooks.sharedHeap: the one heap every stream gets
	evMu        sync.Mutex
	idleEvents  []Event
	waitMu      sync.Mutex
	waitCapture []*block // held until no capture is underway: used on a captured stream
}

// testHooks break invariants on purpose so that tests can show the CPU device detects the
// resulting corruption. They are set only by tests in this package.
type testHooks struct {
	sharedHeap     bool // every stream shares one heap: breaks the stream rule (invariant 4)
	ignoreUses     bool // Free ignores RecordStream uses: breaks the record-stream rule (invariant 5)
	scratchNoEvent bool // Scratch.Release frees at once, without waiting for the invocation
}

// New returns an allocator over dev.
func New(dev Device, opts Options) (*Allocator, error) {
	if dev == nil {
		return nil, errors.New("alloc: nil device")
	}
	if opts.Limit < 0 {
		return nil, fmt.Errorf("alloc: byte limit %d is negative", opts.Limit)
	}
	al := &Allocator{
		dev:       dev,
		limit:     opts.Limit,
		heaps:     make(map[*heap]bool),
		byCapture: make(map[CaptureID]*capture),
		byStream:  make(map[Stream]*capture),
	}
	empty := map[Stream]*heap{}
	al.streams.Store(&empty)
	return al, nil
}

// Device returns the allocator's device.
func (al *Allocator) Device() Device { return al.dev }

// Allocation is memory handed out by an Allocator: a small value to pass to Free. The zero
// Allocation (and the one Alloc returns for zero bytes) has a null Ptr and frees as a no-op.
// An Allocation may be copied; it is freed once, by any copy.
//
// The methods of an Allocation are safe for concurrent use (it is a value); the memory it names
// is the caller's to synchronise, in stream order.
type Allocation struct {
	h      *heap  // b's heap: block structs are recycled only within their heap
	b      *block // nil for zero bytes
	gen    uint64
	ptr    Ptr
	size   int64
	stream Stream
}

// Ptr returns the allocation's device address (512-byte aligned).
func (a Allocation) Ptr() Ptr { return a.ptr }

// Size returns the bytes requested; the block behind it may be larger.
func (a Allocation) Size() int64 { return a.size }

// Stream returns the stream the allocation was made on.
func (a Allocation) Stream() Stream { return a.stream }

// Region returns the requested bytes as a Region.
func (a Allocation) Region() Region { return Region{Ptr: a.ptr, Size: a.size} }

// block is a piece of a segment; see the comment at the top of this file.
type block struct {
	ptr       Ptr
	size      int64
	requested int64
	seg       *segment
	prev      *block // address-order neighbours in seg, or nil
	next      *block
	gen       uint64 // bumped whenever a handle to this block goes stale
	allocated bool
	indexed   bool     // in the free index
	holds     int      // events and capture holds before the block may be released
	uses      []Stream // other streams the allocation was used on (RecordStream)
	_         [32]byte // 128 bytes: blocks of different streams never share a cache line
}

// segment is one device allocation.
type segment struct {
	base  Ptr
	size  int64
	heap  *heap // never changes
	small bool
	head  *block // the block at base; splits and merges keep it (guarded by heap.mu)
}

// heap is the memory of one stream (or one stream within one graph pool); see the comment at
// the top of this file. Its fields are guarded by mu, except al, stream and pool, which never
// change.
type heap struct {
	al     *Allocator
	stream Stream
	pool   *GraphPool

	mu      sync.Mutex
	small   *freeIndex // allocated on first use
	large   *freeIndex
	pending []pendingEvent
	stuck   []*block            // held for good: an event for their uses failed (releaseStuck)
	quick   [quickBlocks]*block // recently freed blocks, not yet coalesced: quick[:nquick]
	nquick  int
	spare   []*block
	segs    map[*segment]bool // the heap's segments
	dead    bool              // the stream was destroyed or the pool released
	retired bool              // folded into Allocator.retired; guarded by Allocator.mu too
	st      heapStats
}

type pendingEvent struct {
	ev Event
	b  *block
}

func (h *heap) index(small bool) *freeIndex {
	if small {
		if h.small == nil {
			h.small = new(freeIndex)
		}
		return h.small
	}
	if h.large == nil {
		h.large = new(freeIndex)
	}
	return h.large
}

func (h *heap) newBlock() *block {
	if n := len(h.spare); n > 0 {
		b := h.spare[n-1]
		h.spare = h.spare[:n-1]
		return b
	}
	return new(block)
}

// recycle keeps b's struct for reuse; the gen bump makes every handle to it stale.
func (h *heap) recycle(b *block) {
	gen, uses := b.gen+1, b.uses[:0]
	*b = block{gen: gen, uses: uses}
	h.spare = append(h.spare, b)
}

// quickBlocks is how many freed blocks a heap keeps uncoalesced for reuse at the same size.
const quickBlocks = 8

// take returns an allocated block for size: a quick block of exactly that size, or else the
// best-fitting free block from the index (after the quick blocks joined it), split if worthwhile;
// nil when nothing fits.
//
// The quick blocks are the few most recently freed blocks, kept out of the index so that the
// common free-then-allocate-the-same-size pattern skips coalescing and splitting. A quick block of
// exactly the requested size is a best fit (no fitting block is smaller); on any other request
// the quick blocks are coalesced into the index first, so the search sees all free memory.
func (h *heap) take(size int64) *block {
	for i := h.nquick - 1; i >= 0; i-- {
		if b := h.quick[i]; b.size == size {
			h.nquick--
			h.quick[i] = h.quick[h.nquick]
			h.quick[h.nquick] = nil
			b.allocated = true
			return b
		}
	}
	h.flushQuick() // take is called on live heaps only: no segment comes back
	small := size <= smallSize
	x := h.index(small)
	b := x.takeBestFit(size)
	if b == nil {
		return nil
	}
	if rest := b.size - size; shouldSplit(small, rest) {
		r := h.newBlock()
		r.ptr, r.size, r.seg = b.ptr.Add(size), rest, b.seg
		r.prev, r.next = b, b.next
		if b.next != nil {
			b.next.prev = r
		}
		b.next = r
		b.size = size
		x.insert(r)
	}
	b.allocated = true
	return b
}

// grow obtains a new segment for a block of size bytes, indexes it and takes the block.
func (h *heap) grow(size int64) (*block, error) {
	al := h.al
	n := segmentSize(size)
	if !al.reserve(n) {
		return nil, errLimit
	}
	p, err := al.dev.Malloc(n)
	al.st.deviceMallocs.Add(1)
	if err != nil {
		al.unreserve(n)
		return nil, err
	}
	al.st.segmentAdded(n)
	seg := &segment{base: p, size: n, heap: h, small: size <= smallSize}
	h.addSegment(seg)
	return h.take(size), nil
}

// release returns a block that is neither allocated nor held to the free index, merging it with
// free neighbours (invariant 2). If the heap is dead and the block is now its whole segment, the
// segment leaves the heap and is returned for the caller to free once it has unlocked.
func (h *heap) release(b *block) *segment {
	x := h.index(b.seg.small)
	if p := b.prev; p != nil && p.indexed {
		x.remove(p)
		p.size += b.size
		p.next = b.next
		if b.next != nil {
			b.next.prev = p
		}
		h.recycle(b)
		b = p
	}
	if n := b.next; n != nil && n.indexed {
		x.remove(n)
		b.size += n.size
		b.next = n.next
		if n.next != nil {
			n.next.prev = b
		}
		h.recycle(n)
	}
	if h.dead && b.prev == nil && b.next == nil {
		seg := b.seg
		h.recycle(b)
		delete(h.segs, seg)
		return seg
	}
	x.insert(b)
	return nil
}

// flushQuick coalesces the quick blocks into the free index. It returns the segments a dead
// heap gave up.
func (h *heap) flushQuick() []*segment {
	var segs []*segment
	for i := range h.nquick {
		b := h.quick[i]
		h.quick[i] = nil
		if seg := h.release(b); seg != nil {
			segs = append(segs, seg)
		}
	}
	h.nquick = 0
	return segs
}

// cache keeps a freed block: as a quick block if there is room, else in the free index. It
// returns the segment a dead heap gave up, if any.
func (h *heap) cache(b *block) *segment {
	if h.nquick < quickBlocks && !h.dead {
		h.quick[h.nquick] = b
		h.nquick++
		return nil
	}
	return h.release(b)
}

// wholeSegments removes every free block that is a whole segment from the index and returns
// their segments, for the caller to free once it has unlocked.
func (h *heap) wholeSegments() []*segment {
	segs := h.flushQuick()
	for _, x := range []*freeIndex{h.small, h.large} {
		if x == nil {
			continue
		}
		var whole []*block
		x.each(func(b *block) {
			if b.prev == nil && b.next == nil {
				whole = append(whole, b)
			}
		})
		for _, b := range whole {
			x.remove(b)
			segs = append(segs, b.seg)
			delete(h.segs, b.seg)
			h.recycle(b)
		}
	}
	return segs
}

// processEvents releases held blocks whose events have all completed. It returns the segments
// a dead heap gave up.
func (h *heap) processEvents() []*segment {
	al := h.al
	var segs []*segment
	keep := h.pending[:0]
	for _, pe := range h.pending {
		done, err := al.dev.QueryEvent(pe.ev)
		if err != nil || !done {
			keep = append(keep, pe)
			continue
		}
		al.putEvent(pe.ev)
		if seg := h.unhold(pe.b); seg != nil {
			segs = append(segs, seg)
		}
	}
	clear(h.pending[len(keep):])
	h.pending = keep
	return segs
}

// unhold drops one hold on b and releases it when none remain.
func (h *heap) unhold(b *block) *segment {
	b.holds--
	if b.holds > 0 {
		return nil
	}
	h.al.st.unheld(b.size)
	h.st.activeFreed++
	h.st.activeFreedBytes += b.size
	b.uses = b.uses[:0]
	return h.release(b)
}

// recordUses records an event on every stream in b.uses (and on the heap's own stream when own
// is set) and holds b until they complete. It returns whether any event was recorded.
func (h *heap) recordUses(b *block, own bool) (bool, error) {
	al := h.al
	streams := b.uses
	if own {
		streams = append(streams, h.stream)
	}
	if al.captures.Load() > 0 && al.waitForCaptures(b, streams) {
		if own {
			b.uses = streams[:len(streams)-1]
		}
		return true, nil
	}
	var errs []error
	recorded := false
	for _, s := range streams {
		if !al.live(s) && s != h.stream {
			continue // destroyed through the allocator, which waited for its work
		}
		ev, err := al.getEvent()
		if err == nil {
			err = al.dev.RecordEvent(ev, s)
			al.st.eventRecords.Add(1)
			if err != nil {
				al.putEvent(ev)
			}
		}
		if err != nil {
			// The block stays held for good: leaking it is safe, reusing it might not be.
			errs = append(errs, fmt.Errorf("alloc: record event for a block used on stream %d: %w", s, err))
			b.holds++
			h.stuck = append(h.stuck, b)
			continue
		}
		h.pending = append(h.pending, pendingEvent{ev, b})
		b.holds++
		recorded = true
	}
	if own {
		b.uses = streams[:len(streams)-1]
	}
	return recorded || len(errs) > 0, errors.Join(errs...)
}

// waitForCaptures holds b until no capture is underway if one of streams is being captured: an
// event recorded there would belong to the capture and could not be queried. h.mu must be held.
func (al *Allocator) waitForCaptures(b *block, streams []Stream) bool {
	al.waitMu.Lock()
	defer al.waitMu.Unlock()
	for _, s := range streams {
		if _, capturing, err := al.dev.CaptureInfo(s); err == nil && capturing {
			b.holds++
			al.waitCapture = append(al.waitCapture, b)
			return true
		}
	}
	return false
}

// captureEnded lowers the capture count and, when no capture is left, releases the blocks that
// waited for that (waitForCaptures). No lock may be held.
func (al *Allocator) captureEnded() error {
	al.waitMu.Lock()
	var bs []*block
	if al.captures.Add(-1) == 0 {
		bs = al.waitCapture
		al.waitCapture = nil
	}
	al.waitMu.Unlock()
	var errs []error
	for _, b := range bs {
		errs = append(errs, al.releaseHold(b))
	}
	return errors.Join(errs...)
}

// Alloc returns n bytes for use on stream s, in stream order: the memory may be used by work
// queued on s from now on, and by work on other streams only after RecordStream. Alloc of 0
// bytes returns a zero Allocation without touching the device. When the device (or the byte
// limit) has no room, Alloc returns cached segments to the device and retries once; if that
// fails too it returns an *OutOfMemoryError.
func (al *Allocator) Alloc(s Stream, n int64) (Allocation, error) {
	if n <= 0 || n > maxRequest {
		if n == 0 {
			return Allocation{stream: s}, nil
		}
		return Allocation{}, fmt.Errorf("alloc: request of %d bytes is out of range", n)
	}
	if al.closed.Load() {
		return Allocation{}, errAllocatorClosed
	}
	size := roundSize(n)
	for retried := false; ; retried = true {
		h, err := al.heapFor(s)
		if err != nil {
			return Allocation{}, err
		}
		h.mu.Lock()
		if h.dead {
			h.mu.Unlock()
			return Allocation{}, fmt.Errorf("alloc: stream %d was destroyed: %w", s, ErrInvalidHandle)
		}
		if len(h.pending) > 0 {
			h.processEvents() // a live heap gives up no segments
		}
		b := h.take(size)
		if b == nil {
			b, err = h.grow(size)
		}
		if b != nil {
			b.requested = n
			h.st.allocs++
			h.st.allocBytes += b.size
			h.st.requested += n
			h.st.maxAlloc = max(h.st.maxAlloc, b.size)
			a := Allocation{h: h, b: b, gen: b.gen, ptr: b.ptr, size: n, stream: s}
			h.mu.Unlock()
			al.st.alloc(b.size)
			return a, nil
		}
		h.mu.Unlock()
		if !errors.Is(err, ErrOutOfMemory) {
			return Allocation{}, fmt.Errorf("alloc: %d bytes on stream %d: %w", n, s, err)
		}
		if retried || al.captures.Load() > 0 {
			return Allocation{}, al.outOfMemory(s, n, size, err)
		}
		al.st.retries.Add(1)
		if err := al.releaseCached(); err != nil {
			return Allocation{}, err
		}
	}
}

// Free returns a's memory to the allocator. Work already queued on a's stream may still use
// it: the block is handed out again only to later allocations on the same stream, or, if it was
// used on other streams (RecordStream), only after those streams' work queued before this call
// has run. Freeing an Allocation twice is an error, not a corruption.
func (al *Allocator) Free(a Allocation) error {
	return al.free(a, false)
}

// free releases a; own additionally holds the block until the work queued on its own stream
// before the call has run (Scratch).
func (al *Allocator) free(a Allocation, own bool) error {
	b, h := a.b, a.h
	if b == nil {
		return nil
	}
	if al.captures.Load() > 0 {
		al.mu.Lock()
		h.mu.Lock()
		done, err := al.freeCapturedLocked(h, a)
		al.mu.Unlock()
		if done {
			h.mu.Unlock()
			return err
		}
	} else {
		h.mu.Lock()
	}
	if err := h.freeLocked(a); err != nil {
		h.mu.Unlock()
		return err
	}
	var (
		seg  *segment
		err  error
		held bool
	)
	if al.hooks.ignoreUses {
		b.uses = b.uses[:0]
	}
	if al.hooks.scratchNoEvent {
		own = false
	}
	if len(b.uses) > 0 || own {
		held, err = h.recordUses(b, own)
	}
	if held {
		al.st.held(b.size)
	} else {
		h.st.activeFreed++
		h.st.activeFreedBytes += b.size
		b.uses = b.uses[:0]
		seg = h.cache(b)
	}
	dead := h.dead
	h.mu.Unlock()
	if seg != nil {
		err = errors.Join(err, al.freeSegments([]*segment{seg}))
	}
	if dead {
		// Nobody allocates from a dead heap, so nobody else would process its events.
		err = errors.Join(err, al.drain(h))
		al.maybeRetire(h)
	}
	return err
}

// freeLocked validates a and moves its block out of the allocated state.
func (h *heap) freeLocked(a Allocation) error {
	b := a.b
	if !b.allocated || b.gen != a.gen {
		return fmt.Errorf("alloc: free of %#x (%d bytes on stream %d): %w", uintptr(a.ptr), a.size, a.stream, ErrInvalidFree)
	}
	b.allocated = false
	b.gen++
	h.st.frees++
	h.st.freeBytes += b.size
	h.st.requested -= b.requested
	h.al.st.free(b.size)
	return nil
}

// ErrInvalidFree: Free or RecordStream of an Allocation that is not live (freed already, or
// never returned by this allocator).
var ErrInvalidFree = errors.New("allocation is not live")

// RecordStream declares that a is used by work on stream s as well as on its own stream. When a
// is freed, its block is held until the work queued on s before the Free has run.
func (al *Allocator) RecordStream(a Allocation, s Stream) error {
	b := a.b
	if b == nil {
		return nil
	}
	if s == 0 {
		return fmt.Errorf("alloc: record stream 0: %w", ErrInvalidHandle)
	}
	if !al.live(s) {
		if _, err := al.register(s); err != nil { // so that Free can tell s is live
			return err
		}
	}
	h := a.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if !b.allocated || b.gen != a.gen {
		return fmt.Errorf("alloc: record stream %d for %#x: %w", s, uintptr(a.ptr), ErrInvalidFree)
	}
	if s == h.stream {
		return nil
	}
	for _, u := range b.uses {
		if u == s {
			return nil
		}
	}
	b.uses = append(b.uses, s)
	return nil
}

// heapFor returns the heap that serves allocations on s now: the pool heap of s's capture while
// s is captured, else s's general heap (created on first use).
func (al *Allocator) heapFor(s Stream) (*heap, error) {
	if s == 0 {
		return nil, fmt.Errorf("alloc: stream 0: %w", ErrInvalidHandle)
	}
	if al.captures.Load() > 0 {
		if h, err := al.captureHeap(s); h != nil || err != nil {
			return h, err
		}
	}
	if h := (*al.streams.Load())[s]; h != nil {
		return h, nil
	}
	return al.register(s)
}

// live reports whether s is a registered, not destroyed stream.
func (al *Allocator) live(s Stream) bool {
	_, ok := (*al.streams.Load())[s]
	return ok
}

// register creates s's general heap.
func (al *Allocator) register(s Stream) (*heap, error) {
	al.mu.Lock()
	defer al.mu.Unlock()
	if al.closed.Load() {
		return nil, errAllocatorClosed
	}
	old := *al.streams.Load()
	if h := old[s]; h != nil {
		return h, nil
	}
	h := al.sharedHeap
	if h == nil || !al.hooks.sharedHeap {
		h = &heap{al: al, stream: s}
		al.heaps[h] = true
		if al.hooks.sharedHeap {
			al.sharedHeap = h
		}
	}
	m := make(map[Stream]*heap, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[s] = h
	al.streams.Store(&m)
	return h, nil
}

var errAllocatorClosed = errors.New("alloc: allocator is closed")

// errLimit reports a segment refused by the byte limit.
var errLimit = fmt.Errorf("byte limit reached: %w", ErrOutOfMemory)

// reserve adds n to the reserved bytes unless that would pass the limit.
func (al *Allocator) reserve(n int64) bool {
	for {
		cur := al.st.reserved.Load()
		if al.limit > 0 && cur+n > al.limit {
			return false
		}
		if al.st.reserved.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

func (al *Allocator) unreserve(n int64) { al.st.reserved.Add(-n) }

// freeSegments returns segments to the device. No lock may be held (invariant 9). Device frees
// are illegal during a capture; a segment that would be freed then goes back, whole and free, to
// its (dead) heap, and releaseDead frees it once no capture is underway.
func (al *Allocator) freeSegments(segs []*segment) error {
	if len(segs) == 0 {
		return nil
	}
	al.freeGate.RLock()
	defer al.freeGate.RUnlock()
	if al.captures.Load() > 0 {
		for _, seg := range segs {
			seg.heap.reinsert(seg)
		}
		return nil
	}
	var errs []error
	for _, seg := range segs {
		err := al.dev.Free(seg.base)
		al.st.deviceFrees.Add(1)
		if err != nil {
			errs = append(errs, fmt.Errorf("alloc: free segment %#x: %w", uintptr(seg.base), err))
			continue
		}
		al.unreserve(seg.size)
		al.st.segmentRemoved(seg.size)
	}
	return errors.Join(errs...)
}

// reinsert gives a whole segment back to h as one free block.
func (h *heap) reinsert(seg *segment) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.addSegment(seg)
}

// addSegment makes seg one free block of h.
func (h *heap) addSegment(seg *segment) {
	b := h.newBlock()
	b.ptr, b.size, b.seg = seg.base, seg.size, seg
	seg.head = b
	if h.segs == nil {
		h.segs = make(map[*segment]bool)
	}
	h.segs[seg] = true
	h.index(seg.small).insert(b)
}

// drain waits for h's pending events and releases their blocks (and, for a dead heap, the
// segments that become whole). No lock may be held.
func (al *Allocator) drain(h *heap) error {
	h.mu.Lock()
	evs := make([]Event, len(h.pending))
	for i, pe := range h.pending {
		evs[i] = pe.ev
	}
	h.mu.Unlock()
	var errs []error
	for _, ev := range evs {
		// The event may have been recycled and re-recorded meanwhile; waiting for its new
		// record only waits longer.
		if err := al.dev.SynchronizeEvent(ev); err != nil {
			errs = append(errs, err)
		}
		al.st.syncs.Add(1)
	}
	h.mu.Lock()
	segs := h.processEvents()
	if h.dead {
		segs = append(segs, h.wholeSegments()...)
	}
	h.mu.Unlock()
	errs = append(errs, al.freeSegments(segs))
	return errors.Join(errs...)
}

// releaseCached returns every whole free segment of every stream's general heap (and of dead
// heaps) to the device, after waiting for pending events. Live graph pools keep their memory
// (invariant 6). During a
// capture it does nothing: device frees are illegal then.
func (al *Allocator) releaseCached() error {
	if al.captures.Load() > 0 {
		return nil
	}
	al.mu.Lock()
	var hs []*heap
	for h := range al.heaps {
		if h.pool == nil || h.dead {
			hs = append(hs, h)
		}
	}
	al.mu.Unlock()
	var errs []error
	for _, h := range hs {
		if err := al.drain(h); err != nil {
			errs = append(errs, err)
		}
		h.mu.Lock()
		segs := h.wholeSegments()
		h.mu.Unlock()
		errs = append(errs, al.freeSegments(segs))
		al.maybeRetire(h)
	}
	return errors.Join(errs...)
}

// EmptyCache returns every cached segment that holds no allocation to the device, waiting for
// pending events first; memory of live graph pools stays reserved. It fails with
// ErrCaptureUnsupported during a capture.
func (al *Allocator) EmptyCache() error {
	if al.captures.Load() > 0 {
		return fmt.Errorf("alloc: empty cache: %w", ErrCaptureUnsupported)
	}
	return al.releaseCached()
}

// DestroyStream waits for the work queued on s, releases everything the allocator caches for s
// (invariant 7) and destroys s on the device. Allocations on s that are still live stay valid;
// their segments go back to the device when they are freed.
func (al *Allocator) DestroyStream(s Stream) error {
	al.mu.Lock()
	if _, ok := al.byStream[s]; ok {
		al.mu.Unlock()
		return fmt.Errorf("alloc: destroy stream %d: it is capturing: %w", s, ErrCaptureUnsupported)
	}
	old := *al.streams.Load()
	h := old[s]
	if h != nil {
		m := make(map[Stream]*heap, len(old))
		for k, v := range old {
			if k != s {
				m[k] = v
			}
		}
		al.streams.Store(&m)
	}
	al.mu.Unlock()

	err := al.dev.SynchronizeStream(s)
	al.st.syncs.Add(1)
	if h != nil && h.stream == s {
		h.mu.Lock()
		h.dead = true
		h.mu.Unlock()
		err = errors.Join(err, al.drain(h))
		al.maybeRetire(h)
	}
	if derr := al.dev.DestroyStream(s); derr != nil {
		err = errors.Join(err, fmt.Errorf("alloc: destroy stream %d: %w", s, derr))
	}
	return err
}

// maybeRetire folds a dead heap that holds no segment into the allocator's statistics.
func (al *Allocator) maybeRetire(h *heap) {
	al.mu.Lock()
	defer al.mu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.dead || h.retired || len(h.segs) > 0 || len(h.pending) > 0 {
		return
	}
	h.retired = true
	al.retired.add(&h.st)
	delete(al.heaps, h)
	h.small, h.large, h.spare = nil, nil, nil
}

// getEvent returns an idle event, creating one if none is idle.
func (al *Allocator) getEvent() (Event, error) {
	al.evMu.Lock()
	defer al.evMu.Unlock()
	if n := len(al.idleEvents); n > 0 {
		ev := al.idleEvents[n-1]
		al.idleEvents = al.idleEvents[:n-1]
		return ev, nil
	}
	ev, err := al.dev.NewEvent()
	if err != nil {
		return 0, fmt.Errorf("alloc: new event: %w", err)
	}
	return ev, nil
}

func (al *Allocator) putEvent(ev Event) {
	al.evMu.Lock()
	al.idleEvents = append(al.idleEvents, ev)
	al.evMu.Unlock()
}

// Close waits for pending events, returns all cached memory (including that of released graph
// pools) to the device and destroys the allocator's events. It reports allocations that are
// still live; their memory stays reserved. The allocator is unusable afterwards; the device is
// not closed.
func (al *Allocator) Close() error {
	if al.captures.Load() > 0 {
		return fmt.Errorf("alloc: close: %w", ErrCaptureUnsupported)
	}
	err := errors.Join(al.releaseStuck(), al.releaseCached())
	al.mu.Lock()
	al.closed.Store(true)
	var hs []*heap
	for h := range al.heaps {
		hs = append(hs, h)
	}
	al.mu.Unlock()
	for _, h := range hs {
		if h.pool != nil {
			err = errors.Join(err, al.drain(h))
		}
	}
	al.evMu.Lock()
	evs := al.idleEvents
	al.idleEvents = nil
	al.evMu.Unlock()
	for _, ev := range evs {
		err = errors.Join(err, al.dev.DestroyEvent(ev))
	}
	if n, bytes := al.st.allocated(); n > 0 {
		err = errors.Join(err, fmt.Errorf("alloc: close: %d allocations (%d bytes) are still live", n, bytes))
	}
	return err
}
