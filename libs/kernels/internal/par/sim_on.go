//go:build parsim && linux

package par

import (
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// With the build tag parsim (Linux), For runs every loop on the calling goroutine, chunk by
// chunk, and accounts for it as if slots participants (however many helpers the pool has) had
// taken its chunks in turn, each the next chunk as soon as it is free: the loop's simulated
// time is the last participant's finish, plus simLoopCost for waking the helpers. Times are
// the process's CPU time (SimNow), so that other work on a shared machine does not count, and
// SimAdjust is the simulated time minus the time the loops took, summed: a benchmark's time
// by SimNow plus the change of SimAdjust estimates its wall time on as many cores as its loops
// ask for, on a machine with fewer (run it with -cpu 1, so that nothing else of the process
// takes CPU time). A profiling aid: it ignores the caches and the memory bandwidth the
// participants would share.
const simOn = true

// simLoopCost is the time a loop that fans out takes beyond its chunks' (waking helpers,
// joining them).
const simLoopCost = 3 * time.Microsecond

var simAdjust atomic.Int64

// SimAdjust is the simulated loops' time minus their measured time so far, in nanoseconds.
func SimAdjust() int64 { return simAdjust.Load() }

// SimNow is the process's CPU time, in nanoseconds.
func SimNow() int64 {
	var ts syscall.Timespec
	const clockProcessCPUTime = 2 // CLOCK_PROCESS_CPUTIME_ID
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func simFor(n, grain, slots int, body Body) {
	chunks := (n + grain - 1) / grain
	p := min(slots, chunks, 256)
	if p <= 1 {
		body.Do(0, 0, n)
		return
	}
	var finish [256]int64
	start := SimNow()
	for c := range chunks {
		s := 0
		for i := 1; i < p; i++ {
			if finish[i] < finish[s] {
				s = i
			}
		}
		t0 := SimNow()
		body.Do(s, c*grain, min((c+1)*grain, n))
		finish[s] += SimNow() - t0
	}
	took := SimNow() - start
	var span int64
	for _, f := range finish[:p] {
		span = max(span, f)
	}
	simAdjust.Add(span + int64(simLoopCost) - took)
}
