package alloc

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCPUStreamRunsInOrderAndAsynchronously(t *testing.T) {
	d := newCPU(t, 1<<20)
	s := newStream(t, d)
	g := newGate()
	var order []int // touched only by the stream's goroutine until Synchronize
	launch(t, d, s, g.fn())
	for i := range 100 {
		launch(t, d, s, func() { order = append(order, i) })
	}
	e, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(e, s))
	// Launch returned while the first func still blocks: the stream is asynchronous.
	done, err := d.QueryEvent(e)
	require.NoError(t, err)
	require.False(t, done, "event completed before the gated work ran")
	g.open()
	require.NoError(t, d.SynchronizeEvent(e))
	done, err = d.QueryEvent(e)
	require.NoError(t, err)
	require.True(t, done)
	require.NoError(t, d.SynchronizeStream(s))
	require.Len(t, order, 100)
	for i, v := range order {
		require.Equal(t, i, v, "work ran out of order")
	}
}

func TestCPUEventOrdersStreams(t *testing.T) {
	d := newCPU(t, 1<<20)
	a, b := newStream(t, d), newStream(t, d)
	p, err := d.Malloc(4096)
	require.NoError(t, err)
	buf := HostBytes(p, 4096)
	g := newGate()
	launch(t, d, a, g.fn())
	launch(t, d, a, func() { fill(buf, 7) })
	e, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(e, a))
	require.NoError(t, d.WaitEvent(b, e))
	var seen bool
	launch(t, d, b, func() { seen = allAre(buf, 7) })
	eb, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(eb, b))
	done, err := d.QueryEvent(eb)
	require.NoError(t, err)
	require.False(t, done, "stream b ran past its wait while a was gated")
	g.open()
	require.NoError(t, d.SynchronizeStream(b))
	require.True(t, seen, "b read before a's write completed")
}

func TestCPUEventNeverRecordedIsComplete(t *testing.T) {
	d := newCPU(t, 1<<20)
	e, err := d.NewEvent()
	require.NoError(t, err)
	done, err := d.QueryEvent(e)
	require.NoError(t, err)
	require.True(t, done)
	require.NoError(t, d.SynchronizeEvent(e))
	s := newStream(t, d)
	require.NoError(t, d.WaitEvent(s, e))
	require.NoError(t, d.SynchronizeStream(s))
	require.NoError(t, d.DestroyEvent(e))
	_, err = d.QueryEvent(e)
	require.ErrorIs(t, err, ErrInvalidHandle)
}

func TestCPUMemory(t *testing.T) {
	d := newCPU(t, 64<<10)
	free, total, err := d.MemInfo()
	require.NoError(t, err)
	require.Equal(t, int64(64<<10), total)
	require.Equal(t, total, free)

	p, err := d.Malloc(1000)
	require.NoError(t, err)
	require.Zero(t, uintptr(p)%256, "device memory must be 256-byte aligned")
	b, err := d.Bytes(p, 1000)
	require.NoError(t, err)
	require.True(t, allAre(b, 0), "fresh memory is zeroed")
	fill(b, 3)
	require.True(t, allAre(HostBytes(p, 1000), 3), "HostBytes and Bytes view the same memory")
	_, err = d.Bytes(p.Add(-1), 1)
	require.ErrorIs(t, err, ErrInvalidHandle)
	_, err = d.Bytes(p, 1<<20)
	require.ErrorIs(t, err, ErrInvalidHandle)

	free, _, err = d.MemInfo()
	require.NoError(t, err)
	require.Less(t, free, total)

	_, err = d.Malloc(1 << 20)
	require.ErrorIs(t, err, ErrOutOfMemory, "a request beyond the configured memory fails")
	_, err = d.Malloc(0)
	require.Error(t, err)

	require.NoError(t, d.Free(p))
	require.ErrorIs(t, d.Free(p), ErrInvalidHandle, "double free")
	free, _, err = d.MemInfo()
	require.NoError(t, err)
	require.Equal(t, total, free)
}

func TestCPUFreeWaitsForQueuedWork(t *testing.T) {
	d := newCPU(t, 1<<20)
	s := newStream(t, d)
	p, err := d.Malloc(4096)
	require.NoError(t, err)
	g := newGate()
	wrote := false
	launch(t, d, s, g.fn())
	launch(t, d, s, func() { fill(HostBytes(p, 4096), 1); wrote = true })
	freed := make(chan error)
	go func() { freed <- d.Free(p) }()
	g.open() // Free cannot finish before this: it waits for the write, which waits for the gate.
	require.NoError(t, <-freed)
	require.True(t, wrote, "Free returned before queued work that touches the memory ran")
}

func TestCPUCapture(t *testing.T) {
	d := newCPU(t, 1<<20)
	s, j := newStream(t, d), newStream(t, d)
	runs := 0
	require.NoError(t, d.BeginCapture(s))
	id, capturing, err := d.CaptureInfo(s)
	require.NoError(t, err)
	require.True(t, capturing)
	require.ErrorIs(t, d.BeginCapture(s), ErrCaptureUnsupported)

	launch(t, d, s, func() { runs++ })
	// j joins the capture by waiting on an event recorded in it.
	e, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(e, s))
	_, err = d.QueryEvent(e)
	require.ErrorIs(t, err, ErrCaptureUnsupported)
	require.ErrorIs(t, d.SynchronizeEvent(e), ErrCaptureUnsupported)
	require.NoError(t, d.WaitEvent(j, e))
	jid, jcap, err := d.CaptureInfo(j)
	require.NoError(t, err)
	require.True(t, jcap)
	require.Equal(t, id, jid)
	launch(t, d, j, func() { runs += 10 })

	require.ErrorIs(t, d.Synchronize(), ErrCaptureUnsupported)
	require.ErrorIs(t, d.SynchronizeStream(s), ErrCaptureUnsupported)
	p, err := d.Malloc(4096) // allowed during capture, as cudaMalloc is
	require.NoError(t, err)
	require.ErrorIs(t, d.Free(p), ErrCaptureUnsupported)
	_, err = d.EndCapture(j)
	require.ErrorIs(t, err, ErrNotCapturing, "only the origin stream ends a capture")

	g, err := d.EndCapture(s)
	require.NoError(t, err)
	_, jcap, err = d.CaptureInfo(j)
	require.NoError(t, err)
	require.False(t, jcap, "joined streams leave the capture with it")
	require.NoError(t, d.Synchronize())
	require.Zero(t, runs, "captured work must not run during capture")

	require.NoError(t, d.LaunchGraph(g, s))
	require.NoError(t, d.LaunchGraph(g, s))
	require.NoError(t, d.SynchronizeStream(s))
	require.Equal(t, 22, runs)
	launches := testing.AllocsPerRun(10, func() { require.NoError(t, d.LaunchGraph(g, s)) })
	require.NoError(t, d.SynchronizeStream(s))
	require.Equal(t, 22+11*11, runs)
	require.Zero(t, launches, "a replay allocates nothing")
	require.NoError(t, d.DestroyGraph(g))
	require.ErrorIs(t, d.LaunchGraph(g, s), ErrInvalidHandle)
	require.NoError(t, d.Free(p))

	_, err = d.EndCapture(s)
	require.ErrorIs(t, err, ErrNotCapturing)
	require.NoError(t, d.BeginCapture(s))
	id2, _, err := d.CaptureInfo(s)
	require.NoError(t, err)
	require.NotEqual(t, id, id2, "capture IDs are never reused")
	_, err = d.EndCapture(s)
	require.NoError(t, err)
}

func TestCPUFaultIsSticky(t *testing.T) {
	d := newCPU(t, 1<<20)
	s := newStream(t, d)
	launch(t, d, s, func() { panic("kernel bug") })
	ran := false
	launch(t, d, s, func() { ran = true })
	err := d.SynchronizeStream(s)
	require.ErrorContains(t, err, "kernel bug")
	require.True(t, ran, "the stream keeps running after a panic")
	require.Error(t, d.Synchronize())
	require.Error(t, d.Fault())
}

func TestCPUDestroyedStreamDrains(t *testing.T) {
	d := newCPU(t, 1<<20)
	s := newStream(t, d)
	g := newGate()
	ran := false
	launch(t, d, s, g.fn())
	launch(t, d, s, func() { ran = true })
	require.NoError(t, d.DestroyStream(s))
	require.ErrorIs(t, d.Launch(s, func() {}), ErrInvalidHandle)
	g.open()
	require.NoError(t, d.Synchronize(), "Synchronize waits for destroyed streams' queued work")
	require.True(t, ran)
}

func TestCPUInvalidHandles(t *testing.T) {
	d := newCPU(t, 1<<20)
	for _, err := range []error{
		d.Launch(99, func() {}),
		d.SynchronizeStream(99),
		d.DestroyStream(99),
		d.RecordEvent(98, 99),
		d.BeginCapture(99),
		d.DestroyGraph(97),
		d.DestroyEvent(96),
	} {
		require.True(t, errors.Is(err, ErrInvalidHandle), "got %v", err)
	}
}

func TestCPUCallsCount(t *testing.T) {
	d := newCPU(t, 1<<20)
	before := d.Calls()
	s := newStream(t, d)
	launch(t, d, s, func() {})
	require.NoError(t, d.SynchronizeStream(s))
	after := d.Calls()
	require.Equal(t, before.NewStream+1, after.NewStream)
	require.Equal(t, before.Launch+1, after.Launch)
	require.Equal(t, before.Device()+2, after.Device(), "Launch is not a Device call")
}
