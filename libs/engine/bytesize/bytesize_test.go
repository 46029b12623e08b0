package bytesize

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"4096", 4096},
		{"4096B", 4096},
		{"141GiB", 141 << 30},
		{"141 GiB", 141 << 30},
		{"141gib", 141 << 30},
		{"80GB", 80_000_000_000},
		{"1.5TiB", 3 << 39},
		{"0.1GB", 100_000_000},
		{"1.1KiB", 1126}, // 1126.4 rounded down
		{"1kB", 1000},
		{"2MiB", 2 << 20},
		{"7PiB", 7 << 50},
		{"7EiB", 7 << 60},
		{"9EB", 9e18},
		{" 12 ", 12},
		{".5KiB", 512},
		{"9223372036854775807", math.MaxInt64},
		{"1073741824", 1 << 30},
		{"512MiB", 512 << 20},
		{"1.5GiB", 3 << 29},
		{"4GB", 4e9},
		{" 2 gib ", 2 << 30},
		{"100B", 100},
		{"2.0", 2}, // a whole number of bytes written with a fraction
		{"0.5KiB", 512},
		{"7TiB", 7 << 40},
	} {
		got, err := Parse(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"", "empty size"},
		{"GiB", "no number"},
		{"-1GiB", "cannot be negative"},
		{"10G", `unit "G" is ambiguous: write GB (powers of 1000) or GiB (powers of 1024)`},
		{"10 furlongs", `unknown unit "furlongs"`},
		{"1.2.3GB", "not a number"},
		{".GB", "not a number"},
		{"9223372036854775808", "larger than the largest size"},
		{"8EiB", "larger than the largest size"},
		{"3 bits", `unknown unit "bits"`},
		{"16000PiB", "larger than the largest size"},
		{"99999999TiB", "larger than the largest size"},
		{"-1", "cannot be negative"},
		{".", "not a number"},
		{"1e9", `unknown unit "e9"`},
		{"12 parsecs", `unknown unit "parsecs"`},
		// Bare k, M, G, T are refused, not read as powers of 1024 (as ulimit would).
		{"64k", `unit "k" is ambiguous: write KB (powers of 1000) or KiB (powers of 1024)`},
		{".5k", `unit "k" is ambiguous`},
		{"1..5k", `unit "k" is ambiguous`},
		{"2 t", `unit "t" is ambiguous`},
		// A fraction of a byte is an error, not rounded down to a size nobody meant.
		{"1.5", "1.5 is not a whole number of bytes"},
		{"0.5B", "0.5 is not a whole number of bytes"},
		{" ", "empty size"},
	} {
		_, err := Parse(tc.in)
		require.Error(t, err, tc.in)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), tc.in)
		require.Contains(t, err.Error(), tc.msg, tc.in)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.00 KiB"},
		{1536, "1.50 KiB"},
		{80 << 30, "80.00 GiB"},
		{1<<20 - 1, "1.00 MiB"},
		{-2048, "-2.00 KiB"},
		{math.MaxInt64, "7.99 EiB"}, // rounded down: 8.00 EiB would not read back
		{9217700000000000000, "7.99 EiB"},
		{math.MinInt64, "-8.00 EiB"},
	} {
		require.Equal(t, tc.want, Format(tc.in), "%d", tc.in)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"141GiB", "80GB", "1.5TiB", "0", "-1", "1e9", "10G", ".5KiB", "99999999999999999999PB", "64k", ".5k", "1..5k", " 2 gib "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): error %v is not a *SyntaxError", s, err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("Parse(%q) = %d, negative", s, n)
		}
		// A plain byte count formats and reparses to itself.
		if back, err := Parse(Format(n)); err != nil || (n < 1024 && back != n) {
			t.Fatalf("Parse(Format(%d)) = %d, %v", n, back, err)
		}
	})
}
