package alloc

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// writePattern fills b with tag's bytes, repeated. (By doubling copies rather than a byte loop:
// under the race detector every byte store would be a call.)
func writePattern(b []byte, tag uint64) {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], tag)
	n := copy(b, w[:])
	for n < len(b) {
		n += copy(b[n:], b[:n])
	}
}

// hasPattern reports whether b holds tag's bytes, repeated.
func hasPattern(b []byte, tag uint64) bool {
	var w [64]byte
	for i := 0; i < len(w); i += 8 {
		binary.LittleEndian.PutUint64(w[i:], tag)
	}
	for len(b) >= len(w) {
		if !bytes.Equal(b[:len(w)], w[:]) {
			return false
		}
		b = b[len(w):]
	}
	return bytes.Equal(b, w[:len(b)])
}

// TestStress runs goroutines that each drive their own stream, allocate, write a unique pattern
// on the device, verify it there later, share some buffers with helper streams (RecordStream)
// and use per-invocation scratch, all freeing eagerly as stream order allows. Any reuse that
// breaks stream order shows up as a pattern mismatch seen by a verifying kernel.
func TestStress(t *testing.T) {
	const (
		workers = 8
		helpers = 2
		iters   = 250
	)
	seed := uint64(0x5eed)
	d := newCPU(t, 512<<20)
	al := newAllocator(t, d, Options{Limit: 384 << 20})
	helperStreams := make([]Stream, helpers)
	for i := range helperStreams {
		helperStreams[i] = newStream(t, d)
	}
	var mismatches, checks atomic.Int64
	verify := func(r Region, tag uint64) func() {
		return func() {
			checks.Add(1)
			if !hasPattern(r.Bytes(), tag) {
				mismatches.Add(1)
			}
		}
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			s, err := d.NewStream()
			if err != nil {
				errs <- err
				return
			}
			ev, err := d.NewEvent()
			if err != nil {
				errs <- err
				return
			}
			fail := func(err error) { errs <- err }
			for i := range iters {
				var n int64
				switch rng.IntN(10) {
				case 0:
					n = 1 + rng.Int64N(1<<20)
				case 1, 2:
					n = 1 + rng.Int64N(256<<10)
				default:
					n = 1 + rng.Int64N(8<<10)
				}
				tag := uint64(w)<<32 | uint64(i)
				a, err := al.Alloc(s, n)
				if err != nil {
					fail(err)
					return
				}
				r := a.Region()
				if err := d.Launch(s, func() { writePattern(r.Bytes(), tag) }); err != nil {
					fail(err)
					return
				}
				if rng.IntN(3) == 0 {
					// A helper stream reads the buffer after the write.
					h := helperStreams[rng.IntN(helpers)]
					if err := d.RecordEvent(ev, s); err != nil {
						fail(err)
						return
					}
					if err := d.WaitEvent(h, ev); err != nil {
						fail(err)
						return
					}
					if err := d.Launch(h, verify(r, tag)); err != nil {
						fail(err)
						return
					}
					if err := al.RecordStream(a, h); err != nil {
						fail(err)
						return
					}
				}
				// A kernel with its own scratch reads the buffer, checks its scratch survives.
				sc, err := al.Scratch(s, 1+rng.Int64N(16<<10))
				if err != nil {
					fail(err)
					return
				}
				sr, stag := sc.Region(), tag^0xffff_0000_0000
				if err := d.Launch(s, func() {
					writePattern(sr.Bytes(), stag)
					verify(r, tag)()
					verify(sr, stag)()
				}); err != nil {
					fail(err)
					return
				}
				if err := sc.Release(); err != nil {
					fail(err)
					return
				}
				if err := d.Launch(s, verify(r, tag)); err != nil {
					fail(err)
					return
				}
				if err := al.Free(a); err != nil {
					fail(err)
					return
				}
				switch rng.IntN(100) {
				case 0:
					if err := al.EmptyCache(); err != nil {
						fail(err)
						return
					}
				case 1:
					_ = al.Stats()
				}
			}
			if err := d.SynchronizeStream(s); err != nil {
				fail(err)
				return
			}
			if err := al.DestroyStream(s); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "seed %#x", seed)
	}
	require.NoError(t, d.Synchronize())
	require.Zero(t, mismatches.Load(), "seed %#x: %d of %d checks saw another buffer's data", seed, mismatches.Load(), checks.Load())
	require.Greater(t, checks.Load(), int64(workers*iters*3))

	al.mu.Lock()
	var hs []*heap
	for h := range al.heaps {
		hs = append(hs, h)
	}
	al.mu.Unlock()
	for _, h := range hs {
		checkHeap(t, h)
	}
	require.NoError(t, al.EmptyCache())
	st := al.Stats()
	require.Zero(t, st.Allocations.Current, "seed %#x", seed)
	require.Zero(t, st.HeldBytes, "seed %#x", seed)
	require.Zero(t, st.Segments.Current, "seed %#x: destroyed streams and an emptied cache leave no segments", seed)
	require.Equal(t, int64(workers*iters*2), st.NumAllocs)
}
