package alloc

import (
	"errors"
	"fmt"
	"sync"
)

// GraphPool is graph-private memory: the heaps that serve allocations made while a stream is
// captured. Capture bakes addresses into the graph, so the memory a capture used must stay
// reserved for the graph's replays: a pool's blocks are never handed to allocations outside the
// pool, and the pool's segments go back to the device only when the last graph (or capture, or
// caller) holding the pool releases it. Each pool is a new generation; a capture receives memory
// of an earlier capture's pool only when the caller passes that pool to BeginCapture explicitly,
// which is how graphs that replay one after another share memory. Graphs that share a pool must
// not replay concurrently (as in PyTorch); the allocator cannot check this.
//
// A GraphPool's methods are safe for concurrent use.
type GraphPool struct {
	al *Allocator
	id uint64

	// Guarded by al.mu.
	refs     int
	heaps    map[Stream]*heap
	released bool
}

// ID returns the pool's generation: pools made later have larger IDs.
func (p *GraphPool) ID() uint64 { return p.id }

// NewGraphPool returns a pool for captures to share; the caller holds one reference to it and
// drops it with Release. Pools are also made implicitly by BeginCapture.
func (al *Allocator) NewGraphPool() (*GraphPool, error) {
	al.mu.Lock()
	defer al.mu.Unlock()
	if al.closed.Load() {
		return nil, errAllocatorClosed
	}
	return al.newPoolLocked(), nil
}

func (al *Allocator) newPoolLocked() *GraphPool {
	al.lastPool++
	return &GraphPool{al: al, id: al.lastPool, refs: 1, heaps: make(map[Stream]*heap)}
}

// Release drops the reference NewGraphPool gave the caller.
func (p *GraphPool) Release() error { return p.al.dropPool(p) }

// heapLocked returns the pool's heap for stream s. al.mu must be held.
func (p *GraphPool) heapLocked(s Stream) *heap {
	h := p.heaps[s]
	if h == nil {
		h = &heap{al: p.al, stream: s, pool: p}
		p.heaps[s] = h
		p.al.heaps[h] = true
	}
	return h
}

// capture is one capture begun through the allocator.
type capture struct {
	id       CaptureID
	stream   Stream
	pool     *GraphPool
	deferred []*block // pool blocks freed during the capture but used on other streams
	retained []*block // blocks of other heaps freed during the capture
}

// Graph is a captured graph together with the memory its replays use. A Graph's methods are
// safe for concurrent use.
type Graph struct {
	al   *Allocator
	exec GraphExec
	pool *GraphPool

	mu       sync.Mutex
	retained []*block // freed during capture, released with the graph
	released bool
}

// BeginCapture starts capturing stream s on the device. Until EndCapture, allocations on s (and
// on streams that join the capture) come from pool, or from a new pool when pool is nil. Device
// frees are illegal during a capture, so while any capture is underway the allocator neither
// empties its cache nor retries an allocation after releasing it.
func (al *Allocator) BeginCapture(s Stream, pool *GraphPool) error {
	al.mu.Lock()
	defer al.mu.Unlock()
	if al.closed.Load() {
		return errAllocatorClosed
	}
	if _, ok := al.byStream[s]; ok {
		return fmt.Errorf("alloc: begin capture on stream %d: already capturing: %w", s, ErrCaptureUnsupported)
	}
	if pool != nil {
		if pool.al != al {
			return errors.New("alloc: begin capture: the graph pool belongs to another allocator")
		}
		if pool.released {
			return fmt.Errorf("alloc: begin capture: graph pool %d was released: %w", pool.id, ErrInvalidHandle)
		}
		pool.refs++
	} else {
		pool = al.newPoolLocked()
	}
	// Closing the gate waits for device frees in flight: none may run once captures > 0.
	al.freeGate.Lock()
	al.captures.Add(1)
	al.freeGate.Unlock()
	fail := func(err error) error {
		pool.refs--
		if pool.refs == 0 {
			pool.released = true
		}
		// Blocks waiting for captures to end need heap locks: release them without al.mu.
		al.mu.Unlock()
		defer al.mu.Lock()
		return errors.Join(fmt.Errorf("alloc: begin capture on stream %d: %w", s, err), al.captureEnded())
	}
	if err := al.dev.BeginCapture(s); err != nil {
		return fail(err)
	}
	id, capturing, err := al.dev.CaptureInfo(s)
	if err == nil && !capturing {
		err = ErrNotCapturing
	}
	if err != nil {
		_, _ = al.dev.EndCapture(s) // a capture the device cannot describe is discarded
		return fail(err)
	}
	c := &capture{id: id, stream: s, pool: pool}
	al.byCapture[id] = c
	al.byStream[s] = c
	return nil
}

// EndCapture ends the capture begun on s and returns its graph. Blocks of the capture's pool
// that were freed during the capture but used on other streams become reusable once those
// streams' work (as of now) has run.
func (al *Allocator) EndCapture(s Stream) (*Graph, error) {
	al.mu.Lock()
	c := al.byStream[s]
	if c == nil {
		al.mu.Unlock()
		return nil, fmt.Errorf("alloc: end capture on stream %d: %w", s, ErrNotCapturing)
	}
	exec, err := al.dev.EndCapture(s)
	delete(al.byStream, s)
	delete(al.byCapture, c.id)
	al.mu.Unlock()
	endErr := al.captureEnded()

	if err != nil {
		// No graph will replay the capture: what it held is released now.
		errs := []error{fmt.Errorf("alloc: end capture on stream %d: %w", s, err), endErr}
		for _, b := range append(c.deferred, c.retained...) {
			errs = append(errs, al.releaseHold(b))
		}
		errs = append(errs, al.dropPool(c.pool), al.releaseDead())
		return nil, errors.Join(errs...)
	}
	g := &Graph{al: al, exec: exec, pool: c.pool, retained: c.retained}
	errs := []error{endErr}
	for _, b := range c.deferred {
		errs = append(errs, al.releaseHold(b))
	}
	errs = append(errs, al.releaseDead())
	return g, errors.Join(errs...)
}

// Exec returns the device's handle for the graph.
func (g *Graph) Exec() GraphExec { return g.exec }

// Pool returns the graph's pool, to pass to BeginCapture so that another capture shares it. The
// pool stays valid while the graph (or another holder) keeps it.
func (g *Graph) Pool() *GraphPool { return g.pool }

// Launch queues a replay of the graph on stream s.
func (g *Graph) Launch(s Stream) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.released {
		return fmt.Errorf("alloc: launch of a released graph: %w", ErrInvalidHandle)
	}
	return g.al.dev.LaunchGraph(g.exec, s)
}

// Release destroys the graph, releases the blocks it retained and drops its reference to its
// pool; the pool's memory goes back to the device when no holder is left. Replays already
// queued complete first: the device waits for them before freeing memory.
func (g *Graph) Release() error {
	g.mu.Lock()
	if g.released {
		g.mu.Unlock()
		return fmt.Errorf("alloc: graph released twice: %w", ErrInvalidHandle)
	}
	g.released = true
	retained := g.retained
	g.retained = nil
	g.mu.Unlock()

	errs := []error{g.al.dev.DestroyGraph(g.exec)}
	for _, b := range retained {
		errs = append(errs, g.al.releaseHold(b))
	}
	errs = append(errs, g.al.dropPool(g.pool))
	return errors.Join(errs...)
}

// dropPool drops one reference to p and releases its memory when none is left.
func (al *Allocator) dropPool(p *GraphPool) error {
	al.mu.Lock()
	if p.released {
		al.mu.Unlock()
		return fmt.Errorf("alloc: graph pool %d released twice: %w", p.id, ErrInvalidHandle)
	}
	p.refs--
	if p.refs > 0 {
		al.mu.Unlock()
		return nil
	}
	p.released = true
	var hs []*heap
	for _, h := range p.heaps {
		h.mu.Lock()
		h.dead = true
		h.mu.Unlock()
		hs = append(hs, h)
	}
	al.mu.Unlock()
	var errs []error
	for _, h := range hs {
		errs = append(errs, al.drain(h))
		al.maybeRetire(h)
	}
	return errors.Join(errs...)
}

// releaseDead returns the whole free segments of dead heaps to the device: those kept because a
// capture was underway when they became free.
func (al *Allocator) releaseDead() error {
	if al.captures.Load() > 0 {
		return nil
	}
	al.mu.Lock()
	var hs []*heap
	for h := range al.heaps {
		if h.dead {
			hs = append(hs, h)
		}
	}
	al.mu.Unlock()
	var errs []error
	for _, h := range hs {
		errs = append(errs, al.drain(h))
		al.maybeRetire(h)
	}
	return errors.Join(errs...)
}

// captureHeap returns the pool heap for s if s is being captured, else nil.
func (al *Allocator) captureHeap(s Stream) (*heap, error) {
	id, capturing, err := al.dev.CaptureInfo(s)
	if err != nil {
		return nil, fmt.Errorf("alloc: capture info of stream %d: %w", s, err)
	}
	if !capturing {
		return nil, nil
	}
	al.mu.Lock()
	defer al.mu.Unlock()
	c := al.byCapture[id]
	if c == nil {
		return nil, fmt.Errorf("alloc: stream %d is captured by a capture not begun with Allocator.BeginCapture: %w",
			s, ErrCaptureUnsupported)
	}
	return c.pool.heapLocked(s), nil
}

// freeCapturedLocked frees a's block according to the capture rule (invariant 6) if a stream it
// was used on is being captured, and reports whether it did. al.mu and h.mu must be held.
func (al *Allocator) freeCapturedLocked(h *heap, a Allocation) (bool, error) {
	b := a.b
	if !b.allocated || b.gen != a.gen {
		return false, nil // the caller reports the invalid free
	}
	var c *capture
	for i := -1; i < len(b.uses) && c == nil; i++ {
		s := h.stream
		if i >= 0 {
			s = b.uses[i]
		}
		if id, capturing, err := al.dev.CaptureInfo(s); err == nil && capturing {
			c = al.byCapture[id]
		}
	}
	if c == nil {
		return false, nil
	}
	if err := h.freeLocked(a); err != nil {
		return true, err
	}
	if h.pool == c.pool && len(b.uses) == 0 {
		// Reuse within the capture is ordered by the capture's stream order, as on replay.
		h.st.activeFreed++
		h.st.activeFreedBytes += b.size
		h.release(b) // the pool is alive while its capture runs: no segment comes back
		return true, nil
	}
	b.holds++
	al.st.held(b.size)
	if h.pool == c.pool {
		c.deferred = append(c.deferred, b)
	} else {
		c.retained = append(c.retained, b)
	}
	return true, nil
}

// releaseHold drops a capture's or graph's hold on b: b then waits for events on the streams
// that used it, or is released. No lock may be held.
func (al *Allocator) releaseHold(b *block) error {
	h := b.seg.heap // b is held: nothing changes seg until it is released
	h.mu.Lock()
	b.holds--
	if b.holds > 0 {
		h.mu.Unlock()
		return nil
	}
	al.st.unheld(b.size)
	var err error
	held := false
	if len(b.uses) > 0 && !al.hooks.ignoreUses {
		held, err = h.recordUses(b, false)
	}
	var seg *segment
	if held {
		al.st.held(b.size)
	} else {
		h.st.activeFreed++
		h.st.activeFreedBytes += b.size
		b.uses = b.uses[:0]
		seg = h.release(b)
	}
	dead := h.dead
	h.mu.Unlock()
	if seg != nil {
		err = errors.Join(err, al.freeSegments([]*segment{seg}))
	}
	if dead {
		err = errors.Join(err, al.drain(h))
		al.maybeRetire(h)
	}
	return err
}
