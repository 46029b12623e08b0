// Package par runs allocation-free parallel loops on a shared pool of worker goroutines.
//
// Kernels must not allocate per call, and starting goroutines with closures would; so the pool
// is started once, loops are pooled, and work is described by a Body interface holding a
// pointer the caller keeps (typically a sync.Pool'd argument struct).
//
// The pool is one per process (GOMAXPROCS-1 helpers), shared by every CPU backend and session:
// a loop asks for at most its slots, so a backend configured for fewer workers uses fewer, and
// several backends never oversubscribe the processors. Idle helpers spin briefly for the next
// loop before parking (see spinFor).
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Body is the work of a parallel loop. Do processes indices [lo, hi) as participant slot; at any
// moment the running participants have distinct slots in [0, slots), so a body may use per-slot
// scratch. Do must be safe to call concurrently for disjoint ranges.
type Body interface {
	Do(slot, lo, hi int)
}

type loop struct {
	body  Body
	n     int
	grain int
	next  atomic.Int64 // start of the next unclaimed chunk

	// Joining is under mu: a helper joins only a loop of its job's generation that is still
	// open, so a job left in the queue after its loop finished (the caller did all the work)
	// is dropped instead of touching a reused loop. The caller waits only for helpers that
	// joined; it never waits for a queued job, so nested loops cannot deadlock.
	mu     sync.Mutex
	done   *sync.Cond
	gen    uint64
	closed bool
	active int // helpers inside work
	slots  int // slots handed out; the caller is slot 0
}

type job struct {
	l   *loop
	gen uint64
}

func (l *loop) work(slot int) {
	for {
		lo := int(l.next.Add(int64(l.grain))) - l.grain
		if lo >= l.n {
			return
		}
		l.body.Do(slot, lo, min(lo+l.grain, l.n))
	}
}

func (l *loop) help(gen uint64) {
	l.mu.Lock()
	if l.gen != gen || l.closed {
		l.mu.Unlock()
		return
	}
	l.active++
	l.slots++
	slot := l.slots
	l.mu.Unlock()
	l.work(slot)
	l.mu.Lock()
	l.active--
	if l.active == 0 && l.closed {
		l.done.Signal()
	}
	l.mu.Unlock()
}

var (
	loops = sync.Pool{New: func() any {
		l := new(loop)
		l.done = sync.NewCond(&l.mu)
		return l
	}}

	startOnce sync.Once
	jobs      chan job
	helpers   int // pool size
)

func start() {
	helpers = runtime.GOMAXPROCS(0) - 1
	if helpers < 0 {
		helpers = 0
	}
	jobs = make(chan job, 4*helpers+1)
	for range helpers {
		go helper()
	}
}

// spinFor is how long an idle helper keeps polling for the next loop before it parks. A
// parked goroutine takes tens of microseconds to wake (longer than many kernels' loops: the
// caller would finish alone); kernels of one model run back to back, so a helper that has
// just finished usually finds the next loop within a few microseconds. (onnxruntime's thread
// pool spins the same way.)
const spinFor = 50 * time.Microsecond

// helper runs loops' chunks for as long as the program runs.
func helper() {
	for {
		select {
		case j := <-jobs:
			j.l.help(j.gen)
			continue
		default:
		}
		if j, ok := spin(); ok {
			j.l.help(j.gen)
			continue
		}
		j := <-jobs // park until the next loop
		j.l.help(j.gen)
	}
}

// spin polls the queue for up to spinFor. A poll of an empty channel takes no lock; every
// few microseconds the helper yields its processor (runtime.Gosched), so that goroutines
// waiting for one are not held up by spinning helpers.
func spin() (job, bool) {
	start := time.Now()
	for i := 1; ; i++ {
		select {
		case j := <-jobs:
			return j, true
		default:
		}
		if i%256 == 0 {
			if time.Since(start) > spinFor {
				return job{}, false
			}
			if i%2048 == 0 {
				runtime.Gosched()
			}
		}
	}
}

// Helpers is the number of pool goroutines besides the caller.
func Helpers() int {
	startOnce.Do(start)
	return helpers
}

// For runs body over [0, n) in chunks of grain indices, with at most slots participants (the
// calling goroutine included) and returns when all of it is done. With slots <= 1, or a single
// chunk, it calls body.Do(0, 0, n) on the calling goroutine. For never blocks on a busy pool:
// chunks nobody else picks up are run by the caller, so nested loops cannot deadlock.
func For(n, grain, slots int, body Body) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := (n + grain - 1) / grain
	extra := min(slots, chunks, Helpers()+1) - 1
	if extra <= 0 {
		body.Do(0, 0, n)
		return
	}
	l := loops.Get().(*loop)
	l.mu.Lock()
	l.body, l.n, l.grain = body, n, grain
	l.next.Store(0)
	l.closed, l.active, l.slots = false, 0, 0
	gen := l.gen
	l.mu.Unlock()
	for range extra {
		select {
		case jobs <- job{l, gen}:
		default: // the queue is full: the caller does the work
		}
	}
	l.work(0)
	l.mu.Lock()
	l.closed = true
	for l.active > 0 {
		l.done.Wait()
	}
	l.gen++
	l.body = nil
	l.mu.Unlock()
	loops.Put(l)
}
