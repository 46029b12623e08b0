package park

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A waiter that took the sequence number before the condition changed returns once Notify is
// called, whichever comes first: Notify before Wait, or Wait blocked before Notify.
func TestEventNoLostWakeup(t *testing.T) {
	Reserve(2)
	defer Release(2)
	var e Event
	var flag atomic.Bool
	for range 2000 {
		flag.Store(false)
		done := make(chan struct{})
		go func() {
			for !flag.Load() {
				s := e.Seq()
				if flag.Load() {
					break
				}
				e.Wait(s, 0)
			}
			close(done)
		}()
		flag.Store(true)
		e.Notify()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a waiter missed its wake-up")
		}
	}
}

// Wait returns at once when the sequence number has moved, and after the timeout when it has
// not.
func TestEventWaitSeqAndTimeout(t *testing.T) {
	var e Event
	s := e.Seq()
	e.Notify()
	require.NotEqual(t, s, e.Seq())
	e.Wait(s, 0) // returns: the number moved

	start := time.Now()
	e.Wait(e.Seq(), 2*time.Millisecond)
	require.GreaterOrEqual(t, time.Since(start), time.Millisecond, "a timed Wait returned long before its timeout")
}

// NotifyN(1) wakes one of the blocked waiters, and Notify the rest.
func TestEventNotifyN(t *testing.T) {
	const waiters = 4
	Reserve(waiters)
	defer Release(waiters)
	var e Event
	var woken atomic.Int32
	var wg sync.WaitGroup
	s := e.Seq()
	for range waiters {
		wg.Go(func() {
			e.Wait(s, 0)
			woken.Add(1)
		})
	}
	for e.waiters.Load() < waiters {
		runtime.Gosched()
	}
	time.Sleep(10 * time.Millisecond) // let them reach the kernel; an early one only wakes sooner
	e.NotifyN(1)
	for woken.Load() < 1 {
		runtime.Gosched()
	}
	e.Notify()
	wg.Wait()
	require.EqualValues(t, waiters, woken.Load())
}

// Await returns once its condition holds, through each of its phases: polling, sleeping and
// blocking.
func TestAwait(t *testing.T) {
	Reserve(1)
	defer Release(1)
	for _, after := range []time.Duration{0, PollFor / 2, 2 * PollFor, SleepFor + 20*time.Millisecond} {
		var e Event
		var ready atomic.Bool
		go func() {
			time.Sleep(after)
			ready.Store(true)
			e.Notify()
		}()
		e.Await(ready.Load)
		require.True(t, ready.Load(), "after %v", after)
	}
}

// Waiting and notifying allocate nothing, with many processors too.
func TestNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	Reserve(1)
	defer Release(1)
	var e Event
	var turn atomic.Int64
	done := make(chan struct{})
	// Both goroutines make their sleep timers first.
	PrepareSleep()
	var started atomic.Bool
	go func() {
		defer close(done)
		PrepareSleep()
		started.Store(true)
		for i := int64(1); i <= 2000; i += 2 {
			e.Await(func() bool { return turn.Load() == i })
			turn.Add(1)
			e.Notify()
		}
	}()
	for !started.Load() {
		runtime.Gosched()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for i := int64(0); i < 2000; i += 2 {
		turn.Add(1)
		e.Notify()
		e.Await(func() bool { return turn.Load() == i+2 })
	}
	runtime.ReadMemStats(&ms1)
	<-done
	require.Zero(t, ms1.Mallocs-ms0.Mallocs)
}

// TestReserveGrowsLinearly: goroutines reserved two at a time, as each new CPU stream reserves
// its own, make threads and timer room in proportion to what is reserved in all, not to its
// square (1000 sessions took 22 s to set up, 2000 took 111 s), and every goroutine reserved
// still has a thread of its own.
func TestReserveGrowsLinearly(t *testing.T) {
	const n = 400
	procs := runtime.GOMAXPROCS(0)
	reserved.Lock()
	threads0, timers0 := reserved.madeThreads, reserved.madeTimers
	reserved.Unlock()
	for range n {
		Reserve(2)
	}
	defer Release(2 * n)
	reserved.Lock()
	threads, timers := reserved.madeThreads-threads0, reserved.madeTimers-timers0
	held, room, live := reserved.threads, reserved.timers, reserved.live
	reserved.Unlock()
	require.GreaterOrEqual(t, held, live+procs+slack, "a thread for every reserved goroutine")
	require.GreaterOrEqual(t, threadCount(), held, "the runtime holds them")
	require.GreaterOrEqual(t, room, live+slack, "timer room for every reserved goroutine")
	require.LessOrEqual(t, held, live+procs+slack+spareThreads, "spare threads are bounded")
	// Steps a quarter larger: at most 5 times the final size in all, whatever came before.
	require.LessOrEqual(t, threads, 6*held, "goroutines locked to make threads, for %d reserved", live)
	require.LessOrEqual(t, timers, 6*procs*room, "timers made, for %d reserved", live)
}
