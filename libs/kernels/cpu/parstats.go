//go:build parstats

package cpu

import "carve.dev/libs/kernels/internal/par"

// ParStats and ResetParStats expose the worker pool's loop counts (build tag parstats only):
// a profiling aid for how many loops a run fans out, and where.
func ParStats(runs int) string { return par.Stats(runs) }

// ResetParStats forgets the counts.
func ResetParStats() { par.ResetStats() }
