package park

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpinLock: goroutines incrementing a counter under the lock lose no increment, and
// taking and letting go of the lock allocates nothing.
func TestSpinLock(t *testing.T) {
	var l SpinLock
	n := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				l.Lock()
				n++
				l.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 8000, n)
	//lint:ignore SA2001 the empty critical section is what is measured
	require.Zero(t, testing.AllocsPerRun(100, func() { l.Lock(); l.Unlock() }))
}
