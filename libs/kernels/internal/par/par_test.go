package par

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

type countBody struct {
	hits  []atomic.Int32
	slots int
	bad   atomic.Int32
	busy  []atomic.Int32
}

func (b *countBody) Do(slot, lo, hi int) {
	if slot < 0 || slot >= b.slots {
		b.bad.Add(1)
		return
	}
	if b.busy[slot].Add(1) != 1 {
		b.bad.Add(1) // two participants share a slot
	}
	for i := lo; i < hi; i++ {
		b.hits[i].Add(1)
	}
	b.busy[slot].Add(-1)
}

func TestForCoversEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, grain, slots int }{
		{0, 1, 4}, {1, 1, 4}, {7, 1, 1}, {100, 3, 4}, {1000, 7, 16}, {5, 100, 8},
	} {
		b := &countBody{hits: make([]atomic.Int32, tc.n), slots: max(tc.slots, 1), busy: make([]atomic.Int32, max(tc.slots, 1))}
		For(tc.n, tc.grain, tc.slots, b)
		require.Zero(t, b.bad.Load(), "%+v", tc)
		for i := range b.hits {
			require.EqualValues(t, 1, b.hits[i].Load(), "%+v index %d", tc, i)
		}
	}
}

type nested struct{ inner *countBody }

func (b *nested) Do(slot, lo, hi int) {
	for range hi - lo {
		For(len(b.inner.hits), 1, 4, &countBody{hits: b.inner.hits, slots: 4, busy: make([]atomic.Int32, 4)})
	}
}

func TestNestedLoopsFinish(t *testing.T) {
	inner := &countBody{hits: make([]atomic.Int32, 50), slots: 4}
	For(8, 1, 8, &nested{inner: inner})
	for i := range inner.hits {
		require.EqualValues(t, 8, inner.hits[i].Load())
	}
}

type sumBody struct{ out []int64 }

func (b *sumBody) Do(slot, lo, hi int) {
	for i := lo; i < hi; i++ {
		b.out[i] = int64(i)
	}
}

func TestForDoesNotAllocate(t *testing.T) {
	b := &sumBody{out: make([]int64, 4096)}
	allocs := testing.AllocsPerRun(100, func() { For(len(b.out), 64, 4, b) })
	if !raceEnabled { // the race detector allocates
		require.Zero(t, allocs)
	}
}

// Loops started by several goroutines at once, some nested, each cover their indices once: a
// recycled loop never takes work meant for another.
func TestConcurrentLoops(t *testing.T) {
	var wg sync.WaitGroup
	bad := make([]string, 8)
	for g := range 8 {
		wg.Go(func() {
			for it := range 200 {
				n := 1 + (g*37+it*11)%300
				b := &countBody{hits: make([]atomic.Int32, n), slots: 4, busy: make([]atomic.Int32, 4)}
				For(n, 1+it%7, 4, b)
				if b.bad.Load() != 0 {
					bad[g] = "two participants shared a slot"
					return
				}
				for i := range b.hits {
					if b.hits[i].Load() != 1 {
						bad[g] = "an index ran other than once"
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for g, msg := range bad {
		require.Empty(t, msg, "goroutine %d", g)
	}
}

// A Pool hands back what was put, and once it holds enough items neither Get nor Put
// allocates, even after a collection (which empties a sync.Pool).
func TestPoolKeepsItems(t *testing.T) {
	var p Pool[[64]byte]
	x := p.Get()
	x[0] = 7
	p.Put(x)
	require.Same(t, x, p.Get())
	p.Put(x)
	runtime.GC()
	allocs := testing.AllocsPerRun(100, func() {
		a, b := p.Get(), p.Get()
		p.Put(a)
		p.Put(b)
	})
	if !raceEnabled {
		require.Zero(t, allocs)
	}
}

// spinBody is work of a fixed cost per index (a dependent chain of per multiply-adds), for
// timing the pool itself.
type spinBody struct {
	per  int
	sink [64]float64 // per slot, 8 apart so that slots do not share a cache line
}

func (b *spinBody) Do(slot, lo, hi int) {
	x := float64(slot)
	for range (hi - lo) * b.per {
		x = x*0.999999 + 1e-9
	}
	b.sink[(slot%8)*8] = x
}

// BenchmarkFor times a loop of a fixed amount of work (5120 dependent multiply-adds, 10-30 us)
// in 64 chunks over 1 to 16 slots (at most GOMAXPROCS): slots1 is the work alone, and the
// difference between slotsN and slots1/N is the cost of fanning out to N participants.
func BenchmarkFor(b *testing.B) { benchFor(b, 64*4, 4, 20) }

// BenchmarkForCoarse is BenchmarkFor in 16 chunks of 2000 multiply-adds each: few enough that
// claiming them costs nothing, so slotsN against slots1/N is how fast cores compute when N of
// them do at once (frequency, shared cores), not the cost of fanning out.
func BenchmarkForCoarse(b *testing.B) { benchFor(b, 16, 1, 2000) }

// benchFor times For(n, grain, slots) of a spinBody doing per multiply-adds an item, over 1 to 16
// slots (at most GOMAXPROCS), one sub-benchmark a slot count.
func benchFor(b *testing.B, n, grain, per int) {
	for _, slots := range []int{1, 2, 4, 8, 16} {
		if slots > runtime.GOMAXPROCS(0) {
			break
		}
		b.Run(fmt.Sprintf("slots%d", slots), func(b *testing.B) {
			body := &spinBody{per: per}
			for range b.N {
				For(n, grain, slots, body)
			}
		})
	}
}

// A helper takes its own slot, (id-1) mod extra + 1, when it is free, else the lowest free one.
func TestClaimSlot(t *testing.T) {
	l := &loop{extra: 3}
	require.Equal(t, 2, l.claimSlot(2))
	require.Equal(t, 1, l.claimSlot(5), "5's own slot, 2, is taken")
	require.Equal(t, 3, l.claimSlot(6))
	l = &loop{extra: 15}
	for id := 15; id >= 1; id-- {
		require.Equal(t, id, l.claimSlot(id), "with a slot a helper, each keeps its own")
	}
	l = &loop{extra: 70}
	require.Equal(t, 1, l.claimSlot(9), "64 slots or more go in joining order")
	require.Equal(t, 2, l.claimSlot(3))
}
