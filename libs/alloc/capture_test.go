package alloc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// poolSegments returns the segments of p's heaps.
func poolSegments(al *Allocator, p *GraphPool) []Region {
	al.mu.Lock()
	defer al.mu.Unlock()
	var rs []Region
	for _, h := range p.heaps {
		h.mu.Lock()
		for seg := range h.segs {
			rs = append(rs, Region{seg.base, seg.size})
		}
		h.mu.Unlock()
	}
	return rs
}

func overlaps(a Allocation, rs []Region) bool {
	for _, r := range rs {
		if a.Ptr() < r.Ptr.Add(r.Size) && r.Ptr < a.Ptr().Add(max(a.Size(), 1)) {
			return true
		}
	}
	return false
}

func TestCaptureAllocatesFromPrivatePool(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	pre := mustAlloc(t, al, s, 4096)
	require.NoError(t, al.Free(pre)) // cached in s's general heap

	require.NoError(t, al.BeginCapture(s, nil))
	x := mustAlloc(t, al, s, 4096)
	require.NotEqual(t, pre.Ptr(), x.Ptr(), "a capture must not take the general cache")
	require.NotNil(t, x.b.seg.heap.pool)
	require.NoError(t, al.Free(x))
	y := mustAlloc(t, al, s, 4096)
	require.Equal(t, x.Ptr(), y.Ptr(), "frees during capture go back to the capture's pool")
	g, err := al.EndCapture(s)
	require.NoError(t, err)
	pool := poolSegments(al, g.Pool())
	require.NotEmpty(t, pool)

	z := mustAlloc(t, al, s, 4096)
	require.Equal(t, pre.Ptr(), z.Ptr(), "after the capture, allocations use the general heap again")
	require.NoError(t, al.Free(y)) // a graph output freed after capture returns to the pool
	for range 10 {
		a := mustAlloc(t, al, s, 4096)
		require.False(t, overlaps(a, pool), "pool memory reached an allocation outside the pool")
		defer al.Free(a)
	}
	require.NoError(t, al.Free(z))

	segs := al.Stats().Segments.Current
	require.NoError(t, g.Release())
	require.Equal(t, segs-int64(len(pool)), al.Stats().Segments.Current, "a released pool returns its segments")
	require.ErrorIs(t, g.Release(), ErrInvalidHandle)
	require.ErrorIs(t, g.Launch(s), ErrInvalidHandle)
}

func TestLaterCaptureGetsNewGenerationUnlessShared(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	capture := func(pool *GraphPool) (*Graph, Allocation) {
		require.NoError(t, al.BeginCapture(s, pool))
		x := mustAlloc(t, al, s, 64<<10)
		require.NoError(t, al.Free(x))
		g, err := al.EndCapture(s)
		require.NoError(t, err)
		return g, x
	}
	g1, x1 := capture(nil)
	pool1 := poolSegments(al, g1.Pool())
	g2, x2 := capture(nil)
	require.False(t, overlaps(x2, pool1), "a new capture received memory of an earlier generation")
	require.Greater(t, g2.Pool().ID(), g1.Pool().ID())

	g3, x3 := capture(g1.Pool()) // explicitly shared
	require.Equal(t, x1.Ptr(), x3.Ptr(), "a shared pool hands out its cached memory")
	require.Same(t, g1.Pool(), g3.Pool())

	reserved := al.Stats().SegmentBytes.Current
	require.NoError(t, g1.Release())
	require.Equal(t, reserved, al.Stats().SegmentBytes.Current, "the pool lives while g3 holds it")
	require.NoError(t, g3.Release())
	require.Less(t, al.Stats().SegmentBytes.Current, reserved)
	require.ErrorIs(t, al.BeginCapture(s, g1.Pool()), ErrInvalidHandle, "a released pool cannot be shared")
	require.NoError(t, g2.Release())
	require.Zero(t, al.Stats().Segments.Current)
}

func TestGraphPoolHandle(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	pool, err := al.NewGraphPool()
	require.NoError(t, err)
	require.NoError(t, al.BeginCapture(s, pool))
	x := mustAlloc(t, al, s, 4096)
	require.NoError(t, al.Free(x))
	g, err := al.EndCapture(s)
	require.NoError(t, err)
	require.NoError(t, g.Release())
	require.Positive(t, al.Stats().Segments.Current, "the caller's handle keeps the pool")
	require.NoError(t, pool.Release())
	require.Zero(t, al.Stats().Segments.Current)
	require.ErrorIs(t, pool.Release(), ErrInvalidHandle)
}

func TestGraphReplayKeepsItsMemory(t *testing.T) {
	const n = 4096
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s, other := newStream(t, d), newStream(t, d)

	require.NoError(t, al.BeginCapture(s, nil))
	tmp := mustAlloc(t, al, s, n)
	out := mustAlloc(t, al, s, n)
	launch(t, d, s, func() { fill(HostBytes(tmp.Ptr(), n), 6) })
	launch(t, d, s, func() {
		t, o := HostBytes(tmp.Ptr(), n), HostBytes(out.Ptr(), n)
		for i := range o {
			o[i] = t[i] + 1
		}
	})
	require.NoError(t, al.Free(tmp)) // the replay still uses tmp's bytes
	g, err := al.EndCapture(s)
	require.NoError(t, err)
	pool := poolSegments(al, g.Pool())

	for range 3 {
		// Between replays other work allocates and scribbles on both streams.
		var live []Allocation
		for _, st := range []Stream{s, other} {
			for range 20 {
				a := mustAlloc(t, al, st, n)
				require.False(t, overlaps(a, pool))
				launch(t, d, st, func() { fill(HostBytes(a.Ptr(), n), 0xEE) })
				live = append(live, a)
			}
		}
		fill(HostBytes(out.Ptr(), n), 0)
		require.NoError(t, g.Launch(s))
		require.NoError(t, d.Synchronize())
		require.True(t, allAre(HostBytes(out.Ptr(), n), 7), "the replay's memory was reused by others")
		for _, a := range live {
			require.NoError(t, al.Free(a))
		}
	}
	require.NoError(t, al.Free(out))
	require.NoError(t, g.Release())
}

func TestFreeDuringCaptureOfOuterBlockIsRetained(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	pre := mustAlloc(t, al, s, 4096)
	require.NoError(t, al.BeginCapture(s, nil))
	launch(t, d, s, func() { _ = HostBytes(pre.Ptr(), 4096)[0] }) // the graph reads pre
	require.NoError(t, al.Free(pre))
	g, err := al.EndCapture(s)
	require.NoError(t, err)
	require.Equal(t, int64(4096), al.Stats().HeldBytes, "the graph holds the block it may read")

	a := mustAlloc(t, al, s, 4096)
	require.NotEqual(t, pre.Ptr(), a.Ptr(), "a block the graph uses was reused while the graph lives")
	require.NoError(t, g.Release())
	require.Zero(t, al.Stats().HeldBytes)
	b := mustAlloc(t, al, s, 4096)
	require.Equal(t, pre.Ptr(), b.Ptr(), "released with the graph")
	require.NoError(t, al.Free(a))
	require.NoError(t, al.Free(b))
	checkHeap(t, generalHeap(t, al, s))
}

func TestCaptureFreeUsedOnOtherStreamIsDeferred(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s, o := newStream(t, d), newStream(t, d)
	g0 := newGate()
	launch(t, d, o, g0.fn()) // o's work is slow

	require.NoError(t, al.BeginCapture(s, nil))
	x := mustAlloc(t, al, s, 4096)
	require.NoError(t, al.RecordStream(x, o))
	require.NoError(t, al.Free(x))
	y := mustAlloc(t, al, s, 4096)
	require.NotEqual(t, x.Ptr(), y.Ptr(), "a block used on another stream was reused inside the capture")
	g, err := al.EndCapture(s)
	require.NoError(t, err)
	require.Equal(t, int64(4096), al.Stats().HeldBytes, "after the capture it waits for o")

	require.NoError(t, al.BeginCapture(s, g.Pool()))
	z := mustAlloc(t, al, s, 4096)
	require.NotEqual(t, x.Ptr(), z.Ptr(), "o has not finished")
	require.NoError(t, al.Free(z))
	g2, err := al.EndCapture(s)
	require.NoError(t, err)

	g0.open()
	require.NoError(t, d.SynchronizeStream(o))
	require.NoError(t, al.BeginCapture(s, g.Pool()))
	w := mustAlloc(t, al, s, 4096)
	require.Equal(t, x.Ptr(), w.Ptr(), "once o finished the block is back in the pool")
	g3, err := al.EndCapture(s)
	require.NoError(t, err)
	for _, a := range []Allocation{y, w} {
		require.NoError(t, al.Free(a))
	}
	for _, gr := range []*Graph{g, g2, g3} {
		require.NoError(t, gr.Release())
	}
	require.Zero(t, al.Stats().Segments.Current)
}

func TestJoinedStreamAllocatesFromThePool(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s, j := newStream(t, d), newStream(t, d)
	require.NoError(t, al.BeginCapture(s, nil))
	e, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(e, s))
	require.NoError(t, d.WaitEvent(j, e))
	x := mustAlloc(t, al, j, 4096)
	require.NotNil(t, x.b.seg.heap.pool, "a stream that joined the capture allocates from its pool")
	require.Equal(t, j, x.b.seg.heap.stream)
	require.NoError(t, al.Free(x))
	g, err := al.EndCapture(s)
	require.NoError(t, err)
	y := mustAlloc(t, al, j, 4096)
	require.Nil(t, y.b.seg.heap.pool)
	require.NoError(t, al.Free(y))
	require.NoError(t, g.Release())
}

func TestNoDeviceFreesDuringCapture(t *testing.T) {
	const MiB = 1 << 20
	d := newCPU(t, 24*MiB)
	al := newAllocator(t, d, Options{})
	s, other := newStream(t, d), newStream(t, d)
	x := mustAlloc(t, al, other, 16*MiB)
	require.NoError(t, al.Free(x)) // cached on another stream

	require.NoError(t, al.BeginCapture(s, nil))
	require.ErrorIs(t, al.EmptyCache(), ErrCaptureUnsupported)
	require.ErrorIs(t, al.DestroyStream(s), ErrCaptureUnsupported)
	_, err := al.Alloc(s, 16*MiB)
	var oom *OutOfMemoryError
	require.ErrorAs(t, err, &oom, "the cache cannot be released during a capture")
	require.True(t, oom.Capturing)
	require.Contains(t, err.Error(), "capture was underway")
	require.Zero(t, al.Stats().NumAllocRetries)

	g, err := al.EndCapture(s)
	require.NoError(t, err)

	// A destroyed stream's last segment becomes whole during a capture: it is freed after it.
	gone := newStream(t, d)
	y := mustAlloc(t, al, gone, 1024)
	require.NoError(t, al.DestroyStream(gone))
	require.NoError(t, al.BeginCapture(s, g.Pool()))
	before := d.Calls().Free
	require.NoError(t, al.Free(y))
	require.Equal(t, before, d.Calls().Free, "a device free during a capture")
	g2, err := al.EndCapture(s)
	require.NoError(t, err)
	require.Equal(t, before+1, d.Calls().Free, "EndCapture frees what waited for it")
	require.NoError(t, g.Release())
	require.NoError(t, g2.Release())
	require.NoError(t, al.EmptyCache())
	require.Zero(t, al.Stats().Segments.Current)
	require.Zero(t, al.Stats().TotalAllocatedBytes)
}

func TestHeldBlockUsedOnAnotherCapturedStreamWaitsForItsCapture(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s1, s2 := newStream(t, d), newStream(t, d)
	require.NoError(t, al.BeginCapture(s1, nil))
	x := mustAlloc(t, al, s1, 4096)
	require.NoError(t, al.RecordStream(x, s2))
	require.NoError(t, al.BeginCapture(s2, nil))
	require.NoError(t, al.Free(x)) // deferred to the end of s1's capture
	g1, err := al.EndCapture(s1)
	require.NoError(t, err)
	// s2 is being captured: an event recorded there now could never be queried.
	require.Equal(t, int64(4096), al.Stats().HeldBytes)
	require.Zero(t, al.Stats().EventRecordCalls)
	g2, err := al.EndCapture(s2)
	require.NoError(t, err)
	require.Equal(t, int64(1), al.Stats().EventRecordCalls, "the event is recorded once no capture is underway")
	require.NoError(t, d.SynchronizeStream(s2))

	require.NoError(t, al.BeginCapture(s1, g1.Pool()))
	y := mustAlloc(t, al, s1, 4096)
	require.Equal(t, x.Ptr(), y.Ptr(), "the block returned to its pool")
	require.NoError(t, al.Free(y))
	g3, err := al.EndCapture(s1)
	require.NoError(t, err)
	require.Zero(t, al.Stats().HeldBytes)
	for _, g := range []*Graph{g1, g2, g3} {
		require.NoError(t, g.Release())
	}
	require.Zero(t, al.Stats().Segments.Current)
}

// failingEnd is a device whose EndCapture fails after ending the capture, as a driver does when
// instantiation fails.
type failingEnd struct{ *CPUDevice }

func (f failingEnd) EndCapture(s Stream) (GraphExec, error) {
	g, err := f.CPUDevice.EndCapture(s)
	if err == nil {
		err = f.CPUDevice.DestroyGraph(g)
	}
	return 0, errors.Join(err, errors.New("instantiate failed"))
}

func TestFailedEndCaptureReleasesEverything(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, failingEnd{d}, Options{})
	s := newStream(t, d)
	pre := mustAlloc(t, al, s, 4096)
	require.NoError(t, al.BeginCapture(s, nil))
	x := mustAlloc(t, al, s, 4096)
	require.NoError(t, al.Free(pre)) // would be retained by the graph
	require.NoError(t, al.Free(x))
	g, err := al.EndCapture(s)
	require.ErrorContains(t, err, "instantiate failed")
	require.Nil(t, g)
	st := al.Stats()
	require.Zero(t, st.HeldBytes, "no graph: nothing is held for it")
	require.Equal(t, int64(1), st.Segments.Current, "the pool without a graph is released")
	y := mustAlloc(t, al, s, 4096)
	require.Equal(t, pre.Ptr(), y.Ptr())
	require.NoError(t, al.Free(y))
	require.NoError(t, al.BeginCapture(s, nil), "the allocator is usable after the failure")
	g, err = al.EndCapture(s)
	require.Error(t, err)
	require.Nil(t, g)
}
