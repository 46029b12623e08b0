//go:build race

package cpu

// raceEnabled: the race detector allocates as it instruments, so allocation counts
// are not meaningful.
const raceEnabled = true
