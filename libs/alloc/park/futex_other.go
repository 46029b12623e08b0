//go:build !linux

package park

import (
	"sync/atomic"
	"time"
)

// Elsewhere than Linux there is no portable futex: wait sleeps in short steps until the word
// changes or timeout passes. It is correct but not allocation-free (time.Sleep's timers), and it
// wakes up to a millisecond late.
func wait(addr *atomic.Uint32, val uint32, timeout time.Duration) {
	step := 20 * time.Microsecond
	for waited := time.Duration(0); addr.Load() == val && (timeout <= 0 || waited < timeout); waited += step {
		time.Sleep(step)
		step = min(2*step, time.Millisecond)
	}
}

func wake(*atomic.Uint32, int) {}
