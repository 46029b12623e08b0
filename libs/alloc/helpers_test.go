package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// newCPU returns a CPU device with mem bytes, closed when the test ends.
func newCPU(t testing.TB, mem int64) *CPUDevice {
	t.Helper()
	d, err := NewCPU(CPUConfig{Memory: mem})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

func newStream(t testing.TB, d Device) Stream {
	t.Helper()
	s, err := d.NewStream()
	require.NoError(t, err)
	return s
}

// gate is a func that blocks the stream it runs on until the test opens it, so that tests order
// device work without sleeping.
type gate chan struct{}

func newGate() gate       { return make(gate) }
func (g gate) wait()      { <-g }
func (g gate) open()      { close(g) }
func (g gate) fn() func() { return g.wait }

// fill writes v to every byte of b.
func fill(b []byte, v byte) {
	for i := range b {
		b[i] = v
	}
}

// allAre reports whether every byte of b is v.
func allAre(b []byte, v byte) bool {
	for _, x := range b {
		if x != v {
			return false
		}
	}
	return true
}

func launch(t testing.TB, d *CPUDevice, s Stream, fn func()) {
	t.Helper()
	require.NoError(t, d.Launch(s, fn))
}
