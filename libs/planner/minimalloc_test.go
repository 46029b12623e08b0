package planner_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
	"carve.dev/libs/planner/internal/benchset"
)

func readInstance(tb testing.TB, in benchset.Instance) planner.Problem {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", "minimalloc", in.File))
	require.NoError(tb, err)
	defer f.Close()
	p, err := planner.ReadCSV(f)
	require.NoError(tb, err)
	require.Len(tb, p.Buffers, in.Buffers)
	return p
}

// TestMiniMallocHeuristics runs every heuristic on every instance: fast, and every plan verifies.
func TestMiniMallocHeuristics(t *testing.T) {
	for _, in := range benchset.Instances {
		p := readInstance(t, in)
		require.Equal(t, in.LowerBound, planner.LowerBound(p), in.Name)
		for _, alg := range planner.Algorithms()[1:] {
			plan, err := planner.Solve(context.Background(), p, planner.Options{Algorithm: alg})
			require.NoError(t, err, "%s %s", in.Name, alg)
			require.NoError(t, planner.Verify(p, plan), "%s %s", in.Name, alg)
			require.GreaterOrEqual(t, plan.Peak, in.BestKnown, "%s %s", in.Name, alg)
		}
	}
}

// TestMiniMallocQuick solves the quick instances at their best known peak with the exact search.
// The step limit (over ten times what the search needs) keeps the test independent of machine speed.
func TestMiniMallocQuick(t *testing.T) {
	for _, in := range benchset.Instances {
		if !in.Quick {
			continue
		}
		t.Run(in.Name, func(t *testing.T) {
			p := readInstance(t, in)
			p.Capacity = in.BestKnown
			plan, err := planner.Solve(context.Background(), p, planner.Options{StepLimit: 300_000, TimeLimit: time.Minute})
			require.NoError(t, err)
			require.NoError(t, planner.Verify(p, plan))
			require.LessOrEqual(t, plan.Peak, in.BestKnown)
			require.Equal(t, in.Proven && in.BestKnown == in.LowerBound, plan.Optimal)
		})
	}
}

// BenchmarkMiniMalloc times the exact search reaching each instance's best known peak (solving
// with that capacity). Compare with benchset's MiniMalloc seconds, or run cmd/plannerbench for
// the whole table.
func BenchmarkMiniMalloc(b *testing.B) {
	for _, in := range benchset.Instances {
		b.Run(in.Name, func(b *testing.B) {
			p := readInstance(b, in)
			p.Capacity = in.BestKnown
			var plan planner.Plan
			for b.Loop() {
				var err error
				plan, err = planner.Solve(context.Background(), p, planner.Options{TimeLimit: time.Minute})
				require.NoError(b, err)
			}
			require.NoError(b, planner.Verify(p, plan))
			b.ReportMetric(float64(plan.Peak), "peak")
			b.ReportMetric(float64(plan.Steps), "steps")
			b.ReportMetric(in.MiniMalloc, "minimalloc-s")
		})
	}
}

// BenchmarkHeuristics times the best-of-heuristics on the largest instance.
func BenchmarkHeuristics(b *testing.B) {
	p := readInstance(b, benchset.Instances[len(benchset.Instances)-1])
	for b.Loop() {
		_, err := planner.Solve(context.Background(), p, planner.Options{Algorithm: planner.Best})
		require.NoError(b, err)
	}
}

// TestMiniMallocDeterministic: minimising under a step limit gives the same plan every time,
// though the portfolio reuses searchers across capacities in between.
func TestMiniMallocDeterministic(t *testing.T) {
	p := readInstance(t, benchset.Instances[3]) // D: the peak is not settled, so every probe kind runs
	var first planner.Plan
	for k := range 2 {
		plan, err := planner.Solve(context.Background(), p, planner.Options{StepLimit: 15_000, TimeLimit: time.Minute})
		require.NoError(t, err)
		require.NoError(t, planner.Verify(p, plan))
		require.False(t, plan.Optimal)
		require.LessOrEqual(t, plan.Steps, int64(15_000+1000), "the step limit holds, give or take a node")
		if k == 0 {
			first = plan
			continue
		}
		require.Equal(t, first.Offsets, plan.Offsets)
		require.Equal(t, first.Steps, plan.Steps)
	}
}

// TestMiniMallocRecordSolutions checks the solutions in testdata/minimalloc/solutions, whose
// peaks are below the best known ones of the README: the planner's Verify, and a plain pairwise
// check written here, both accept them.
func TestMiniMallocRecordSolutions(t *testing.T) {
	for _, tc := range []struct {
		file string
		peak int64
	}{{"D.1025024.csv", 1025024}, {"J.1029120.csv", 1029120}} {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "minimalloc", "solutions", tc.file))
			require.NoError(t, err)
			p, err := planner.ReadCSV(bytes.NewReader(raw))
			require.NoError(t, err)
			rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
			require.NoError(t, err)
			require.Equal(t, "offset", rows[0][4])
			plan := planner.Plan{Peak: tc.peak}
			for _, row := range rows[1:] {
				off, err := strconv.ParseInt(row[4], 10, 64)
				require.NoError(t, err)
				plan.Offsets = append(plan.Offsets, off)
			}
			p.Capacity = tc.peak
			require.NoError(t, planner.Verify(p, plan))
			for i, a := range p.Buffers {
				require.LessOrEqual(t, plan.Offsets[i]+a.Size, tc.peak)
				for j := i + 1; j < len(p.Buffers); j++ {
					b := p.Buffers[j]
					inTime := a.Start < b.End && b.Start < a.End
					inSpace := plan.Offsets[i] < plan.Offsets[j]+b.Size && plan.Offsets[j] < plan.Offsets[i]+a.Size
					require.False(t, inTime && inSpace, "%s and %s collide", a.ID, b.ID)
				}
			}
		})
	}
}
