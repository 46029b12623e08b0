//go:build !(parsim && linux)

package par

import "time"

// simOn reports whether loops are simulated on the caller (build tag parsim, see sim_on.go).
const simOn = false

func simFor(n, grain, slots int, body Body) {}

// SimAdjust is 0 without the build tag parsim.
func SimAdjust() int64 { return 0 }

// SimNow is the wall time, in nanoseconds since the package started (the process's CPU time
// with the build tag parsim).
func SimNow() int64 { return int64(time.Since(epoch)) }
