package alloc

import (
	"sync/atomic"
)

// Stat is one of PyTorch's statistics: the current value, its peak since the allocator was made
// or peaks were last reset, and the cumulative amounts added and removed.
type Stat struct {
	Current   int64 `json:"current"`
	Peak      int64 `json:"peak"`
	Allocated int64 `json:"allocated"`
	Freed     int64 `json:"freed"`
}

// Stats is a snapshot of an allocator's statistics: onnxruntime's AllocatorStats fields,
// PyTorch's memory_stats for the pools together, and the device calls the allocator made.
// Byte counts are of blocks (requests rounded up to 512 bytes) unless the name says requested.
//
// Each field is exact at some instant during the Stats call; while other goroutines allocate,
// the fields are not a consistent cut of one instant.
type Stats struct {
	// onnxruntime.

	NumAllocs           int64 `json:"num_allocs"`             // Alloc and Scratch calls that returned memory
	NumReserves         int64 `json:"num_reserves"`           // arena reservations (ReserveArena)
	NumArenaExtensions  int64 `json:"num_arena_extensions"`   // segments obtained from the device
	NumArenaShrinkages  int64 `json:"num_arena_shrinkages"`   // segments returned to the device
	BytesInUse          int64 `json:"bytes_in_use"`           // allocated blocks and live arenas
	TotalAllocatedBytes int64 `json:"total_allocated_bytes"`  // device memory held: segments and arenas
	MaxBytesInUse       int64 `json:"max_bytes_in_use"`       // peak of BytesInUse
	MaxAllocSize        int64 `json:"max_alloc_size"`         // largest block or arena handed out
	BytesLimit          int64 `json:"bytes_limit"`            // Options.Limit; 0 means none
	BytesRequestedInUse int64 `json:"bytes_requested_in_use"` // bytes asked for by live allocations and arenas
	ReservedBytes       int64 `json:"reserved_bytes"`         // bytes of live arenas

	// PyTorch.

	Allocations     Stat  `json:"allocations"`       // number of allocated blocks
	Segments        Stat  `json:"segments"`          // number of segments
	Active          Stat  `json:"active"`            // blocks allocated, or freed but held for events or captures
	ActiveBytes     Stat  `json:"active_bytes"`      // bytes of active blocks
	AllocatedBytes  Stat  `json:"allocated_bytes"`   // bytes of allocated blocks
	SegmentBytes    Stat  `json:"segment_bytes"`     // bytes of segments (PyTorch's reserved_bytes)
	CachedBytes     int64 `json:"cached_bytes"`      // bytes of free blocks, reusable without the device
	HeldBytes       int64 `json:"held_bytes"`        // bytes freed but held for events or captures
	NumAllocRetries int64 `json:"num_alloc_retries"` // allocations that released the cache and retried
	NumOOMs         int64 `json:"num_ooms"`          // allocations that failed for lack of memory

	// Device calls the allocator made.

	DeviceMallocCalls int64 `json:"device_malloc_calls"`
	DeviceFreeCalls   int64 `json:"device_free_calls"`
	EventRecordCalls  int64 `json:"event_record_calls"`
	DeviceSyncCalls   int64 `json:"device_sync_calls"` // stream and event synchronizations
}

// counters are the allocator-wide statistics, updated with atomics so that the hot path takes
// no allocator-wide lock.
//
// The number and bytes of allocated blocks, which every Alloc and Free change and whose peaks
// must be exact across streams, share one word (allocs) so that the hot path pays a single
// atomic add: the count in the top allocCountBits bits, the bytes in units of minBlockSize (every
// block size is a multiple) below. The statistics stay exact up to 2^26 live allocations and
// 2^38 units (128 TiB) allocated at once.
type counters struct {
	_      [64]byte      // keep the allocator's read-mostly fields off the hot cache line
	allocs atomic.Uint64 // packed count and units of allocated blocks
	_      [56]byte      // and the read-mostly fields below

	allocCountPeak  atomic.Int64
	allocBytesPeak  atomic.Int64
	activeCountPeak atomic.Int64
	activeBytesPeak atomic.Int64
	inUsePeak       atomic.Int64
	_               [24]byte

	heldCount atomic.Int64
	heldBytes atomic.Int64

	reserved        atomic.Int64 // segments and arenas; checked against the limit
	segCount        atomic.Int64
	segBytes        atomic.Int64
	segCountPeak    atomic.Int64
	segBytesPeak    atomic.Int64
	segAdded        atomic.Int64
	segRemoved      atomic.Int64
	segAddedBytes   atomic.Int64
	segRemovedBytes atomic.Int64
	arenaCount      atomic.Int64
	arenaBytes      atomic.Int64
	arenaRequested  atomic.Int64
	arenaMax        atomic.Int64
	reserves        atomic.Int64
	deviceMallocs   atomic.Int64
	deviceFrees     atomic.Int64
	eventRecords    atomic.Int64
	syncs           atomic.Int64
	retries         atomic.Int64
	ooms            atomic.Int64
}

// raise makes peak at least v.
func raise(peak *atomic.Int64, v int64) {
	for {
		p := peak.Load()
		if v <= p || peak.CompareAndSwap(p, v) {
			return
		}
	}
}

const (
	allocCountBits = 26
	allocUnitBits  = 64 - allocCountBits
	allocOne       = 1 << allocUnitBits // one allocation in the packed word
)

// allocated returns the live allocations' count and bytes.
func (c *counters) allocated() (count, bytes int64) {
	return unpackAllocs(c.allocs.Load())
}

func unpackAllocs(v uint64) (count, bytes int64) {
	return int64(v >> allocUnitBits), int64(v&(allocOne-1)) << minBlockShift
}

// alloc counts a block of size bytes handed out.
func (c *counters) alloc(size int64) {
	n, bytes := unpackAllocs(c.allocs.Add(allocOne + uint64(size)>>minBlockShift))
	raise(&c.allocCountPeak, n)
	raise(&c.allocBytesPeak, bytes)
	raise(&c.activeCountPeak, n+c.heldCount.Load())
	raise(&c.activeBytesPeak, bytes+c.heldBytes.Load())
	raise(&c.inUsePeak, bytes+c.arenaBytes.Load())
}

// free counts a block of size bytes given back.
func (c *counters) free(size int64) {
	c.allocs.Add(-(allocOne + uint64(size)>>minBlockShift))
}

func (c *counters) held(size int64) {
	c.heldCount.Add(1)
	c.heldBytes.Add(size)
}

func (c *counters) unheld(size int64) {
	c.heldCount.Add(-1)
	c.heldBytes.Add(-size)
}

func (c *counters) segmentAdded(n int64) {
	raise(&c.segCountPeak, c.segCount.Add(1))
	raise(&c.segBytesPeak, c.segBytes.Add(n))
	c.segAdded.Add(1)
	c.segAddedBytes.Add(n)
}

func (c *counters) segmentRemoved(n int64) {
	c.segCount.Add(-1)
	c.segBytes.Add(-n)
	c.segRemoved.Add(1)
	c.segRemovedBytes.Add(n)
}

func (c *counters) arenaAdded(n, requested int64) {
	c.reserves.Add(1)
	c.arenaCount.Add(1)
	_, bytes := c.allocated()
	raise(&c.inUsePeak, c.arenaBytes.Add(n)+bytes)
	c.arenaRequested.Add(requested)
	raise(&c.arenaMax, n)
}

func (c *counters) arenaRemoved(n, requested int64) {
	c.arenaCount.Add(-1)
	c.arenaBytes.Add(-n)
	c.arenaRequested.Add(-requested)
}

// heapStats are the cumulative statistics of one heap, guarded by its mutex.
type heapStats struct {
	allocs           int64 // allocations made
	allocBytes       int64 // bytes of blocks allocated
	frees            int64 // allocations freed by callers
	freeBytes        int64
	requested        int64 // bytes requested by live allocations
	maxAlloc         int64 // largest block allocated
	activeFreed      int64 // blocks that became free (after any holds)
	activeFreedBytes int64
}

func (s *heapStats) add(o *heapStats) {
	s.allocs += o.allocs
	s.allocBytes += o.allocBytes
	s.frees += o.frees
	s.freeBytes += o.freeBytes
	s.requested += o.requested
	s.maxAlloc = max(s.maxAlloc, o.maxAlloc)
	s.activeFreed += o.activeFreed
	s.activeFreedBytes += o.activeFreedBytes
}

// Stats returns a snapshot of the allocator's statistics.
func (al *Allocator) Stats() Stats {
	var hs heapStats
	var cached int64
	al.mu.Lock()
	hs = al.retired
	for h := range al.heaps {
		h.mu.Lock()
		hs.add(&h.st)
		for _, x := range []*freeIndex{h.small, h.large} {
			if x != nil {
				cached += x.bytes
			}
		}
		for _, b := range h.quick[:h.nquick] {
			cached += b.size
		}
		h.mu.Unlock()
	}
	al.mu.Unlock()

	c := &al.st
	allocCount, allocBytes := c.allocated()
	heldCount, heldBytes := c.heldCount.Load(), c.heldBytes.Load()
	arenaBytes := c.arenaBytes.Load()
	return Stats{
		NumAllocs:           hs.allocs,
		NumReserves:         c.reserves.Load(),
		NumArenaExtensions:  c.segAdded.Load(),
		NumArenaShrinkages:  c.segRemoved.Load(),
		BytesInUse:          allocBytes + arenaBytes,
		TotalAllocatedBytes: c.reserved.Load(),
		MaxBytesInUse:       c.inUsePeak.Load(),
		MaxAllocSize:        max(hs.maxAlloc, c.arenaMax.Load()),
		BytesLimit:          al.limit,
		BytesRequestedInUse: hs.requested + c.arenaRequested.Load(),
		ReservedBytes:       arenaBytes,

		Allocations:    Stat{allocCount, c.allocCountPeak.Load(), hs.allocs, hs.frees},
		Segments:       Stat{c.segCount.Load(), c.segCountPeak.Load(), c.segAdded.Load(), c.segRemoved.Load()},
		Active:         Stat{allocCount + heldCount, c.activeCountPeak.Load(), hs.allocs, hs.activeFreed},
		ActiveBytes:    Stat{allocBytes + heldBytes, c.activeBytesPeak.Load(), hs.allocBytes, hs.activeFreedBytes},
		AllocatedBytes: Stat{allocBytes, c.allocBytesPeak.Load(), hs.allocBytes, hs.freeBytes},
		SegmentBytes: Stat{c.segBytes.Load(), c.segBytesPeak.Load(), c.segAddedBytes.Load(),
			c.segRemovedBytes.Load()},
		CachedBytes:     cached,
		HeldBytes:       heldBytes,
		NumAllocRetries: c.retries.Load(),
		NumOOMs:         c.ooms.Load(),

		DeviceMallocCalls: c.deviceMallocs.Load(),
		DeviceFreeCalls:   c.deviceFrees.Load(),
		EventRecordCalls:  c.eventRecords.Load(),
		DeviceSyncCalls:   c.syncs.Load(),
	}
}

// ResetPeaks sets every peak to its current value. Peaks raised by allocations that run
// concurrently with ResetPeaks may or may not survive it.
func (al *Allocator) ResetPeaks() {
	c := &al.st
	allocCount, allocBytes := c.allocated()
	c.allocCountPeak.Store(allocCount)
	c.allocBytesPeak.Store(allocBytes)
	c.activeCountPeak.Store(allocCount + c.heldCount.Load())
	c.activeBytesPeak.Store(allocBytes + c.heldBytes.Load())
	c.inUsePeak.Store(allocBytes + c.arenaBytes.Load())
	c.segCountPeak.Store(c.segCount.Load())
	c.segBytesPeak.Store(c.segBytes.Load())
}
