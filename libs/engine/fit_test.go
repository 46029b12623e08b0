package engine

import (
	"context"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLargestAgainstBruteForce checks the doubling-and-bisection search on random thresholds.
func TestLargestAgainstBruteForce(t *testing.T) {
	seed := uint64(20240607)
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := 0; i < 2000; i++ {
		lo := int64(rng.IntN(5))
		hi := lo + int64(rng.IntN(300))
		if i%10 == 0 {
			hi = lo + rng.Int64N(1<<40)
		}
		threshold := lo - 1 + rng.Int64N(hi-lo+2) // the largest fitting value; lo-1: none
		probes := 0
		var lastGood, lastBad int64 = -1, -1
		v, ok, err := Largest(context.Background(), lo, hi, func(x int64) (bool, error) {
			require.True(t, x >= lo && x <= hi, "seed %d: probe %d outside [%d, %d]", seed, x, lo, hi)
			probes++
			return x <= threshold, nil
		}, func(good, bad int64) { lastGood, lastBad = good, bad })
		require.NoError(t, err)
		if threshold < lo {
			require.False(t, ok, "seed %d case %d", seed, i)
			require.Equal(t, 1, probes)
			continue
		}
		require.True(t, ok)
		require.Equal(t, threshold, v, "seed %d case %d: lo %d hi %d", seed, i, lo, hi)
		require.Equal(t, v, lastGood)
		if v < hi {
			require.Equal(t, v+1, lastBad, "the bracket closes on v+1")
		}
		span := uint64(v-lo) + 2
		require.LessOrEqual(t, probes, 2*bits.Len64(span)+2, "seed %d case %d: %d probes for %d..%d", seed, i, probes, lo, v)
	}
}

func TestLargestStopsOnErrorsAndCancel(t *testing.T) {
	boom := fmt.Errorf("boom")
	_, _, err := Largest(context.Background(), 1, 100, func(x int64) (bool, error) {
		if x > 4 {
			return false, boom
		}
		return true, nil
	}, nil)
	require.ErrorIs(t, err, boom)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = Largest(ctx, 1, 100, func(int64) (bool, error) { return true, nil }, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// TestLargestFittingAgainstBruteForce plans every envelope batch=1..v of the tiny GPT-2 and
// checks LargestFitting's answer and its progress reports at and around the boundaries.
func TestLargestFittingAgainstBruteForce(t *testing.T) {
	const maxBatch = 12
	m := loadFixture(t, "gpt2")
	opts := Options{Workers: 2}
	arenas := make([]int64, maxBatch+1) // arenas[v]: batch over 1..v, seq over 1..16
	for v := int64(1); v <= maxBatch; v++ {
		ep, err := PlanEnvelope(context.Background(), m, Envelope{"batch": {Lo: 1, Hi: v}, "seq": {Lo: 1, Hi: 16}}, opts)
		require.NoError(t, err)
		arenas[v] = ep.ArenaBytes
		require.GreaterOrEqual(t, arenas[v], arenas[v-1], "a wider envelope never needs less")
	}
	for _, batch := range []Range{{Lo: 1, Hi: maxBatch}, {Lo: 1, Open: true, Hi: maxBatch}} {
		for _, budget := range []int64{arenas[1] - 1, arenas[1], arenas[2], arenas[5] - 1, arenas[9], arenas[maxBatch], 1 << 40} {
			want := int64(-1)
			for v := int64(1); v <= maxBatch && arenas[v] <= budget; v++ {
				want = v
			}
			var reports [][2]int64
			got, err := LargestFitting(context.Background(), m, Envelope{"batch": batch, "seq": {Lo: 1, Hi: 16}}, "batch",
				func(p *EnvelopePlan) bool { return p.ArenaBytes <= budget }, opts,
				func(good, bad int64) { reports = append(reports, [2]int64{good, bad}) })
			require.NoError(t, err)
			require.Equal(t, want, got, "batch %v, budget %d", batch, budget)
			if want < 0 {
				require.Empty(t, reports, "no bracket when even the lowest value does not fit")
				continue
			}
			require.Equal(t, [2]int64{1, -1}, reports[0], "bad is -1 until known")
			last := reports[len(reports)-1]
			require.Equal(t, want, last[0])
			if want < maxBatch {
				require.Equal(t, want+1, last[1])
			}
		}
	}
}

func TestLargestFittingErrors(t *testing.T) {
	m := loadFixture(t, "gpt2")
	env := Envelope{"batch": {Lo: 1, Hi: 4}, "seq": {Lo: 1, Hi: 16}}
	always := func(*EnvelopePlan) bool { return true }
	_, err := LargestFitting(context.Background(), m, env, "tokens", always, Options{Workers: 2}, nil)
	var ee *EnvelopeError
	require.ErrorAs(t, err, &ee)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, err := LargestFitting(ctx, m, env, "batch", always, Options{Workers: 2}, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, int64(-1), v)
}
