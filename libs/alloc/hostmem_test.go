package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseMemAvailable(t *testing.T) {
	n, ok := parseMemAvailable([]byte("MemTotal:       32768000 kB\nMemFree: 1 kB\nMemAvailable:   16384000 kB\n"))
	require.True(t, ok)
	require.Equal(t, int64(16384000)<<10, n)
	for _, bad := range []string{"", "MemAvailable: x kB", "MemAvailable: 5 MB", "MemAvailable: -5 kB", "MemAvailable: 0 kB",
		"MemAvailable: 99999999999999999 kB", "MemAvailable:5 kB extra"} {
		_, ok := parseMemAvailable([]byte(bad))
		require.False(t, ok, bad)
	}
	require.Positive(t, HostAvailableMemory())
}
