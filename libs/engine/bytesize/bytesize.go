// Package bytesize parses byte sizes written by people (141GiB, 80GB, 1.5TiB, 4096) and formats
// sizes with binary units for tables. Its functions are safe for concurrent use.
package bytesize

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// units maps each accepted unit, lower-cased, to its multiplier: decimal (kB, MB, GB, ...,
// powers of 1000, as disk and cloud vendors use) and binary (KiB, MiB, GiB, ..., powers of
// 1024, as memory is sized).
var units = map[string]int64{
	"":    1,
	"b":   1,
	"kb":  1e3,
	"mb":  1e6,
	"gb":  1e9,
	"tb":  1e12,
	"pb":  1e15,
	"eb":  1e18,
	"kib": 1 << 10,
	"mib": 1 << 20,
	"gib": 1 << 30,
	"tib": 1 << 40,
	"pib": 1 << 50,
	"eib": 1 << 60,
}

// SyntaxError reports a size that cannot be parsed; it says what is accepted. Its values are
// read-only once made and safe for concurrent use.
type SyntaxError struct {
	Input   string
	Problem string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("bad size %q: %s (write e.g. 141GiB, 80GB, 1.5TiB or a number of bytes)", e.Input, e.Problem)
}

// Parse reads a size: a non-negative decimal number, optionally with a fraction, and an
// optional unit (B, kB, MB, GB, TB, PB, EB: powers of 1000; KiB, MiB, GiB, TiB, PiB, EiB: powers
// of 1024; case-insensitive, with or without a space before the unit). A number of bytes (no
// unit, or B) must be whole: "1.5" is an error, not one byte. With a larger unit the size is
// rounded down to whole bytes (1.1KiB is 1126). Zero is zero bytes; what zero means to a flag
// is the caller's to say. Errors are *SyntaxError.
func Parse(s string) (int64, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, &SyntaxError{s, "empty size"}
	}
	i := 0
	for i < len(in) && (in[i] >= '0' && in[i] <= '9' || in[i] == '.') {
		i++
	}
	num, unit := in[:i], strings.ToLower(strings.TrimSpace(in[i:]))
	if num == "" {
		if strings.HasPrefix(in, "-") {
			return 0, &SyntaxError{s, "a size cannot be negative"}
		}
		return 0, &SyntaxError{s, "no number"}
	}
	mult, ok := units[unit]
	if !ok {
		written := strings.TrimSpace(in[i:])
		switch unit {
		case "k", "m", "g", "t", "p", "e":
			// Bare letters mean powers of 1024 to ulimit and docker but 1000 to others: refuse them.
			return 0, &SyntaxError{s, fmt.Sprintf("unit %q is ambiguous: write %sB (powers of 1000) or %siB (powers of 1024)",
				written, strings.ToUpper(unit), strings.ToUpper(unit))}
		}
		return 0, &SyntaxError{s, fmt.Sprintf("unknown unit %q", written)}
	}
	if strings.Count(num, ".") > 1 || num == "." {
		return 0, &SyntaxError{s, fmt.Sprintf("%q is not a number", num)}
	}
	// big.Rat keeps 1.5TiB and 0.1GB exact; the result is rounded down to whole bytes.
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, &SyntaxError{s, fmt.Sprintf("%q is not a number", num)}
	}
	if mult == 1 && !r.IsInt() {
		return 0, &SyntaxError{s, fmt.Sprintf("%s is not a whole number of bytes", num)}
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	n := new(big.Int).Quo(r.Num(), r.Denom())
	if !n.IsInt64() {
		return 0, &SyntaxError{s, fmt.Sprintf("larger than the largest size (%d bytes)", int64(math.MaxInt64))}
	}
	return n.Int64(), nil
}

// Format writes n bytes with binary units for people: 512 -> "512 B", 1536 -> "1.50 KiB",
// 80<<30 -> "80.00 GiB". Negative sizes keep their sign (margins can be negative).
func Format(n int64) string {
	if n < 0 {
		if n == math.MinInt64 {
			return "-8.00 EiB"
		}
		return "-" + Format(-n)
	}
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	const prefixes = "KMGTPE"
	v, exp := float64(n)/1024, 0
	for v >= 1024 && exp < len(prefixes)-1 {
		v /= 1024
		exp++
	}
	// Rounding may carry to 1024.00; show the next unit instead.
	if v >= 1023.995 && exp < len(prefixes)-1 {
		v /= 1024
		exp++
	}
	// Within 0.005 EiB of 2^63 rounding would print 8.00 EiB, a size larger than any int64 that
	// Parse refuses (float64 even rounds math.MaxInt64 up to 2^63); print those rounded down, so
	// that every Format reads back.
	if exp == len(prefixes)-1 && v >= 7.995 {
		v = min(math.Floor(v*100)/100, 7.99)
	}
	return fmt.Sprintf("%.2f %ciB", v, prefixes[exp])
}
