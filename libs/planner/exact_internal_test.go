package planner

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPortfolioReuse: a search on a reused searcher (left by another capacity's search, paused
// at any point and then dropped) behaves exactly as on a fresh one.
func TestPortfolioReuse(t *testing.T) {
	f, err := os.Open("testdata/minimalloc/D.1048576.csv")
	require.NoError(t, err)
	p, err := ReadCSV(f)
	f.Close()
	require.NoError(t, err)
	sec := sweepSections(p.Buffers, func(i int) bool { return p.Buffers[i].Size > 0 }, true)
	ctx := context.Background()
	const capacity, budget = 1100000, 3000

	fresh := newPortfolio(p, sec)
	defer fresh.close()
	want := fresh.decide(ctx, capacity, budget)
	require.Equal(t, found, want)
	for _, before := range []int64{1200000, 1050000, 1000000} {
		for _, spent := range []int64{100, 1000, 5000} {
			pf := newPortfolio(p, sec)
			pf.decide(ctx, before, spent)
			pf.drop(before)
			steps := pf.steps
			require.Equal(t, want, pf.decide(ctx, capacity, budget), "after %d steps at %d", spent, before)
			require.Equal(t, fresh.steps, pf.steps-steps, "after %d steps at %d", spent, before)
			require.Equal(t, fresh.result, pf.result, "after %d steps at %d", spent, before)
			pf.close()
		}
	}
}
