package planner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

var realModels = []string{"qwen2_1p5b_b1_s2048.csv", "gpt2_b3_s16.csv"}

func readReal(tb testing.TB, name string) planner.Problem {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "real", name))
	require.NoError(tb, err)
	defer f.Close()
	p, err := planner.ReadCSV(f)
	require.NoError(tb, err)
	return p
}

// TestRealModels: the lifetimes of real model runs are planned at their lower bound.
func TestRealModels(t *testing.T) {
	for _, name := range realModels {
		p := readReal(t, name)
		plan, err := planner.Solve(context.Background(), p, planner.Options{StepLimit: 100_000, TimeLimit: time.Minute})
		require.NoError(t, err, name)
		require.NoError(t, planner.Verify(p, plan), name)
		require.True(t, plan.Optimal, name)
		require.Equal(t, planner.LowerBound(p), plan.Peak, name)
	}
}

// BenchmarkRealModels times Solve (default options) on real model lifetimes; the target is
// within 1% of the lower bound in under 50 ms.
func BenchmarkRealModels(b *testing.B) {
	for _, name := range realModels {
		p := readReal(b, name)
		b.Run(name, func(b *testing.B) {
			var plan planner.Plan
			for b.Loop() {
				var err error
				plan, err = planner.Solve(context.Background(), p, planner.Options{})
				require.NoError(b, err)
			}
			b.ReportMetric(100*float64(plan.Peak-plan.LowerBound)/float64(plan.LowerBound), "%over-LB")
			b.ReportMetric(float64(len(p.Buffers)), "buffers")
		})
	}
}
