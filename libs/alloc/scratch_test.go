package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// concurrentScratch runs two gated kernel invocations on two streams, each with its own scratch,
// released right after launch (as kernels do), while a third invocation on stream b starts
// before the first ones finish. It reports whether any invocation saw another's bytes.
func concurrentScratch(t *testing.T, hooks testHooks) (shared, corrupted bool) {
	const n = 32 << 10
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	al.hooks = hooks
	a, b := newStream(t, d), newStream(t, d)

	start, resume := newGate(), newGate()
	wrote := make(chan struct{})
	okA := false
	sa, err := al.Scratch(a, n)
	require.NoError(t, err)
	launch(t, d, a, start.fn())
	launch(t, d, a, func() { fill(sa.Region().Bytes(), 0xA); close(wrote) })
	launch(t, d, a, resume.fn())
	launch(t, d, a, func() { okA = allAre(sa.Region().Bytes(), 0xA) })
	require.NoError(t, sa.Release())

	sb, err := al.Scratch(b, n)
	require.NoError(t, err)
	launch(t, d, b, func() { <-wrote; fill(sb.Region().Bytes(), 0xB) })
	eb, err := d.NewEvent()
	require.NoError(t, err)
	require.NoError(t, d.RecordEvent(eb, b))
	require.NoError(t, sb.Release())

	start.open()
	require.NoError(t, d.SynchronizeEvent(eb))
	resume.open()
	require.NoError(t, d.Synchronize())
	return sa.Ptr() == sb.Ptr(), !okA
}

func TestScratchOnConcurrentStreamsIsDisjoint(t *testing.T) {
	// Two mechanisms keep concurrent invocations apart: the stream rule and the event that holds
	// released scratch until its invocation is done. Either alone suffices; with both broken the
	// CPU device shows the corruption.
	tests := []struct {
		name              string
		hooks             testHooks
		shared, corrupted bool
	}{
		{"intact", testHooks{}, false, false},
		{"no stream check", testHooks{sharedHeap: true}, false, false},
		{"no scratch event", testHooks{scratchNoEvent: true}, false, false},
		{"neither", testHooks{sharedHeap: true, scratchNoEvent: true}, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shared, corrupted := concurrentScratch(t, tc.hooks)
			require.Equal(t, tc.shared, shared, "did two concurrent invocations receive the same bytes?")
			require.Equal(t, tc.corrupted, corrupted, "was the first invocation's data corrupted?")
		})
	}
}

func TestScratchReturnsWhenInvocationIsDone(t *testing.T) {
	const n = 8192
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	g := newGate()
	sc, err := al.Scratch(s, n)
	require.NoError(t, err)
	launch(t, d, s, g.fn())
	launch(t, d, s, func() { fill(sc.Region().Bytes(), 1) })
	require.NoError(t, sc.Release())
	require.ErrorIs(t, sc.Release(), ErrInvalidFree)

	st := al.Stats()
	require.Equal(t, int64(n), st.HeldBytes, "released scratch is held until the invocation's work is done")
	require.Equal(t, int64(1), st.Active.Current)
	require.Zero(t, st.Allocations.Current)
	next, err := al.Scratch(s, n)
	require.NoError(t, err)
	require.NotEqual(t, sc.Ptr(), next.Ptr(), "the next invocation got bytes whose invocation is still running")
	require.NoError(t, next.Release())

	g.open()
	require.NoError(t, d.SynchronizeStream(s))
	again, err := al.Scratch(s, n)
	require.NoError(t, err)
	require.Contains(t, []Ptr{sc.Ptr(), next.Ptr()}, again.Ptr(), "finished scratch is reused")
	require.NoError(t, again.Release())
	require.NoError(t, d.SynchronizeStream(s))
	require.NoError(t, al.EmptyCache())
	require.Zero(t, al.Stats().ActiveBytes.Current)
}

func TestScratchUsedOnAnotherStream(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s, o := newStream(t, d), newStream(t, d)
	g := newGate()
	launch(t, d, o, g.fn())
	sc, err := al.Scratch(s, 4096)
	require.NoError(t, err)
	require.NoError(t, sc.UseOn(o))
	require.NoError(t, sc.Release())
	require.NoError(t, d.SynchronizeStream(s))
	x := mustAlloc(t, al, s, 4096)
	require.NotEqual(t, sc.Ptr(), x.Ptr(), "stream o still uses the scratch")
	g.open()
	require.NoError(t, d.SynchronizeStream(o))
	y := mustAlloc(t, al, s, 4096)
	require.Equal(t, sc.Ptr(), y.Ptr())
	require.NoError(t, al.Free(x))
	require.NoError(t, al.Free(y))
}

func TestScratchForRecipe(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	r := Recipe{Kernel: "attention/flash", Parts: []Part{
		{Name: "scores", Size: 1000},
		{Name: "partials", Size: 3000, Align: 4096},
		{Name: "empty"},
	}}
	sc, w, err := al.ScratchFor(s, r)
	require.NoError(t, err)
	need, err := r.Size()
	require.NoError(t, err)
	require.Equal(t, need, sc.Size())
	require.Zero(t, uintptr(w.Ptr("partials"))%4096)
	fill(w.Bytes("scores"), 1)
	fill(w.Bytes("partials"), 2)
	require.True(t, allAre(w.Bytes("scores"), 1))
	require.Empty(t, w.Bytes("empty"))
	require.NoError(t, sc.Release())

	_, _, err = al.ScratchFor(s, Recipe{Kernel: "bad", Parts: []Part{{Name: "x", Size: -1}}})
	require.ErrorIs(t, err, ErrInvalidRecipe)
	var zero Scratch
	require.NoError(t, zero.Release())
	require.NoError(t, zero.UseOn(s))
}

func TestScratchDuringCaptureUsesThePool(t *testing.T) {
	d := newCPU(t, 64<<20)
	al := newAllocator(t, d, Options{})
	s := newStream(t, d)
	require.NoError(t, al.BeginCapture(s, nil))
	sc, err := al.Scratch(s, 4096)
	require.NoError(t, err)
	require.NotNil(t, sc.a.b.seg.heap.pool)
	require.NoError(t, sc.Release()) // no event in a capture: the stream order is the graph's
	sc2, err := al.Scratch(s, 4096)
	require.NoError(t, err)
	require.Equal(t, sc.Ptr(), sc2.Ptr())
	require.NoError(t, sc2.Release())
	g, err := al.EndCapture(s)
	require.NoError(t, err)
	require.Zero(t, al.Stats().HeldBytes)
	require.NoError(t, g.Release())
}
