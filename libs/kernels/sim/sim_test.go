package sim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
)

// TestNewBackendDevice: NewBackend takes the memory's own simulated device, or a wrapper around
// it that keeps its copies and launches, and refuses any other device; its Close leaves the
// device open (Open's closes the device it made).
func TestNewBackendDevice(t *testing.T) {
	dev, mem, err := alloc.NewSim(alloc.SimConfig{Memory: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { dev.Close() })
	other, _, err := alloc.NewSim(alloc.SimConfig{Memory: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	cpu, err := alloc.NewCPU(alloc.CPUConfig{Memory: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { cpu.Close() })

	wrapped, _ := alloc.InjectFaults(dev, alloc.FaultConfig{})
	for _, d := range []alloc.Device{dev, wrapped} {
		b, err := NewBackend(d, mem, 1)
		require.NoError(t, err)
		require.Same(t, d, b.Device())
		require.NoError(t, b.Close())
		_, err = dev.NewStream()
		require.NoError(t, err, "the device is still open")
	}
	for _, d := range []alloc.Device{other, cpu, struct{ alloc.Device }{dev}} {
		_, err := NewBackend(d, mem, 1)
		require.Error(t, err)
	}
}
