package planner_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

func TestSignature(t *testing.T) {
	a := planner.NewSignature(map[string][]int64{"x": {1, 3}, "mask": {1, 3}}, map[string]int64{"past": 0})
	b := planner.NewSignature(map[string][]int64{"mask": {1, 3}, "x": {1, 3}}, map[string]int64{"past": 0})
	require.Equal(t, a, b, "order of listing does not matter")
	require.Equal(t, "mask[1,3] x[1,3] past=0", a.String())

	distinct := []planner.Signature{
		a,
		planner.NewSignature(map[string][]int64{"x": {1, 3}, "mask": {1, 3}}, map[string]int64{"past": 1}),
		planner.NewSignature(map[string][]int64{"x": {1, 3}, "mask": {1, 3}}, nil),
		planner.NewSignature(map[string][]int64{"x": {13}, "mask": {1, 3}}, nil),
		planner.NewSignature(map[string][]int64{"x": {1, 3}, "mask": {1, 3, 1}}, nil),
		planner.NewSignature(map[string][]int64{"x1": {3}, "mask": {1, 3}}, nil),
		planner.NewSignature(map[string][]int64{"x": {}}, nil),
		planner.NewSignature(map[string][]int64{"x": nil, "y": nil}, nil),
		planner.NewSignature(nil, map[string]int64{"x": 0}), // a route named like an input
		planner.NewSignature(map[string][]int64{"x": {-1}}, nil),
		{},
	}
	seen := map[planner.Signature]int{}
	for i, s := range distinct {
		j, dup := seen[s]
		require.False(t, dup, "signatures %d (%v) and %d (%v) collide", i, s, j, distinct[j])
		seen[s] = i
	}
	require.Equal(t, "", planner.Signature{}.String())
	require.Equal(t, "x[-1]", distinct[9].String())
	require.Equal(t, "x=0", distinct[8].String())
}

func sig(i int) planner.Signature {
	return planner.NewSignature(map[string][]int64{"x": {int64(i)}}, nil)
}

func TestCacheLRU(t *testing.T) {
	c := planner.NewCache[int](2)
	require.Empty(t, c.Put(sig(1), 1))
	require.Empty(t, c.Put(sig(2), 2))
	v, ok := c.Get(sig(1)) // 1 is now the most recent
	require.True(t, ok)
	require.Equal(t, 1, v)
	require.Equal(t, []int{2}, c.Put(sig(3), 3), "evicts 2")
	_, ok = c.Get(sig(2))
	require.False(t, ok)
	_, ok = c.Get(sig(1))
	require.True(t, ok)
	require.Equal(t, []int{1}, c.Put(sig(1), 10), "replaces in place")
	v, _ = c.Get(sig(1))
	require.Equal(t, 10, v)
	require.Equal(t, planner.CacheStats{Hits: 3, Misses: 1, Evictions: 1, Len: 2}, c.Stats())
	require.Panics(t, func() { planner.NewCache[int](0) })
}

func TestCacheGetOrCompute(t *testing.T) {
	ctx := context.Background()
	c := planner.NewCache[planner.Plan](planner.DefaultCacheSize)
	calls := 0
	compute := func(context.Context) (planner.Plan, error) {
		calls++
		return planner.Plan{Peak: 42}, nil
	}
	for range 3 {
		p, err := c.GetOrCompute(ctx, sig(1), compute)
		require.NoError(t, err)
		require.Equal(t, int64(42), p.Peak)
	}
	require.Equal(t, 1, calls)
	require.Equal(t, planner.CacheStats{Hits: 2, Misses: 1, Computes: 1, Len: 1}, c.Stats())

	// Errors reach the caller and are not cached.
	boom := errors.New("boom")
	_, err := c.GetOrCompute(ctx, sig(2), func(context.Context) (planner.Plan, error) { return planner.Plan{}, boom })
	require.ErrorIs(t, err, boom)
	_, ok := c.Get(sig(2))
	require.False(t, ok)
}

// TestCacheSingleFlight: many goroutines missing the same signature compute it once.
func TestCacheSingleFlight(t *testing.T) {
	c := planner.NewCache[int](4)
	const callers = 16
	var computes atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]int, callers)
	for i := range callers {
		wg.Go(func() {
			v, err := c.GetOrCompute(context.Background(), sig(7), func(context.Context) (int, error) {
				computes.Add(1)
				<-release
				return 7, nil
			})
			require.NoError(t, err)
			results[i] = v
		})
	}
	for c.Stats().Misses < callers { // every caller has missed and is computing or waiting
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	require.Equal(t, int32(1), computes.Load())
	for _, v := range results {
		require.Equal(t, 7, v)
	}
	s := c.Stats()
	require.Equal(t, int64(1), s.Computes)
	require.Equal(t, int64(callers-1), s.Shared)
}

// TestCacheWaiterContext: a waiter whose context ends stops waiting; a waiter whose computing
// caller gave up computes for itself.
func TestCacheWaiterContext(t *testing.T) {
	c := planner.NewCache[int](4)
	leaderCtx, cancelLeader := context.WithCancel(context.Background())
	started := make(chan struct{})
	leaderDone := make(chan error)
	go func() {
		_, err := c.GetOrCompute(leaderCtx, sig(1), func(ctx context.Context) (int, error) {
			close(started)
			<-ctx.Done()
			return 0, fmt.Errorf("gave up: %w", ctx.Err())
		})
		leaderDone <- err
	}()
	<-started

	// A waiter with a dead context returns at once.
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.GetOrCompute(dead, sig(1), func(context.Context) (int, error) { return 1, nil })
	require.ErrorIs(t, err, context.Canceled)

	// A live waiter outlasts the leader's cancellation and computes itself.
	waiterDone := make(chan int)
	go func() {
		v, err := c.GetOrCompute(context.Background(), sig(1), func(context.Context) (int, error) { return 5, nil })
		require.NoError(t, err)
		waiterDone <- v
	}()
	for c.Stats().Misses < 3 {
		runtime.Gosched()
	}
	cancelLeader()
	require.ErrorIs(t, <-leaderDone, context.Canceled)
	require.Equal(t, 5, <-waiterDone)
	require.Equal(t, int64(2), c.Stats().Computes)
}

func TestCachePanicReleasesWaiters(t *testing.T) {
	c := planner.NewCache[int](4)
	require.Panics(t, func() {
		_, _ = c.GetOrCompute(context.Background(), sig(1), func(context.Context) (int, error) { panic("kaboom") })
	})
	v, err := c.GetOrCompute(context.Background(), sig(1), func(context.Context) (int, error) { return 3, nil })
	require.NoError(t, err)
	require.Equal(t, 3, v)
}
