package par

import "sync/atomic"

// queue is the pool's list of loops wanting helpers: a bounded multi-producer, multi-consumer
// queue without locks (D. Vyukov's bounded MPMC queue: each cell's sequence number says whether
// it is free for the producer of its turn or full for the consumer of its turn).
//
// Hand-written because a buffered channel, which the pool used before, does not fit: a channel
// is guarded by one lock, and when a loop's jobs arrive every polling helper (GOMAXPROCS-1 of
// them) takes that lock at once, together with the caller posting the next job. The runtime's
// lock spins briefly and then sleeps the thread in the kernel, so on a machine of many cores a
// loop's caller could sleep tens of microseconds posting its jobs, longer than the loop. Here
// polling an empty queue reads two words, and posting or taking a job is one compare-and-swap
// that never sleeps.
type queue struct {
	_     [64]byte
	head  atomic.Uint64 // next cell to take
	_     [56]byte
	tail  atomic.Uint64 // next cell to fill
	_     [56]byte
	cells []cell
	mask  uint64
}

type cell struct {
	seq atomic.Uint64 // pos: free for the producer of pos; pos+1: holds the job of pos
	j   job           // written before seq is published, read after it is seen
}

// newQueue returns an empty queue of at least n cells (a power of 2).
func newQueue(n int) *queue {
	size := 1
	for size < n {
		size *= 2
	}
	q := &queue{cells: make([]cell, size), mask: uint64(size - 1)}
	for i := range q.cells {
		q.cells[i].seq.Store(uint64(i))
	}
	return q
}

// push adds j, or reports false when the queue is full.
func (q *queue) push(j job) bool {
	for {
		pos := q.tail.Load()
		c := &q.cells[pos&q.mask]
		switch d := int64(c.seq.Load() - pos); {
		case d == 0:
			if q.tail.CompareAndSwap(pos, pos+1) {
				c.j = j
				c.seq.Store(pos + 1)
				return true
			}
		case d < 0:
			return false // full: the cell still holds the job of a lap ago
		}
		// d > 0, or the compare-and-swap lost: another producer took the cell; try the next.
	}
}

// pop takes the oldest job, or reports false when the queue is empty.
func (q *queue) pop() (job, bool) {
	for {
		pos := q.head.Load()
		c := &q.cells[pos&q.mask]
		switch d := int64(c.seq.Load() - (pos + 1)); {
		case d == 0:
			if q.head.CompareAndSwap(pos, pos+1) {
				j := c.j
				c.j = job{}
				c.seq.Store(pos + q.mask + 1)
				return j, true
			}
		case d < 0:
			return job{}, false // empty, or its producer has not published it yet
		}
	}
}
