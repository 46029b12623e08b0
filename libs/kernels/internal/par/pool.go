package par

import (
	"runtime"

	"carve.dev/libs/alloc/park"
)

// Pool is a free list of *T for per-call argument structs on a kernel's run path. Get returns
// a recycled item or a new zero one; Put gives one back (the caller clears what it should not
// keep alive). The zero Pool is empty and ready to use.
//
// Hand-written because sync.Pool does not fit a path that must not allocate: the garbage
// collector empties a sync.Pool, and its per-processor caches make Get allocate whenever the
// items sit on other processors' lists, which with many processors happens run after run.
// A Pool keeps its items for good, and makes them a batch at a time (a few per processor), so
// once it has held as many as were ever in use at once Get and Put never allocate. Its lock is
// held for a slice push or pop and is spun on, not parked on, so it takes no sudog either (see
// the package comment).
type Pool[T any] struct {
	mu    park.SpinLock
	items []*T // cap(items) >= every item made, so that Put never grows it
	made  int
}

// Get takes an item off the list, or makes a batch of new ones when the list is empty.
func (p *Pool[T]) Get() *T {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.items) == 0 {
		batch := make([]T, max(8, 2*runtime.GOMAXPROCS(0)))
		p.made += len(batch)
		p.items = make([]*T, 0, 2*p.made)
		for i := range batch[1:] {
			p.items = append(p.items, &batch[1+i])
		}
		return &batch[0]
	}
	n := len(p.items)
	x := p.items[n-1]
	p.items[n-1] = nil
	p.items = p.items[:n-1]
	return x
}

// Put puts x on the list.
func (p *Pool[T]) Put(x *T) {
	p.mu.Lock()
	p.items = append(p.items, x)
	p.mu.Unlock()
}
