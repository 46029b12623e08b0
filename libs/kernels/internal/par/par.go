// Package par runs allocation-free parallel loops on a shared pool of worker goroutines.
//
// Kernels must not allocate per call, and starting goroutines with closures would; so the pool
// is started once, loops are recycled, and work is described by a Body interface holding a
// pointer the caller keeps (typically an argument struct from a Pool, this package's free list).
//
// The pool is one per process (GOMAXPROCS-1 helpers), shared by every CPU backend and session:
// a loop asks for at most its slots, so a backend configured for fewer workers uses fewer, and
// several backends never oversubscribe the processors.
//
// Nothing in a loop's path blocks on a Go synchronisation primitive: posting its jobs and taking
// them go through a queue without locks (queue.go), joining a loop and waiting for its helpers
// use atomics (the caller spins, yielding, while it waits), and idle helpers poll the queue,
// then sleep between polls, and at last park on a park.Event, which blocks the helper's thread
// in the kernel (see idleFor). Every blocking channel operation, mutex or condition wait takes
// a runtime sudog from a per-processor cache, and time.Sleep puts a timer in a per-processor
// heap; with many processors both allocate now and then (see package park) unless park.Reserve
// has made room for the timers, and a run of a model must not allocate.
package par

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"time"

	"carve.dev/libs/alloc/park"
)

// Body is the work of a parallel loop. Do processes indices [lo, hi) as participant slot; at any
// moment the running participants have distinct slots in [0, slots), so a body may use per-slot
// scratch. Do must be safe to call concurrently for disjoint ranges.
type Body interface {
	Do(slot, lo, hi int)
}

// A loop's state word packs its generation (bits 32-63), whether it is closed (bit 31) and how
// many helpers are inside its work (bits 0-30). A helper joins with one compare-and-swap, and
// only a loop of its job's generation that is still open: a job left in the queue after its
// loop finished (the caller did all the work) is dropped instead of touching a reused loop.
// The caller waits only for helpers that joined; it never waits for a queued job, so nested
// loops cannot deadlock.
const (
	closedBit  = 1 << 31
	activeMask = closedBit - 1
)

type loop struct {
	body  Body
	n     int
	grain int
	extra int           // helpers asked for: they take slots [1, extra]; the caller is slot 0
	next  atomic.Int64  // start of the next unclaimed chunk
	slots atomic.Int32  // helpers that joined
	taken atomic.Uint64 // slots [1, 63] handed out, a bit each (see claimSlot)
	state atomic.Uint64
}

type job struct {
	l   *loop
	gen uint32
}

// work runs chunks until none is left and returns how many it ran.
func (l *loop) work(slot int) (chunks int) {
	for {
		lo := int(l.next.Add(int64(l.grain))) - l.grain
		if lo >= l.n {
			return chunks
		}
		l.body.Do(slot, lo, min(lo+l.grain, l.n))
		chunks++
	}
}

func (l *loop) help(gen uint32, id int) {
	for {
		s := l.state.Load()
		if uint32(s>>32) != gen || s&closedBit != 0 {
			return
		}
		if l.state.CompareAndSwap(s, s+1) {
			break
		}
	}
	l.work(l.claimSlot(id))
	l.state.Add(^uint64(0)) // one helper fewer
}

// claimSlot hands helper id (1, 2, ...) joining the loop a slot in [1, extra]: its own,
// (id-1) mod extra + 1, when that is free, else the lowest free one. At most extra helpers join
// (one a posted job), so one is always free. A helper so keeps its slot from loop to loop while
// the loops ask for as many helpers, and with it the per-slot scratch a body indexes by slot
// stays in its core's caches: with slots handed out in the order helpers joined, attention's
// scratch (tens of kilobytes a slot) moved between cores run after run. Loops of 64 slots or more
// hand them out in joining order.
func (l *loop) claimSlot(id int) int {
	n := int(l.slots.Add(1))
	if l.extra >= 64 {
		return n
	}
	own := (id-1)%l.extra + 1
	for {
		t := l.taken.Load()
		s := own
		if t&(1<<s) != 0 {
			s = bits.TrailingZeros64(^t &^ 1) // bit 0 is the caller's
		}
		if l.taken.CompareAndSwap(t, t|1<<s) {
			return s
		}
	}
}

var (
	loops Pool[loop]

	started  atomic.Bool
	starting atomic.Bool
	jobs     *queue
	helpers  int // pool size

	// Parked helpers wait on wake until a loop posts a job; parked counts them (see helper).
	parked atomic.Int32
	wake   park.Event

	// lastLoop is when the latest loop started (nanoseconds since epoch), so that idle helpers
	// keep polling while loops keep coming.
	lastLoop atomic.Int64
	epoch    = time.Now()
)

func start() {
	for !started.Load() {
		if starting.CompareAndSwap(false, true) {
			helpers = max(runtime.GOMAXPROCS(0)-1, 0)
			jobs = newQueue(4*helpers + 1)
			park.Reserve(helpers) // every helper may be parked, or asleep, at once
			for id := range helpers {
				go helper(id + 1)
			}
			started.Store(true)
			return
		}
		runtime.Gosched()
	}
}

// An idle helper polls the queue while loops keep coming, sleeps between polls while they come
// now and then, and parks only when none has come for long:
//
//   - idleFor: it polls after the latest loop started or it finished its last job, whichever is
//     later. Kernels of one model run back to back, and runs of a session follow one another,
//     so while a model runs the helpers seldom sleep: a sleeping or parked goroutine takes tens
//     of microseconds or more to wake, longer than many kernels' loops. onnxruntime's thread
//     pool spins the same way. A poll of an empty queue reads two words; a polling helper
//     pauses between polls (cpuRelax) and yields its processor every few microseconds. The
//     window is a trade measured on a 2-vCPU virtual machine: polling slows the serial work
//     beside it (a tiny model's run, 30 us, took up to 30% longer than with a 50 us window),
//     but with 50 us helpers slept through the next loop of a model whose loops came further
//     apart, and its runs took 30-50% longer.
//   - sleepFor: then it sleeps between polls, from minSleep doubling up to maxSleep (short
//     sleeps first, for a pause between loops; longer ones after, so that sleeping helpers do
//     not keep taking processor time from a model that runs without loops). A loop that comes
//     meanwhile starts on the caller and the helpers join it as they wake. time.Sleep gives the
//     processor back at once; its timer goes into a heap that park.Reserve has made room in.
//   - after that it parks on a park.Event, and the next loop that posts a job wakes it.
//
// Neither sleeping nor parking allocates: when the process's threads outnumber the cores (a
// helper's thread descheduled for longer than idleFor) helpers sleep, and may park, during
// runs, and the runs stay allocation-free.
const (
	idleFor  = time.Millisecond
	sleepFor = 50 * time.Millisecond
	minSleep = 20 * time.Microsecond
	maxSleep = time.Millisecond
)

// helper runs loops' chunks for as long as the program runs; id (1, 2, ...) picks its slots.
func helper(id int) {
	park.PrepareSleep() // the goroutine's sleep timer, made now rather than in a run
	for {
		if j, ok := poll(); ok {
			j.l.help(j.gen, id)
			continue
		}
		// Park until a loop posts a job. A helper takes wake's sequence number and counts itself
		// parked before it looks at the queue a last time, and a loop looks at the count after
		// posting its jobs (atomics are sequentially consistent): so either the helper sees the
		// job or the loop sees it parked and wakes as many parked helpers as it posted jobs
		// (NotifyN: all of them at once would crowd out the loop's own thread). A helper that
		// has not yet gone to sleep in the Wait returns at once (the sequence number moved).
		seq := wake.Seq()
		parked.Add(1)
		if j, ok := jobs.pop(); ok {
			parked.Add(-1)
			j.l.help(j.gen, id)
			continue
		}
		wake.Wait(seq, 0)
		parked.Add(-1)
	}
}

// poll polls the queue, and then sleeps between polls, until a job comes or nothing has
// happened for sleepFor.
func poll() (job, bool) {
	last := int64(time.Since(epoch))
	sleep := minSleep
	for i := 1; ; i++ {
		if j, ok := jobs.pop(); ok {
			return j, true
		}
		cpuRelax()
		if i%64 != 0 {
			continue
		}
		idle := int64(time.Since(epoch)) - max(last, lastLoop.Load())
		switch {
		case idle > int64(sleepFor):
			return job{}, false
		case idle > int64(idleFor):
			time.Sleep(sleep)
			sleep = min(2*sleep, maxSleep)
		default: // polling; after a loop that came while this helper slept, sleeps start short again
			sleep = minSleep
			if i%512 == 0 {
				runtime.Gosched()
			}
		}
	}
}

// Helpers is the number of pool goroutines besides the caller.
func Helpers() int {
	if !started.Load() {
		start()
	}
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
	if simOn {
		simFor(n, grain, slots, body)
		return
	}
	chunks := (n + grain - 1) / grain
	extra := min(slots, chunks, Helpers()+1) - 1
	var start time.Time
	if statsOn {
		start = time.Now()
	}
	if extra <= 0 {
		body.Do(0, 0, n)
		if statsOn {
			record(n, grain, extra, 0, chunks, start)
		}
		return
	}
	lastLoop.Store(int64(time.Since(epoch)))
	l := loops.Get()
	// No helper touches l now: the state's generation is one no queued job carries.
	l.body, l.n, l.grain, l.extra = body, n, grain, extra
	l.next.Store(0)
	l.slots.Store(0)
	l.taken.Store(0)
	gen := uint32(l.state.Load() >> 32)
	for range extra {
		if !jobs.push(job{l, gen}) {
			break // the queue is full: the caller does the work
		}
	}
	if p := int(parked.Load()); p > 0 {
		wake.NotifyN(min(p, extra))
	}
	mine := l.work(0)
	// Close the loop to late helpers, then wait for those inside (they are running their last
	// chunks, so yielding beats parking; the thread yields too, in case a helper's thread is
	// waiting for this core).
	l.state.Or(closedBit)
	for i := 1; l.state.Load()&activeMask != 0; i++ {
		cpuRelax()
		if i%64 == 0 {
			runtime.Gosched()
			osYield()
		}
	}
	if statsOn {
		record(n, grain, extra, int(l.slots.Load()), mine, start)
	}
	l.body = nil
	l.state.Store(uint64(gen+1) << 32)
	loops.Put(l)
}
