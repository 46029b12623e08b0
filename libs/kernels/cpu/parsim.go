package cpu

import "carve.dev/libs/kernels/internal/par"

// ParSimNow and ParSimAdjust time benchmarks with the worker pool's simulation (see package
// par): with the build tag parsim, every loop runs on its caller and is accounted as if each of
// its participants had a core, ParSimNow is the process's CPU time and ParSimAdjust the
// simulated loops' time minus their measured, summed so far (nanoseconds both), so that a
// stretch's ParSimNow difference plus its ParSimAdjust difference estimates its time on that
// many cores. Without the tag, ParSimNow is the wall time and ParSimAdjust 0.
func ParSimNow() int64 { return par.SimNow() }

// ParSimAdjust: see ParSimNow.
func ParSimAdjust() int64 { return par.SimAdjust() }
