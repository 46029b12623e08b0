// Package park lets goroutines wait for one another without Go heap allocations, however many
// processors the program runs on. carve's CPU streams and kernel worker pool wait through it so
// that a model's runs allocate nothing after warm-up.
//
// Every way the Go runtime offers to block a goroutine takes something from a cache that it
// refills by allocating: channels, mutexes, condition variables and semaphores take a sudog
// from a per-processor cache (the garbage collector empties the shared list that refills it,
// and sudogs drift from the processors that wait to those that wake), and time.Sleep adds the
// goroutine's timer to its processor's timer heap, a slice that grows the first time it holds
// more timers than ever. With many processors, they allocate now and then for as long as the
// program runs. An Event does not block the goroutine: it blocks its thread in the kernel
// (futex on Linux) through a system call, so the runtime hands the processor to another thread
// and takes nothing from its caches.
//
// Invariants:
//
//  1. A waiter that saw sequence number s before the condition it waits for was made true, and
//     then calls Wait(s), returns once Notify has been called after the condition was made
//     true: Wait sleeps only while the sequence number is still s (the kernel checks it
//     atomically with going to sleep), and Notify moves it before it looks for sleepers.
//  2. Notify makes no system call unless a goroutine is in Wait.
//  3. Neither Wait nor Notify allocates (on Linux; elsewhere Wait sleeps in steps, see
//     futex_other.go). Each blocked Wait holds a thread; Reserve makes the threads beforehand,
//     so that the runtime need not make (allocate) one later.
//
// time.Sleep releases the processor at once, which a blocked Wait does not (the runtime takes
// it from a thread in a system call only after a while), so short sleeps between polls are
// better slept there: Reserve also makes room in every processor's timer heap, so that the
// goroutines it was told about can sleep without the runtime allocating.
package park

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname
)

// Event is a sequence number that goroutines wait on until it moves. The zero Event is ready
// to use; an Event must not be copied after first use.
//
// The way to wait for a condition:
//
//	for !cond() {
//		s := e.Seq()
//		if cond() {
//			break
//		}
//		e.Wait(s, 0)
//	}
//
// and whoever makes cond true calls e.Notify() after.
type Event struct {
	seq     atomic.Uint32
	waiters atomic.Int32
}

// Seq returns the current sequence number.
func (e *Event) Seq() uint32 { return e.seq.Load() }

// Wait blocks until the sequence number is no longer seq, or timeout has passed if it is
// positive. It may return early (a signal, or a Notify meant for another condition): callers
// check their condition again. The blocked thread keeps its processor until the runtime takes
// it back (within 10 ms, sooner when other goroutines wait for one), and goroutines queued on
// that processor wait meanwhile: a goroutine that has just made others runnable (closed a
// channel, say) and wants the answer soon uses Await.
func (e *Event) Wait(seq uint32, timeout time.Duration) {
	e.waiters.Add(1)
	if e.seq.Load() == seq {
		wait(&e.seq, seq, timeout)
	}
	e.waiters.Add(-1)
}

// Notify moves the sequence number and wakes every goroutine in Wait.
func (e *Event) Notify() { e.NotifyN(1<<31 - 1) }

// NotifyN moves the sequence number and wakes up to n goroutines in Wait (at least one if any);
// the others keep waiting until a later Notify, even though the number has moved.
func (e *Event) NotifyN(n int) {
	e.seq.Add(1)
	if e.waiters.Load() != 0 {
		wake(&e.seq, max(n, 1))
	}
}

// The phases of Await: it polls, yielding the processor between polls, for PollFor; then
// sleeps between polls, from minSleep doubling up to maxSleep, until SleepFor has passed since
// it began; then blocks on the Event.
const (
	PollFor  = 50 * time.Microsecond
	SleepFor = 50 * time.Millisecond
	minSleep = 20 * time.Microsecond
	maxSleep = 200 * time.Microsecond
)

// Await returns once ready returns true, which it calls again whenever e moves and now and then
// besides; whoever makes it true calls e.Notify after. It suits a goroutine that hands work to
// another and waits for its answer, which usually comes soon:
//
//   - Polling first: a blocked thread takes the kernel tens of microseconds to wake, longer than
//     most answers take.
//   - Then sleeping (time.Sleep, room made by Reserve): the goroutine gives its processor back
//     at once, which a thread blocked in a system call does not (the runtime takes the
//     processor from it only after a while), and when the program has more threads than cores
//     a processor held that way can keep the answer from being computed.
//   - Then blocking, so that a goroutine with nothing to do for long costs nothing.
//
// The goroutine must have been counted in a Reserve. Its first sleep ever makes its sleep timer
// (one allocation per goroutine): a goroutine that must not allocate later sleeps once first.
func (e *Event) Await(ready func() bool) {
	if ready() {
		return
	}
	start := time.Now()
	sleep := minSleep
	for {
		waited := time.Since(start)
		switch {
		case waited < PollFor:
			runtime.Gosched()
		case waited < SleepFor:
			time.Sleep(sleep)
			sleep = min(2*sleep, maxSleep)
		default:
			seq := e.Seq()
			if ready() {
				return
			}
			e.Wait(seq, 0)
		}
		if ready() {
			return
		}
	}
}

// slack is what Reserve keeps beyond the reservations: threads for the runtime's own that may
// be busy at once (one blocked polling the network, one that has just given its processor
// back), and room in each timer heap for the runtime's timers (its background scavenger sleeps
// on one after a collection) and a caller's.
const slack = 8

// Reservations grow in steps. Each growth makes every thread and timer anew (see Reserve), so a
// Reserve that needs more than the last growth made makes a quarter more than that at once (at
// most spareThreads more threads than it needs: threads are a limited resource, timer room is
// only memory). Reservations asked for a few at a time, as each new stream asks for its own,
// then make O(n) threads and timers in all for n goroutines, not O(n²).
const spareThreads = 512

var reserved struct {
	sync.Mutex
	live       int // goroutines reserved for and not released
	threads    int // the most threads ever held at once for reservations
	timers     int // the timers every processor's heap has had room made for
	timerProcs int // GOMAXPROCS then
	// The work every growth has done, for tests: goroutines locked to a thread, and timers
	// made (room in one processor's heap for n timers counts n).
	madeThreads, madeTimers int
}

// Reserve tells the package that up to n more goroutines may be blocked in Wait, or sleeping
// (time.Sleep), at once, and makes sure that the runtime need not allocate for them later:
//
//   - Threads. Each blocked Wait holds one, besides the one per processor running goroutines.
//     The runtime's threads (Ms) are never freed, so Reserve starts enough of them now, held
//     at once by goroutines locked to them (until the runtime holds that many, see makeThreads)
//     and then let go: they stay idle until a Wait or a processor needs one. Otherwise a Wait
//     that outlasts its processor's hand-off could make the runtime start, and allocate, a
//     thread during a run.
//   - Timer heaps. A sleeping goroutine's timer goes into the heap of the processor it runs on,
//     a slice that the runtime grows, allocating, the first time it holds more timers than
//     ever, and never shrinks. Reserve makes room in every processor's heap for all of the
//     reserved goroutines at once (see roomForTimers).
//
// Release undoes a Reserve when those goroutines are gone. Threads and timer room are made in
// steps a quarter larger than the last (see spareThreads), so that n goroutines reserved one or
// two at a time cost O(n) in all.
func Reserve(n int) {
	reserved.Lock()
	defer reserved.Unlock()
	reserved.live += n
	procs := runtime.GOMAXPROCS(0)
	if timers := reserved.live + slack; timers > reserved.timers || procs != reserved.timerProcs {
		if procs == reserved.timerProcs {
			timers = max(timers, reserved.timers+reserved.timers/4)
		}
		roomForTimers(procs, timers)
		reserved.timers, reserved.timerProcs = timers, procs
		reserved.madeTimers += procs * timers
	}
	want := reserved.live + procs + slack
	if want <= reserved.threads {
		return
	}
	want = max(want, min(reserved.threads+reserved.threads/4, want+spareThreads))
	reserved.threads = want
	makeThreads(want)
}

// makeThreads makes the runtime hold at least n threads. Threads that goroutines hold blocked
// (an idle stream's Wait) count too: goroutines are locked to threads in batches only until the
// runtime's count (runtime/metrics) reaches n, so that a growth never takes the process past n
// threads and towards Go's limit (runtime/debug.SetMaxThreads), as n locked goroutines beside
// the blocked ones would. Where the count is not reported, n goroutines are locked at once.
func makeThreads(n int) {
	release := make(chan struct{})
	defer close(release)
	for locked := 0; locked < n; {
		batch := n - locked
		if have := threadCount(); have >= n {
			return
		} else if have > 0 {
			batch = min(batch, n-have)
		}
		var wg sync.WaitGroup
		wg.Add(batch)
		for range batch {
			go func() {
				// Locked, the goroutine keeps its thread to itself while it waits below: the
				// goroutines of a batch waiting at once hold distinct threads, which the runtime
				// takes from its idle list or starts. Unlocked before it exits, the thread goes
				// back to the idle list instead of ending.
				runtime.LockOSThread()
				wg.Done()
				<-release
				runtime.UnlockOSThread()
			}()
		}
		wg.Wait()
		locked += batch
		reserved.madeThreads += batch
	}
}

// threadCount is the runtime's count of its live threads, or -1 where it is not reported.
func threadCount() int {
	s := []metrics.Sample{{Name: "/sched/threads/total:threads"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int(s[0].Value.Uint64())
}

// Release undoes Reserve(n).
func Release(n int) {
	reserved.Lock()
	reserved.live -= n
	reserved.Unlock()
}

// roomForTimers grows every processor's timer heap to hold n timers. Go has no way to pick the
// processor a goroutine runs on: so procs goroutines go from processor to processor (Gosched)
// until each processor has been seen pinned (procPin: then the goroutine cannot move) and has
// had n timers added and stopped. It gives up after a second, leaving the rest to chance.
func roomForTimers(procs, n int) {
	seen := make([]atomic.Bool, procs)
	var left atomic.Int32
	left.Store(int32(procs))
	deadline := time.Now().Add(time.Second)
	var wg sync.WaitGroup
	for range procs {
		wg.Go(func() {
			ts := make([]*time.Timer, n)
			for left.Load() > 0 && time.Now().Before(deadline) {
				p := procPin()
				if p < len(seen) && seen[p].CompareAndSwap(false, true) {
					for i := range ts {
						ts[i] = time.AfterFunc(time.Hour, func() {})
					}
					procUnpin()
					for _, t := range ts {
						t.Stop()
					}
					left.Add(-1)
				} else {
					procUnpin()
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
}

// procPin pins the goroutine to its processor (no preemption, no move) and returns the
// processor's id; procUnpin undoes it. They are the runtime's own, which sync.Pool uses, and
// are kept linkable on purpose (go.dev/issue/67401). Nothing may block between the two.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// PrepareSleep makes the calling goroutine's sleep timer, which the runtime makes, allocating,
// at the goroutine's first sleep: a goroutine that will sleep (time.Sleep, or Await, which
// sleeps between polls) on a path that must not allocate calls it once, before that path.
func PrepareSleep() { time.Sleep(time.Nanosecond) }
