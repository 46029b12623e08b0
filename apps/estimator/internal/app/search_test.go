package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/estimator/internal/bundled"
	"carve.dev/libs/engine"
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
		v, ok, err := largest(context.Background(), lo, hi, func(x int64) (bool, error) {
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
	_, _, err := largest(context.Background(), 1, 100, func(x int64) (bool, error) {
		if x > 4 {
			return false, boom
		}
		return true, nil
	}, nil)
	require.ErrorIs(t, err, boom)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = largest(ctx, 1, 100, func(int64) (bool, error) { return true, nil }, nil)
	require.ErrorIs(t, err, context.Canceled)
}

// TestFitAgainstBruteForce plans every envelope batch=1..v of the bundled model and checks
// that fit finds the largest v whose weights plus arena fit, at and around the boundaries.
func TestFitAgainstBruteForce(t *testing.T) {
	const maxBatch = 24
	m, err := bundled.Load()
	require.NoError(t, err)
	totals := make([]int64, maxBatch+1) // totals[v]: batch over 1..v, seq over 1..16
	for v := int64(1); v <= maxBatch; v++ {
		ep, err := engine.PlanEnvelope(context.Background(), m,
			engine.Envelope{"batch": {Lo: 1, Hi: v}, "seq": {Lo: 1, Hi: 16}}, engine.Options{Workers: 2})
		require.NoError(t, err)
		totals[v] = ep.TotalBytes()
		require.GreaterOrEqual(t, totals[v], totals[v-1], "a wider envelope never needs less")
	}
	brute := func(budget int64) int64 {
		best := int64(0)
		for v := int64(1); v <= maxBatch && totals[v] <= budget; v++ {
			best = v
		}
		return best
	}
	for _, budget := range []int64{totals[1] - 1, totals[1], totals[2] - 1, totals[7], totals[13] + 1, totals[maxBatch-1], totals[maxBatch], 1 << 40} {
		stdout, stderr, code := run(t, "fit", "--format", "json", "--workers", "2", "--budget", strconv.FormatInt(budget, 10),
			"--dim", "batch=?:"+strconv.Itoa(maxBatch), "--dim", "seq=1:16")
		want := brute(budget)
		var r fitResult
		require.NoError(t, json.Unmarshal([]byte(stdout), &r), stderr)
		if want == 0 {
			require.Equal(t, ExitDoesNotFit, code)
			require.False(t, r.Fits)
			require.Nil(t, r.Largest)
			require.Equal(t, totals[1], *r.Next.TotalBytes)
			continue
		}
		require.Equal(t, ExitOK, code, stderr)
		require.Equal(t, want, *r.Largest, "budget %d", budget)
		require.Equal(t, totals[want], *r.At.TotalBytes)
		if want < maxBatch {
			require.Equal(t, "budget", r.LimitedBy)
			require.Equal(t, totals[want+1], *r.Next.TotalBytes)
			require.Greater(t, *r.Next.TotalBytes, budget)
			require.Equal(t, want+1, r.Next.WorstBinding["batch"])
		} else {
			require.Equal(t, "search_max", r.LimitedBy)
			require.Nil(t, r.Next)
		}
	}
}

// TestFitStopsAtTheModelsLimit: BERT admits seq up to its position table; fit reports that
// limit rather than failing.
func TestFitStopsAtTheModelsLimit(t *testing.T) {
	bert := fixture(t, "bert")
	stdout, stderr, code := run(t, "fit", "--model", bert, "--format", "json", "--workers", "2", "--budget", "1TiB", "--dim", "batch=1", "--dim", "seq=?")
	require.Equal(t, ExitOK, code, stderr)
	var r fitResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.Equal(t, "model", r.LimitedBy)
	require.Equal(t, int64(64), *r.Largest)
	require.Nil(t, r.Next.TotalBytes)
	require.Contains(t, r.Next.Problem, "the model does not admit batch=1 seq=65")
}

// TestFitOverflowIsNotAFit: a search without a maximum runs into sizes too large to plan,
// which simply do not fit.
func TestFitOverflowIsNotAFit(t *testing.T) {
	stdout, stderr, code := run(t, "fit", "--format", "json", "--workers", "2", "--budget", "8000PiB", "--dim", "batch=1", "--dim", "seq=?")
	require.Equal(t, ExitOK, code, stderr)
	var r fitResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.Equal(t, "overflow", r.LimitedBy)
	require.Greater(t, *r.Largest, int64(1_000_000))
	require.Nil(t, r.Next.TotalBytes)
	require.Contains(t, r.Next.Problem, "too large to plan")
	stdout, _, code = run(t, "fit", "--workers", "2", "--budget", "8000PiB", "--dim", "batch=1", "--dim", "seq=?")
	require.Equal(t, ExitOK, code)
	require.Contains(t, stdout, "limited by size: at seq=")
}
