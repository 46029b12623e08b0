package planner_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

// randomProblem makes n buffers over about steps steps; sizes and alignments are drawn so that
// alignment matters (sizes are not multiples of the larger alignments).
func randomProblem(r *rand.Rand, n, steps int) planner.Problem {
	aligns := []int64{0, 1, 8, 64, 256}
	p := planner.Problem{}
	for i := range n {
		start := r.IntN(steps)
		b := planner.Buffer{
			ID:    fmt.Sprintf("b%d", i),
			Size:  int64(r.IntN(1000)),
			Align: aligns[r.IntN(len(aligns))],
			Start: start,
			End:   start + 1 + r.IntN(max(steps/2, 1)),
		}
		if r.IntN(10) == 0 {
			b.Size = 0
		}
		p.Buffers = append(p.Buffers, b)
	}
	return p
}

// bruteForce returns the optimal peak of a tiny problem: every plan can be lowered into one in
// which buffers, taken in order of offset, each sit on the highest top below them, so trying
// every order and stacking each buffer on the tops of the earlier ones finds an optimum.
func bruteForce(p planner.Problem) int64 {
	n := len(p.Buffers)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	off := make([]int64, n)
	best := int64(-1)
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			var peak int64
			for i, b := range p.Buffers {
				if b.Size > 0 {
					peak = max(peak, off[i]+b.Size)
				}
			}
			if best < 0 || peak < best {
				best = peak
			}
			return
		}
		for j := k; j < n; j++ {
			perm[k], perm[j] = perm[j], perm[k]
			i := perm[k]
			b := p.Buffers[i]
			var top int64
			for _, e := range perm[:k] {
				if p.Buffers[e].Size > 0 && b.Overlaps(p.Buffers[e]) {
					top = max(top, off[e]+p.Buffers[e].Size)
				}
			}
			a := b.Alignment()
			off[i] = (top + a - 1) / a * a
			rec(k + 1)
			perm[k], perm[j] = perm[j], perm[k]
		}
	}
	rec(0)
	return best
}

var example = planner.Problem{Buffers: []planner.Buffer{ // MiniMalloc's input.12.csv
	{ID: "b1", Size: 4, Align: 1, Start: 0, End: 3},
	{ID: "b2", Size: 4, Align: 1, Start: 3, End: 9},
	{ID: "b3", Size: 4, Align: 1, Start: 0, End: 9},
	{ID: "b4", Size: 4, Align: 1, Start: 9, End: 21},
	{ID: "b5", Size: 4, Align: 1, Start: 0, End: 21},
}}

func TestSolveEveryAlgorithm(t *testing.T) {
	for _, alg := range planner.Algorithms() {
		t.Run(string(alg), func(t *testing.T) {
			plan, err := planner.Solve(context.Background(), example, planner.Options{Algorithm: alg})
			require.NoError(t, err)
			require.NoError(t, planner.Verify(example, plan))
			if alg == planner.Exact || alg == planner.Best {
				require.Contains(t, planner.Algorithms(), plan.Algorithm)
			} else {
				require.Equal(t, alg, plan.Algorithm)
			}
			require.Equal(t, int64(12), plan.LowerBound)
			require.GreaterOrEqual(t, plan.Peak, int64(12))
		})
	}
	plan, err := planner.Solve(context.Background(), example, planner.Options{})
	require.NoError(t, err)
	require.Equal(t, int64(12), plan.Peak)
	require.True(t, plan.Optimal)
}

func TestSolveEdgeCases(t *testing.T) {
	ctx := context.Background()
	t.Run("empty", func(t *testing.T) {
		plan, err := planner.Solve(ctx, planner.Problem{}, planner.Options{})
		require.NoError(t, err)
		require.Empty(t, plan.Offsets)
		require.Zero(t, plan.Peak)
		require.True(t, plan.Optimal)
	})
	t.Run("zero sizes", func(t *testing.T) {
		p := planner.Problem{Buffers: []planner.Buffer{{ID: "a", Start: 0, End: 2}, {ID: "b", Start: 0, End: 2}}}
		plan, err := planner.Solve(ctx, p, planner.Options{})
		require.NoError(t, err)
		require.Equal(t, []int64{0, 0}, plan.Offsets)
		require.NoError(t, planner.Verify(p, plan))
	})
	t.Run("invalid", func(t *testing.T) {
		_, err := planner.Solve(ctx, planner.Problem{Buffers: []planner.Buffer{{ID: "a", Size: -1, End: 1}}}, planner.Options{})
		require.ErrorIs(t, err, planner.ErrInvalidProblem)
	})
	t.Run("unknown algorithm", func(t *testing.T) {
		_, err := planner.Solve(ctx, example, planner.Options{Algorithm: "magic"})
		require.ErrorContains(t, err, `unknown algorithm "magic"`)
	})
}

func TestSolveCapacity(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		alg      planner.Algorithm
		capacity int64
		want     error // nil, ErrInfeasible or ErrNoPlanFound
	}{
		{"exact fits", planner.Exact, 12, nil},
		{"exact roomy", planner.Exact, 100, nil},
		{"exact below bound", planner.Exact, 11, planner.ErrInfeasible},
		{"heuristic fits", planner.GreedyBySize, 100, nil},
		{"heuristic below bound", planner.GreedyBySize, 11, planner.ErrInfeasible},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := example
			p.Capacity = tc.capacity
			plan, err := planner.Solve(ctx, p, planner.Options{Algorithm: tc.alg})
			if tc.want == nil {
				require.NoError(t, err)
				require.LessOrEqual(t, plan.Peak, tc.capacity)
				require.NoError(t, planner.Verify(p, plan))
				return
			}
			require.ErrorIs(t, err, tc.want)
			var nf *planner.NoFitError
			require.True(t, errors.As(err, &nf))
			require.Equal(t, tc.capacity, nf.Capacity)
			require.Equal(t, int64(12), nf.LowerBound)
			require.Greater(t, nf.Best.Peak, tc.capacity)
		})
	}
	// A capacity above the bound that no plan meets: three buffers that pairwise overlap in
	// time, but the first and last do not, need more than the bound when sizes clash.
	p := planner.Problem{Capacity: 5, Buffers: []planner.Buffer{
		{ID: "a", Size: 2, Align: 1, Start: 0, End: 2},
		{ID: "b", Size: 3, Align: 1, Start: 1, End: 3},
		{ID: "c", Size: 2, Align: 1, Start: 2, End: 4},
		{ID: "d", Size: 3, Align: 1, Start: 3, End: 5},
		{ID: "e", Size: 2, Align: 1, Start: 4, End: 6},
		{ID: "f", Size: 3, Align: 1, Start: 0, End: 1},
	}}
	require.Equal(t, int64(5), planner.LowerBound(p))
	opt := bruteForce(p)
	plan, err := planner.Solve(ctx, p, planner.Options{})
	if opt <= 5 {
		require.NoError(t, err)
		require.NoError(t, planner.Verify(p, plan))
	} else {
		require.ErrorIs(t, err, planner.ErrInfeasible, "optimum %d", opt)
	}
}

func TestNoFitErrorIs(t *testing.T) {
	proven := &planner.NoFitError{Capacity: 10, LowerBound: 12, Proven: true}
	require.ErrorIs(t, proven, planner.ErrInfeasible)
	require.NotErrorIs(t, proven, planner.ErrNoPlanFound)
	require.ErrorContains(t, proven, "no plan fits in 10 bytes: it needs at least 12")
	open := &planner.NoFitError{Capacity: 10, LowerBound: 8, Best: planner.Plan{Peak: 11}}
	require.ErrorIs(t, open, planner.ErrNoPlanFound)
	require.NotErrorIs(t, open, planner.ErrInfeasible)
	require.ErrorContains(t, open, "best peak 11")
}

// TestSolveProperties: on random problems every solver's plan verifies, the exact search
// never does worse than the heuristics nor better than the lower bound, and on tiny problems
// its proven optima are the true optima.
func TestSolveProperties(t *testing.T) {
	ctx := context.Background()
	for seed := uint64(1); seed <= 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		n := 1 + r.IntN(7)
		if seed > 40 {
			n = 10 + r.IntN(40)
		}
		p := randomProblem(r, n, 2+r.IntN(12))
		lb := planner.LowerBound(p)
		best := int64(-1)
		for _, alg := range planner.Algorithms()[1:] {
			plan, err := planner.Solve(ctx, p, planner.Options{Algorithm: alg})
			require.NoError(t, err, "seed %d %s", seed, alg)
			require.NoError(t, planner.Verify(p, plan), "seed %d %s", seed, alg)
			require.GreaterOrEqual(t, plan.Peak, lb, "seed %d %s", seed, alg)
			if alg == planner.Best {
				best = plan.Peak
			} else {
				require.GreaterOrEqual(t, plan.Peak, best, "seed %d: best is no worse than %s", seed, alg)
			}
		}
		limit := int64(20_000) // enough to settle the tiny problems many times over
		exact, err := planner.Solve(ctx, p, planner.Options{StepLimit: limit, TimeLimit: time.Minute})
		require.NoError(t, err, "seed %d", seed)
		require.NoError(t, planner.Verify(p, exact), "seed %d", seed)
		require.GreaterOrEqual(t, exact.Peak, lb, "seed %d", seed)
		require.LessOrEqual(t, exact.Peak, best, "seed %d", seed)
		if n <= 7 {
			opt := bruteForce(p)
			require.True(t, exact.Optimal, "seed %d: tiny problems are settled", seed)
			require.Equal(t, opt, exact.Peak, "seed %d", seed)
			// The optimum fits its own capacity, and one byte less is proven infeasible.
			q := p
			q.Capacity = opt
			if opt > 0 {
				plan, err := planner.Solve(ctx, q, planner.Options{StepLimit: limit, TimeLimit: time.Minute})
				require.NoError(t, err, "seed %d", seed)
				require.NoError(t, planner.Verify(q, plan), "seed %d", seed)
				q.Capacity = opt - 1
				_, err = planner.Solve(ctx, q, planner.Options{StepLimit: limit, TimeLimit: time.Minute})
				require.ErrorIs(t, err, planner.ErrInfeasible, "seed %d", seed)
			}
		}
	}
}

func TestSolveDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 42))
	p := randomProblem(r, 60, 30)
	opts := planner.Options{StepLimit: 50_000, TimeLimit: time.Minute}
	a, err := planner.Solve(context.Background(), p, opts)
	require.NoError(t, err)
	b, err := planner.Solve(context.Background(), p, opts)
	require.NoError(t, err)
	require.Equal(t, a.Offsets, b.Offsets)
	require.Equal(t, a.Steps, b.Steps)
}

func TestSolveCancelledWithCapacity(t *testing.T) {
	f, err := os.Open("testdata/minimalloc/C.1048576.csv")
	require.NoError(t, err)
	defer f.Close()
	p, err := planner.ReadCSV(f)
	require.NoError(t, err)
	p.Capacity = 1039360 // the heuristics are far above: only the search could fit it
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = planner.Solve(ctx, p, planner.Options{})
	require.ErrorIs(t, err, planner.ErrNoPlanFound)
	require.ErrorIs(t, err, context.Canceled)
}

func TestSolveCancelled(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	p := randomProblem(r, 200, 60)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	plan, err := planner.Solve(ctx, p, planner.Options{})
	require.NoError(t, err, "without a capacity a cancelled search still returns the heuristics' plan")
	require.NoError(t, planner.Verify(p, plan))
}
