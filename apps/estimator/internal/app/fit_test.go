package app

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph/bundled"
	"carve.dev/libs/graph/rewrite"
)

// TestFitAgainstBruteForce plans every envelope batch=1..v of the bundled model and checks
// that fit finds the largest v whose weights plus arena fit, at and around the boundaries.
func TestFitAgainstBruteForce(t *testing.T) {
	const maxBatch = 24
	m, err := bundled.Load()
	require.NoError(t, err)
	m, _, err = rewrite.Fuse(m, rewrite.Options{}) // as fit does
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
	// --no-fuse: the exported graph's seq x seq tensors overflow before the search maximum
	stdout, stderr, code := run(t, "fit", "--no-fuse", "--format", "json", "--workers", "2", "--budget", "8000PiB", "--dim", "batch=1", "--dim", "seq=?")
	require.Equal(t, ExitOK, code, stderr)
	var r fitResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.Equal(t, "overflow", r.LimitedBy)
	require.Greater(t, *r.Largest, int64(1_000_000))
	require.Nil(t, r.Next.TotalBytes)
	require.Contains(t, r.Next.Problem, "too large to plan")
	stdout, _, code = run(t, "fit", "--no-fuse", "--workers", "2", "--budget", "8000PiB", "--dim", "batch=1", "--dim", "seq=?")
	require.Equal(t, ExitOK, code)
	require.Contains(t, stdout, "limited by size: at seq=")
}
