//go:build race

package engine

// raceEnabled: the race detector makes sync.Pool drop items at random, so heap-allocation
// counts are only asserted without it.
const raceEnabled = true
