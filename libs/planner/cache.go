package planner

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
)

// DefaultCacheSize is a reasonable number of patterns to keep when there is no better figure.
const DefaultCacheSize = 64

// Cache keeps values, typically Plans, by Signature: a bounded, least-recently-used map with
// single-flight computation, so that concurrent requests for a missing signature compute it once.
// It counts hits, misses and evictions. A Cache is safe for concurrent use.
type Cache[V any] struct {
	mu      sync.Mutex
	size    int
	order   *list.List // of *entry[V], most recently used first
	entries map[Signature]*list.Element
	flights map[Signature]*flight[V]
	stats   CacheStats
}

type entry[V any] struct {
	sig Signature
	val V
}

// flight is one computation in progress; done closes when val and err are set.
type flight[V any] struct {
	done chan struct{}
	val  V
	err  error
}

// CacheStats counts what a Cache did since it was made. It is a plain value.
type CacheStats struct {
	Hits      int64 // lookups served from the cache
	Misses    int64 // lookups that found nothing cached (each GetOrCompute miss is one, computing or waiting)
	Computes  int64 // calls of a compute function
	Shared    int64 // misses served by another caller's computation in flight
	Evictions int64 // values dropped to stay within the size
	Len       int   // values held now
}

// NewCache returns an empty cache that holds at most size values; size must be positive.
func NewCache[V any](size int) *Cache[V] {
	if size <= 0 {
		panic(fmt.Sprintf("planner: cache size %d is not positive", size))
	}
	return &Cache[V]{size: size, order: list.New(), entries: map[Signature]*list.Element{}, flights: map[Signature]*flight[V]{}}
}

// Get returns the value cached for sig, counting a hit or a miss.
func (c *Cache[V]) Get(sig Signature) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[sig]; ok {
		c.stats.Hits++
		c.order.MoveToFront(e)
		return e.Value.(*entry[V]).val, true
	}
	c.stats.Misses++
	var zero V
	return zero, false
}

// Put caches v for sig, replacing any value there and evicting the least recently used values
// if the cache is full. It returns the values it dropped (a replaced one included), for callers
// whose values hold resources to release.
func (c *Cache[V]) Put(sig Signature, v V) (dropped []V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.put(sig, v)
}

func (c *Cache[V]) put(sig Signature, v V) (dropped []V) {
	if e, ok := c.entries[sig]; ok {
		ent := e.Value.(*entry[V])
		dropped = append(dropped, ent.val)
		ent.val = v
		c.order.MoveToFront(e)
		return dropped
	}
	c.entries[sig] = c.order.PushFront(&entry[V]{sig, v})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		ent := last.Value.(*entry[V])
		delete(c.entries, ent.sig)
		dropped = append(dropped, ent.val)
		c.stats.Evictions++
	}
	return dropped
}

// GetOrCompute returns the value cached for sig, or computes, caches and returns it. While one
// caller computes a signature, others asking for it wait for that result instead of computing
// their own. Errors are returned to every waiting caller and not cached. A caller whose ctx ends
// while it waits returns ctx.Err(); if the computing caller's own ctx ended, a waiting caller
// whose ctx is still live computes afresh. The compute function gets the computing caller's ctx.
func (c *Cache[V]) GetOrCompute(ctx context.Context, sig Signature, compute func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	if e, ok := c.entries[sig]; ok {
		c.stats.Hits++
		c.order.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*entry[V]).val, nil
	}
	c.stats.Misses++
	for {
		f, inFlight := c.flights[sig]
		if !inFlight {
			break
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		}
		if f.err == nil || !isContextErr(f.err) || ctx.Err() != nil {
			c.mu.Lock()
			c.stats.Shared++
			c.mu.Unlock()
			return f.val, f.err
		}
		c.mu.Lock() // the computing caller gave up; try again, perhaps as the computing one
		if e, ok := c.entries[sig]; ok {
			c.stats.Shared++
			c.mu.Unlock()
			return e.Value.(*entry[V]).val, nil
		}
	}
	f := &flight[V]{done: make(chan struct{})}
	c.flights[sig] = f
	c.stats.Computes++
	c.mu.Unlock()

	finished := false
	defer func() {
		if !finished { // compute panicked: release the waiters before the panic goes on
			f.err = fmt.Errorf("planner: computing the plan for %v panicked", sig)
		}
		c.mu.Lock()
		delete(c.flights, sig)
		if f.err == nil {
			c.put(sig, f.val)
		}
		c.mu.Unlock()
		close(f.done)
	}()
	f.val, f.err = compute(ctx)
	finished = true
	return f.val, f.err
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Stats returns the counters.
func (c *Cache[V]) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Len = c.order.Len()
	return s
}
