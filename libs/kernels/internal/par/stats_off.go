//go:build !parstats

package par

import "time"

// statsOn reports whether loops are counted (build tag parstats, for profiling fan-outs).
const statsOn = false

func record(n, grain, extra, joined, mine int, start time.Time) {}
