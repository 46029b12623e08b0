package park

import (
	"runtime"
	"sync/atomic"
)

// SpinLock is a mutex that is spun on, yielding the processor between tries, rather than parked
// on, so that it takes no sudog (see the package comment). It suits a lock held for a few words'
// update: a free list's push or pop, a queue's head. The zero SpinLock is unlocked.
type SpinLock struct{ locked atomic.Bool }

// Lock takes the lock, yielding while another goroutine holds it.
func (l *SpinLock) Lock() {
	for !l.locked.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
}

// Unlock lets the lock go.
func (l *SpinLock) Unlock() { l.locked.Store(false) }
