package app

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1073741824", 1 << 30}, {"512MiB", 512 << 20}, {"1.5GiB", 3 << 29}, {"4GB", 4e9},
		{"64k", 64 << 10}, {" 2 gib ", 2 << 30}, {"100B", 100}, {"1.5", 1}, {"0.5KiB", 512},
		{"7TiB", 7 << 40}, {"9223372036854775807", 1<<63 - 1}, {".5k", 512},
	} {
		got, err := ParseBytes(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, in := range []string{"", "GiB", "-1", "1.2.3GiB", "12 parsecs", "1e9", "9223372036854775808", "99999999TiB", ".", "1..5k"} {
		_, err := ParseBytes(in)
		require.Error(t, err, in)
		require.Contains(t, err.Error(), "bad byte count")
	}
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"0", "512MiB", "1.5GiB", "4GB", "64k", "-1", "1e9", ".5k"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseBytes(s)
		if err == nil {
			require.GreaterOrEqual(t, n, int64(0))
		}
	})
}
