package graph_test

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// TestCheckedMul compares CheckedMul with exact arithmetic on the edges of int64 and on random
// operands of every magnitude and sign.
func TestCheckedMul(t *testing.T) {
	check := func(a, b int64) {
		t.Helper()
		exact := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		got, ok := graph.CheckedMul(a, b)
		if !exact.IsInt64() {
			require.False(t, ok, "%d * %d overflows", a, b)
			require.Zero(t, got)
			return
		}
		require.True(t, ok, "%d * %d fits", a, b)
		require.Equal(t, exact.Int64(), got, "%d * %d", a, b)
	}
	edges := []int64{0, 1, -1, 2, -2, 3, 1 << 31, -(1 << 31), 1 << 32, 3037000499, 3037000500, -3037000500,
		math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, math.MaxInt64 / 2, math.MinInt64 / 2}
	for _, a := range edges {
		for _, b := range edges {
			check(a, b)
		}
	}
	seed := uint64(rand.Int64())
	rng := rand.New(rand.NewPCG(seed, 11))
	t.Logf("seed %d", seed)
	for range 100000 {
		// Random magnitudes and signs: products land on both sides of the int64 boundary.
		a := int64(rng.Uint64() >> rng.IntN(64))
		b := int64(rng.Uint64() >> rng.IntN(64))
		if rng.IntN(2) == 0 {
			b = -b
		}
		check(a, b)
	}
}

// TestCheckedAdd compares CheckedAdd with exact arithmetic on the edges of int64 and on random
// operands of every magnitude and sign.
func TestCheckedAdd(t *testing.T) {
	check := func(a, b int64) {
		t.Helper()
		exact := new(big.Int).Add(big.NewInt(a), big.NewInt(b))
		got, ok := graph.CheckedAdd(a, b)
		if !exact.IsInt64() {
			require.False(t, ok, "%d + %d overflows", a, b)
			require.Zero(t, got)
			return
		}
		require.True(t, ok, "%d + %d fits", a, b)
		require.Equal(t, exact.Int64(), got, "%d + %d", a, b)
	}
	edges := []int64{0, 1, -1, 2, -2, math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1,
		math.MaxInt64 / 2, math.MaxInt64/2 + 1, math.MinInt64 / 2, math.MinInt64/2 - 1}
	for _, a := range edges {
		for _, b := range edges {
			check(a, b)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(rand.Int64()), 12))
	for range 100000 {
		a, b := int64(rng.Uint64()>>rng.IntN(64)), int64(rng.Uint64()>>rng.IntN(64))
		if rng.IntN(2) == 0 {
			a = -a
		}
		if rng.IntN(2) == 0 {
			b = -b
		}
		check(a, b)
	}
}
