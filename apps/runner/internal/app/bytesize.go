package app

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// byteUnits are the suffixes ParseBytes knows, by lower-case name: SI units are powers of
// 1000, IEC units and the bare letters (as in `ulimit` and `docker --memory`) powers of 1024.
var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// ParseBytes parses a byte count: "1073741824", "512MiB", "1.5GiB", "4GB", "64k". Fractions
// are allowed with a unit and rounded down to whole bytes; the result is at most MaxInt64.
func ParseBytes(s string) (int64, error) {
	in := strings.TrimSpace(s)
	i := len(in)
	for i > 0 && (in[i-1] < '0' || in[i-1] > '9') && in[i-1] != '.' {
		i--
	}
	num, unit := strings.TrimSpace(in[:i]), strings.ToLower(strings.TrimSpace(in[i:]))
	mult, ok := byteUnits[unit]
	bad := func(why string) (int64, error) {
		return 0, fmt.Errorf("bad byte count %q: %s (want e.g. 1073741824, 512MiB, 1.5GiB or 4GB)", s, why)
	}
	if !ok {
		return bad(fmt.Sprintf("unknown unit %q", in[i:]))
	}
	if num == "" || num == "." || strings.Count(num, ".") > 1 ||
		strings.TrimLeft(num, "0123456789.") != "" {
		return bad("not a non-negative decimal number")
	}
	// Exact arithmetic: a decimal fraction times the unit, rounded down, checked against int64.
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return bad("not a number")
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	q := new(big.Int).Quo(r.Num(), r.Denom())
	if !q.IsInt64() || q.Int64() > math.MaxInt64 {
		return bad("too large")
	}
	return q.Int64(), nil
}
