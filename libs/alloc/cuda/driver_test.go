//go:build cuda

package cuda

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// These run on any host (they need no GPU): a cuda build must start, and fail to open a device
// with a typed error, where the driver is missing or too old.

func TestLoadDriverFromFailsTyped(t *testing.T) {
	for _, tc := range []struct {
		name, lib string
		symbol    string // "" when the library itself must fail to load
	}{
		{"no such library", "libcarve-no-such-driver.so.1", ""},
		// libc loads but has none of the driver's entry points: a driver too old for the table.
		{"library without the entry points", "libc.so.6", "cuInit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := loadDriverFrom(tc.lib)
			var nd *NoDriverError
			require.True(t, errors.As(err, &nd), "loadDriverFrom(%q) = %v, want a *NoDriverError", tc.lib, err)
			require.Equal(t, tc.lib, nd.Library)
			require.Equal(t, tc.symbol, nd.Symbol)
			require.Equal(t, tc.symbol == "", nd.Reason != "", "a loader message exactly when the library did not load: %+v", nd)
			require.GreaterOrEqual(t, nd.CUDAVersion, 12000)
		})
	}
}

// Without a driver, DeviceCount, Open and Probe return the *NoDriverError; this is what a cuda
// build reports on a CPU-only host. Skipped where a driver is installed (the GPU host).
func TestNoDriverOnThisHost(t *testing.T) {
	if loadDriver() == nil {
		t.Skip("this host has an NVIDIA driver")
	}
	_, errCount := DeviceCount()
	_, errOpen := Open(0)
	_, errProbe := Probe()
	for _, err := range []error{errCount, errOpen, errProbe} {
		var nd *NoDriverError
		require.True(t, errors.As(err, &nd), "got %v, want a *NoDriverError", err)
		require.Equal(t, "libcuda.so.1", nd.Library)
		require.Empty(t, nd.Symbol)
		require.Contains(t, err.Error(), "no NVIDIA driver found: libcuda.so.1 could not be loaded")
	}
}
