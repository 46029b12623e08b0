package alloc

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// newAllocator returns an allocator over d, closed (before d) when the test ends.
func newAllocator(t testing.TB, d Device, opts Options) *Allocator {
	t.Helper()
	al, err := New(d, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = al.Close() })
	return al
}

func mustAlloc(t testing.TB, al *Allocator, s Stream, n int64) Allocation {
	t.Helper()
	a, err := al.Alloc(s, n)
	require.NoError(t, err)
	return a
}

// checkHeap verifies invariants 1-3 of allocator.go on h: segments are tiled by address-ordered
// blocks, no two neighbours are both free, and the free index holds exactly the free blocks.
func checkHeap(t testing.TB, h *heap) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	indexed := map[*block]bool{}
	var idxBlocks int
	var idxBytes int64
	for _, x := range []*freeIndex{h.small, h.large} {
		if x == nil {
			continue
		}
		x.each(func(b *block) { indexed[b] = true })
		idxBlocks += x.blocks
		idxBytes += x.bytes
		for i, bin := range x.bins {
			require.Equal(t, len(bin) > 0, x.words[i>>6]&(1<<(i&63)) != 0, "bitmap disagrees with bin %d", i)
			for j, b := range bin {
				require.Equal(t, i, binOf(unitsOf(b.size)), "block in the wrong bin")
				if j > 0 {
					require.True(t, less(bin[j-1], b), "bin %d not sorted", i)
				}
			}
		}
	}
	require.Equal(t, idxBlocks, len(indexed))
	quick := map[*block]bool{}
	for _, b := range h.quick[:h.nquick] {
		require.False(t, b.allocated || b.indexed || b.holds > 0, "a quick block must be free and unindexed")
		quick[b] = true
	}
	for _, b := range h.quick[h.nquick:] {
		require.Nil(t, b)
	}
	seen := 0
	var freeBytes int64
	for seg := range h.segs {
		require.Same(t, h, seg.heap)
		b := seg.head
		require.Nil(t, b.prev)
		require.Equal(t, seg.base, b.ptr)
		end := seg.base
		for ; b != nil; b = b.next {
			require.Same(t, seg, b.seg)
			require.Equal(t, end, b.ptr, "blocks do not tile the segment")
			require.Zero(t, b.size%minBlockSize)
			require.Positive(t, b.size)
			end = b.ptr.Add(b.size)
			free := !b.allocated && b.holds == 0
			require.Equal(t, free && !quick[b], b.indexed, "indexed must mean free and not quick")
			require.Equal(t, b.indexed, indexed[b])
			if b.indexed {
				seen++
				freeBytes += b.size
				if b.next != nil {
					require.False(t, b.next.indexed, "two adjacent indexed blocks were not merged")
				}
			}
			if b.next != nil {
				require.Same(t, b, b.next.prev)
			}
		}
		require.Equal(t, seg.base.Add(seg.size), end, "blocks do not cover the segment")
	}
	require.Equal(t, idxBlocks, seen, "free index holds blocks outside the heap's segments")
	require.Equal(t, idxBytes, freeBytes)
}

// flushQuick coalesces h's quick blocks, as a request of another size would.
func flushQuick(h *heap) {
	h.mu.Lock()
	h.flushQuick()
	h.mu.Unlock()
}

func generalHeap(t testing.TB, al *Allocator, s Stream) *heap {
	t.Helper()
	h := (*al.streams.Load())[s]
	require.NotNil(t, h)
	return h
}

// freeRegions lists h's free blocks in address order.
func freeRegions(h *heap) []Region {
	h.mu.Lock()
	defer h.mu.Unlock()
	var rs []Region
	for _, x := range []*freeIndex{h.small, h.large} {
		if x != nil {
			x.each(func(b *block) { rs = append(rs, Region{b.ptr, b.size}) })
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Ptr < rs[j].Ptr })
	return rs
}

func TestSizeClasses(t *testing.T) {
	const KiB, MiB = 1 << 10, 1 << 20
	tests := []struct {
		n, block, segment int64
	}{
		{1, 512, 2 * MiB},
		{512, 512, 2 * MiB},
		{513, 1024, 2 * MiB},
		{1 * MiB, 1 * MiB, 2 * MiB},
		{1*MiB + 1, 1*MiB + 512, 20 * MiB},
		{10*MiB - 512, 10*MiB - 512, 20 * MiB},
		{10 * MiB, 10 * MiB, 10 * MiB},
		{10*MiB + 1, 10*MiB + 512, 12 * MiB},
		{100*MiB + 3*KiB, 100*MiB + 3*KiB, 102 * MiB},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			require.Equal(t, tc.block, roundSize(tc.n))
			require.Equal(t, tc.segment, segmentSize(roundSize(tc.n)))
		})
	}
	require.True(t, shouldSplit(true, 512))
	require.False(t, shouldSplit(false, 1*MiB))
	require.True(t, shouldSplit(false, 1*MiB+512))
}

func TestAllocAlignedDisjointAndWritable(t *testing.T) {
	d := newCPU(t, 256<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	sizes := []int64{1, 100, 512, 513, 4096, 100 << 10, 1 << 20, 1<<20 + 1, 3 << 20, 12 << 20}
	var as []Allocation
	for i, n := range sizes {
		a := mustAlloc(t, al, s, n)
		require.Zero(t, uintptr(a.Ptr())%uintptr(DefaultPartAlign))
		require.Equal(t, n, a.Size())
		b, err := d.Bytes(a.Ptr(), n)
		require.NoError(t, err, "allocation must lie inside device memory")
		fill(b, byte(i+1))
		as = append(as, a)
	}
	for i, a := range as {
		require.True(t, allAre(HostBytes(a.Ptr(), a.Size()), byte(i+1)), "allocation %d overlaps another", i)
		for j, o := range as[:i] {
			overlap := a.Ptr() < o.Ptr().Add(o.Size()) && o.Ptr() < a.Ptr().Add(a.Size())
			require.False(t, overlap, "allocations %d and %d overlap", i, j)
		}
	}
	checkHeap(t, generalHeap(t, al, s))
	for _, a := range as {
		require.NoError(t, al.Free(a))
	}
	checkHeap(t, generalHeap(t, al, s))
}

func TestSplitBestFitAndCoalesce(t *testing.T) {
	const KiB = 1 << 10
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	h := func() *heap { return generalHeap(t, al, s) }

	// Carve one small segment into 4K, sep, 8K, sep, 16K, sep, rest.
	var as []Allocation
	for _, n := range []int64{4 * KiB, 1 * KiB, 8 * KiB, 1 * KiB, 16 * KiB, 1 * KiB} {
		as = append(as, mustAlloc(t, al, s, n))
	}
	for i := 1; i < len(as); i++ {
		require.Equal(t, as[i-1].Ptr().Add(as[i-1].Size()), as[i].Ptr(), "split blocks must be contiguous")
	}
	require.Equal(t, int64(1), al.Stats().Segments.Current)
	checkHeap(t, h())
	require.NoError(t, al.Free(as[0]))
	require.NoError(t, al.Free(as[2]))
	require.NoError(t, al.Free(as[4]))
	checkHeap(t, h())

	// Best fit: the smallest free block that is large enough.
	x := mustAlloc(t, al, s, 6*KiB)
	require.Equal(t, as[2].Ptr(), x.Ptr(), "6K must come from the 8K hole")
	y := mustAlloc(t, al, s, 3*KiB)
	require.Equal(t, as[0].Ptr(), y.Ptr(), "3K must come from the 4K hole")
	z := mustAlloc(t, al, s, 10*KiB)
	require.Equal(t, as[4].Ptr(), z.Ptr(), "10K must come from the 16K hole")
	w := mustAlloc(t, al, s, 2*KiB)
	require.Equal(t, as[2].Ptr().Add(6*KiB), w.Ptr(), "2K must come from the 2K left of the 8K hole")
	checkHeap(t, h())

	// Coalescing: once everything is free the segment is one block again (after the quick
	// blocks, the most recently freed ones, join the index).
	for _, a := range []Allocation{x, y, z, w, as[1], as[3], as[5]} {
		require.NoError(t, al.Free(a))
		checkHeap(t, h())
	}
	flushQuick(h())
	checkHeap(t, h())
	require.Equal(t, []Region{{as[0].Ptr(), smallSegment}}, freeRegions(h()))
	require.Equal(t, int64(1), al.Stats().Segments.Current, "freeing caches; it does not return memory")
}

func TestLargePoolSplitRuleAndPoolSeparation(t *testing.T) {
	const MiB = 1 << 20
	d := newCPU(t, 128<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)

	a := mustAlloc(t, al, s, 2*MiB) // large: a 20 MiB segment, split
	require.Equal(t, int64(20*MiB), al.Stats().SegmentBytes.Current)
	require.Equal(t, int64(2*MiB), al.Stats().AllocatedBytes.Current)
	b := mustAlloc(t, al, s, 17*MiB+512*1024) // 18 MiB left: a remainder of 0.5 MiB is not split off
	require.Equal(t, a.Ptr().Add(2*MiB), b.Ptr())
	require.Equal(t, int64(20*MiB), al.Stats().AllocatedBytes.Current, "the 0.5 MiB remainder stays in the block")
	require.Equal(t, int64(1), al.Stats().Segments.Current)
	checkHeap(t, generalHeap(t, al, s))

	// Small requests never take large-pool blocks, and the reverse.
	require.NoError(t, al.Free(b))
	c := mustAlloc(t, al, s, 512<<10)
	require.Equal(t, int64(2), al.Stats().Segments.Current, "a small request must get a small segment")
	cseg := c.b.seg
	require.True(t, cseg.small)
	require.NoError(t, al.Free(c))
	e := mustAlloc(t, al, s, 1*MiB+512)
	require.False(t, e.b.seg.small, "a large request must not take the free small segment")
	checkHeap(t, generalHeap(t, al, s))
	require.NoError(t, al.Free(a))
	require.NoError(t, al.Free(e))
}

func TestHeapInvariantsRandomized(t *testing.T) {
	seed := uint64(20240611)
	rng := rand.New(rand.NewPCG(seed, 1))
	d := newCPU(t, 512<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	var live []Allocation
	for step := range 3000 {
		if len(live) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(live))
			require.NoError(t, al.Free(live[i]), "seed %d step %d", seed, step)
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
		} else {
			var n int64
			switch rng.IntN(3) {
			case 0:
				n = 1 + rng.Int64N(4096)
			case 1:
				n = 1 + rng.Int64N(1<<20)
			default:
				n = 1 + rng.Int64N(12<<20)
			}
			a, err := al.Alloc(s, n)
			require.NoError(t, err, "seed %d step %d", seed, step)
			live = append(live, a)
		}
		if step%50 == 0 {
			checkHeap(t, generalHeap(t, al, s))
		}
	}
	for _, a := range live {
		require.NoError(t, al.Free(a))
	}
	h := generalHeap(t, al, s)
	checkHeap(t, h)
	flushQuick(h)
	checkHeap(t, h)
	for _, r := range freeRegions(h) {
		require.Zero(t, r.Size%smallSegment, "seed %d: everything free, yet a segment is still split", seed)
	}
	st := al.Stats()
	require.Zero(t, st.AllocatedBytes.Current)
	require.Equal(t, st.SegmentBytes.Current, st.CachedBytes)
}

func TestQuickBlocks(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	var as []Allocation
	for range quickBlocks + 2 {
		as = append(as, mustAlloc(t, al, s, 4096))
	}
	for _, a := range as {
		require.NoError(t, al.Free(a))
	}
	h := generalHeap(t, al, s)
	checkHeap(t, h)
	require.Equal(t, quickBlocks, h.nquick, "the most recent frees stay uncoalesced")
	require.Equal(t, int64(1), al.Stats().Segments.Current)
	require.Equal(t, smallSegment, al.Stats().CachedBytes, "quick blocks count as cached")

	// Same size: served from the quick blocks, most recent first, without touching the index.
	b := mustAlloc(t, al, s, 4096)
	require.Equal(t, as[quickBlocks-1].Ptr(), b.Ptr())
	require.Equal(t, quickBlocks-1, h.nquick)
	// Another size: the quick blocks are coalesced first and the best fit is found.
	c := mustAlloc(t, al, s, 8192)
	require.Zero(t, h.nquick)
	require.Equal(t, as[0].Ptr(), c.Ptr(), "after coalescing, the lowest-addressed fit")
	checkHeap(t, h)
	require.NoError(t, al.Free(b))
	require.NoError(t, al.Free(c))
	require.NoError(t, al.EmptyCache())
	require.Zero(t, al.Stats().Segments.Current, "EmptyCache coalesces quick blocks and returns the segment")
}

func TestInvalidFree(t *testing.T) {
	d := newCPU(t, 16<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	x := mustAlloc(t, al, s, 1000)
	require.NoError(t, al.Free(x))
	require.ErrorIs(t, al.Free(x), ErrInvalidFree, "double free")
	y := mustAlloc(t, al, s, 1000)
	require.Equal(t, x.Ptr(), y.Ptr())
	require.ErrorIs(t, al.Free(x), ErrInvalidFree, "a stale handle must not free the block's new owner")
	require.ErrorIs(t, al.RecordStream(x, s), ErrInvalidFree)
	require.NoError(t, al.Free(y))
	checkHeap(t, generalHeap(t, al, s))

	z, err := al.Alloc(s, 0)
	require.NoError(t, err)
	require.Zero(t, z.Ptr())
	require.NoError(t, al.Free(z))
	_, err = al.Alloc(s, -1)
	require.Error(t, err)
	_, err = al.Alloc(0, 10)
	require.ErrorIs(t, err, ErrInvalidHandle)
}

// streamReuse runs the scenario the stream rule exists for: stream A still uses a block when
// the host frees it (legal: frees are stream-ordered), stream B then allocates the same size.
// It reports whether B got A's bytes and whether A's data was corrupted.
func streamReuse(t *testing.T, hooks testHooks) (sameBytes, corrupted bool) {
	const n = 64 << 10
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	al.hooks = hooks
	a, b := newStream(t, d), newStream(t, d)

	x := mustAlloc(t, al, a, n)
	start, resume := newGate(), newGate()
	wroteA := make(chan struct{})
	okA := false
	launch(t, d, a, start.fn())
	launch(t, d, a, func() { fill(HostBytes(x.Ptr(), n), 0xA); close(wroteA) })
	launch(t, d, a, resume.fn())
	launch(t, d, a, func() { okA = allAre(HostBytes(x.Ptr(), n), 0xA) })
	require.NoError(t, al.Free(x))

	y := mustAlloc(t, al, b, n)
	launch(t, d, b, func() { <-wroteA; fill(HostBytes(y.Ptr(), n), 0xB) })
	eb, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(eb, b))
	start.open()
	require.NoError(t, d.SynchronizeEvent(eb))
	resume.open()
	require.NoError(t, d.SynchronizeStream(a))
	require.NoError(t, al.Free(y))
	return x.Ptr() == y.Ptr(), !okA
}

func TestStreamRule(t *testing.T) {
	same, corrupted := streamReuse(t, testHooks{})
	require.False(t, same, "a block freed on stream A was handed to stream B")
	require.False(t, corrupted)
}

func TestStreamRuleBrokenCorrupts(t *testing.T) {
	// With the stream check removed (all streams share one heap) the CPU device shows the
	// corruption the rule prevents.
	same, corrupted := streamReuse(t, testHooks{sharedHeap: true})
	require.True(t, same)
	require.True(t, corrupted, "reuse across streams must corrupt A's data on the CPU device")
}

func TestSameStreamReuseIsImmediate(t *testing.T) {
	d := newCPU(t, 16<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	g := newGate()
	launch(t, d, s, g.fn())
	x := mustAlloc(t, al, s, 4096)
	launch(t, d, s, func() { fill(HostBytes(x.Ptr(), 4096), 1) })
	require.NoError(t, al.Free(x))
	y := mustAlloc(t, al, s, 4096)
	require.Equal(t, x.Ptr(), y.Ptr(), "same-stream reuse is ordered by the stream and needs no wait")
	ok := false
	launch(t, d, s, func() { fill(HostBytes(y.Ptr(), 4096), 2) })
	launch(t, d, s, func() { ok = allAre(HostBytes(y.Ptr(), 4096), 2) })
	g.open()
	require.NoError(t, d.SynchronizeStream(s))
	require.True(t, ok)
	require.NoError(t, al.Free(y))
}

// recordStreamReuse: x is allocated on A and used by gated work on B; the host frees x after
// RecordStream(x, B), then A allocates the same size.
func recordStreamReuse(t *testing.T, hooks testHooks) (sameBytes, corrupted bool, al *Allocator, x Allocation, a Stream) {
	const n = 64 << 10
	d := newCPU(t, 64<<20)
	al = newAllocator(t, d, Options{})
	al.hooks = hooks
	a = newStream(t, d)
	b := newStream(t, d)

	x = mustAlloc(t, al, a, n)
	start, resume := newGate(), newGate()
	wroteB := make(chan struct{})
	okB := false
	launch(t, d, b, start.fn())
	launch(t, d, b, func() { fill(HostBytes(x.Ptr(), n), 0xB); close(wroteB) })
	launch(t, d, b, resume.fn())
	launch(t, d, b, func() { okB = allAre(HostBytes(x.Ptr(), n), 0xB) })
	require.NoError(t, al.RecordStream(x, b))
	require.NoError(t, al.Free(x))
	if !hooks.ignoreUses {
		require.Equal(t, int64(roundSize(n)), al.Stats().HeldBytes, "the block is held for stream B")
	}

	y := mustAlloc(t, al, a, n)
	launch(t, d, a, func() { <-wroteB; fill(HostBytes(y.Ptr(), n), 0xA) })
	ea, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(ea, a))
	start.open()
	require.NoError(t, d.SynchronizeEvent(ea))
	resume.open()
	require.NoError(t, d.SynchronizeStream(b))
	require.NoError(t, al.Free(y))
	return x.Ptr() == y.Ptr(), !okB, al, x, a
}

func TestRecordStream(t *testing.T) {
	same, corrupted, al, x, a := recordStreamReuse(t, testHooks{})
	require.False(t, same, "a block used on stream B was reused before B's work finished")
	require.False(t, corrupted)
	// B has finished: the next allocations on A process the event and get the block back.
	z1 := mustAlloc(t, al, a, x.Size())
	z2 := mustAlloc(t, al, a, x.Size())
	require.Contains(t, []Ptr{z1.Ptr(), z2.Ptr()}, x.Ptr(), "the block returns to its stream's pool once the event completed")
	require.Zero(t, al.Stats().HeldBytes)
	require.NoError(t, al.Free(z1))
	require.NoError(t, al.Free(z2))
	checkHeap(t, generalHeap(t, al, a))
}

func TestRecordStreamBrokenCorrupts(t *testing.T) {
	same, corrupted, _, _, _ := recordStreamReuse(t, testHooks{ignoreUses: true})
	require.True(t, same)
	require.True(t, corrupted, "ignoring RecordStream must corrupt B's data on the CPU device")
}

func TestDestroyStreamRetainsNothing(t *testing.T) {
	d := newCPU(t, 128<<20)
	al := newAllocator(t, d, Options{})
	s, other := newStream(t, d), newStream(t, d)
	var live Allocation
	for i, n := range []int64{100, 4096, 1 << 20, 3 << 20, 12 << 20} {
		a := mustAlloc(t, al, s, n)
		if i == 2 {
			live = a // still allocated when the stream is destroyed
			continue
		}
		require.NoError(t, al.Free(a))
	}
	// A block used on another stream whose work is gated: destroying s must wait for it.
	used := mustAlloc(t, al, s, 8192)
	g := newGate()
	launch(t, d, other, g.fn())
	require.NoError(t, al.RecordStream(used, other))
	require.NoError(t, al.Free(used))
	require.Positive(t, al.Stats().Segments.Current)

	destroyed := make(chan error)
	go func() { destroyed <- al.DestroyStream(s) }()
	g.open()
	require.NoError(t, <-destroyed)
	st := al.Stats()
	require.Equal(t, int64(1), st.Segments.Current, "only the segment of the live allocation remains")
	require.Zero(t, st.HeldBytes)

	require.NoError(t, al.Free(live))
	st = al.Stats()
	require.Zero(t, st.Segments.Current, "a destroyed stream's memory goes back to the device")
	require.Zero(t, st.TotalAllocatedBytes)
	require.Zero(t, st.CachedBytes)
	free, total, err := d.MemInfo()
	require.NoError(t, err)
	require.Equal(t, total, free)
	c := d.Calls()
	require.Equal(t, c.Malloc, c.Free)
	al.mu.Lock()
	var streamsLeft []Stream
	for h := range al.heaps {
		streamsLeft = append(streamsLeft, h.stream)
	}
	al.mu.Unlock()
	require.NotContains(t, streamsLeft, s, "the dead heap is retired")
	require.Equal(t, int64(6), st.NumAllocs, "retired heaps keep counting in the statistics")
}

func TestOutOfMemoryReleasesCacheAndRetries(t *testing.T) {
	const MiB = 1 << 20
	d := newCPU(t, 24*MiB)
	al := newAllocator(t, d, Options{})
	a, b := newStream(t, d), newStream(t, d)

	x := mustAlloc(t, al, a, 16*MiB)
	require.NoError(t, al.Free(x)) // cached on a
	y := mustAlloc(t, al, b, 16*MiB)
	st := al.Stats()
	require.Equal(t, int64(1), st.NumAllocRetries, "b's allocation had to release a's cache")
	require.Equal(t, int64(1), st.Segments.Current)

	_, err := al.Alloc(a, 16*MiB)
	require.ErrorIs(t, err, ErrOutOfMemory)
	var oom *OutOfMemoryError
	require.ErrorAs(t, err, &oom)
	require.Equal(t, a, oom.Stream)
	require.Equal(t, int64(16*MiB), oom.Requested)
	require.Equal(t, int64(16*MiB), oom.Segment)
	require.Equal(t, int64(8*MiB), oom.DeviceFree)
	require.Equal(t, int64(16*MiB), oom.Stats.AllocatedBytes.Current)
	require.Equal(t, int64(1), oom.Stats.Allocations.Current)
	require.ErrorIs(t, oom.Err, ErrOutOfMemory, "the device's error is kept")
	msg := err.Error()
	for _, want := range []string{"tried to allocate 16.0 MiB", "8.0 MiB free of 24.0 MiB", "16.0 MiB allocated", "reduce the batch"} {
		require.Contains(t, msg, want)
	}
	require.Equal(t, int64(1), al.Stats().NumOOMs)
	require.NoError(t, al.Free(y))
}

func TestByteLimit(t *testing.T) {
	const MiB = 1 << 20
	d := newCPU(t, 64*MiB)
	al := newAllocator(t, d, Options{Limit: 4 * MiB})
	s := newStream(t, d)
	var as []Allocation
	for range 4 {
		as = append(as, mustAlloc(t, al, s, 1*MiB)) // two 2 MiB segments
	}
	_, err := al.Alloc(s, 1*MiB)
	var oom *OutOfMemoryError
	require.ErrorAs(t, err, &oom)
	require.Nil(t, oom.Err, "the limit refused, not the device")
	require.Contains(t, err.Error(), "byte limit of 4.0 MiB is reached")
	require.Contains(t, err.Error(), "raise the byte limit")
	st := al.Stats()
	require.Equal(t, int64(4*MiB), st.BytesLimit)
	require.LessOrEqual(t, st.TotalAllocatedBytes, int64(4*MiB))
	for _, a := range as {
		require.NoError(t, al.Free(a))
	}
	_, err = al.Alloc(s, 3*MiB) // needs a 20 MiB segment: over the limit even with the cache released
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.Zero(t, al.Stats().TotalAllocatedBytes, "the retry released the cache")
}

func TestSteadyStateMakesNoDeviceCalls(t *testing.T) {
	d := newCPU(t, 256<<20)
	al := newAllocator(t, d, Options{})
	streams := []Stream{newStream(t, d), newStream(t, d), newStream(t, d)}
	sizes := []int64{256, 4000, 64 << 10, 1 << 20, 3 << 20, 12 << 20}
	round := func() {
		var live []Allocation
		for _, s := range streams {
			for _, n := range sizes {
				live = append(live, mustAlloc(t, al, s, n))
			}
		}
		for i := len(live) - 1; i >= 0; i-- {
			require.NoError(t, al.Free(live[i]))
		}
	}
	round() // warm the cache
	calls, st := d.Calls(), al.Stats()
	for range 200 {
		round()
	}
	require.Equal(t, calls, d.Calls(), "steady-state allocation must not call the device")
	st2 := al.Stats()
	require.Equal(t, st.DeviceMallocCalls, st2.DeviceMallocCalls)
	require.Equal(t, st.DeviceFreeCalls, st2.DeviceFreeCalls)
	require.Equal(t, st.NumAllocs+200*int64(len(streams)*len(sizes)), st2.NumAllocs)
}
