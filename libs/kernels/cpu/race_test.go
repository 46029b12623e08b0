//go:build race

package cpu

// raceEnabled: under the race detector sync.Pool drops items at random, so allocation counts
// are not meaningful.
const raceEnabled = true
