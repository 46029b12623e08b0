//go:build !race

package park

const raceEnabled = false
