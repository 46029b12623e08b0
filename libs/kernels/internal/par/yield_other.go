//go:build !linux

package par

import "runtime"

// osYield yields the processor; elsewhere than Linux there is no portable thread yield.
func osYield() { runtime.Gosched() }
