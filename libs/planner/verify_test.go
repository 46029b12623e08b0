package planner_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

func TestVerifyCatchesBrokenPlans(t *testing.T) {
	p := planner.Problem{Capacity: 1024, Buffers: []planner.Buffer{
		{ID: "x", Size: 256, Start: 0, End: 2},
		{ID: "y", Size: 100, Start: 1, End: 3},
		{ID: "z", Size: 512, Start: 2, End: 4},
		{ID: "empty", Size: 0, Start: 0, End: 4},
	}}
	good, err := planner.Solve(context.Background(), p, planner.Options{})
	require.NoError(t, err)
	require.NoError(t, planner.Verify(p, good))

	broken := func(f func(*planner.Problem, *planner.Plan)) (planner.Problem, planner.Plan) {
		q, plan := p, good
		q.Buffers = slices.Clone(p.Buffers)
		plan.Offsets = slices.Clone(good.Offsets)
		f(&q, &plan)
		return q, plan
	}
	tests := []struct {
		name  string
		f     func(*planner.Problem, *planner.Plan)
		check func(t *testing.T, err error)
	}{
		{"overlap", func(q *planner.Problem, pl *planner.Plan) { pl.Offsets = []int64{0, 0, 512, 0}; pl.Peak = 1024 },
			func(t *testing.T, err error) {
				var oe *planner.OverlapError
				require.True(t, errors.As(err, &oe), "%v", err)
				require.Equal(t, "x", oe.IDA)
				require.Equal(t, "y", oe.IDB)
				require.Equal(t, 1, oe.Step)
				require.Equal(t, [2]int64{0, 100}, [2]int64{oe.Start, oe.End})
				require.ErrorContains(t, err, `buffers "x" and "y" are both live at step 1 and share bytes [0, 100)`)
			}},
		{"overlap at the shared step only", func(q *planner.Problem, pl *planner.Plan) {
			pl.Offsets = []int64{0, 256, 256, 0}
			pl.Peak = 768
		}, func(t *testing.T, err error) {
			var oe *planner.OverlapError
			require.True(t, errors.As(err, &oe), "%v", err)
			require.Equal(t, []string{"y", "z"}, []string{oe.IDA, oe.IDB})
		}},
		{"misaligned", func(q *planner.Problem, pl *planner.Plan) {
			pl.Offsets[2] += 8
			pl.Peak = max(pl.Peak, pl.Offsets[2]+512)
		},
			func(t *testing.T, err error) {
				var pe *planner.PlacementError
				require.True(t, errors.As(err, &pe), "%v", err)
				require.Equal(t, "z", pe.ID)
				require.ErrorContains(t, err, "not a multiple of its alignment 256")
			}},
		{"negative", func(q *planner.Problem, pl *planner.Plan) { pl.Offsets[0] = -256 },
			func(t *testing.T, err error) {
				require.ErrorContains(t, err, `buffer "x" at offset -256: negative offset`)
			}},
		{"past capacity", func(q *planner.Problem, pl *planner.Plan) { q.Capacity = 768; pl.Offsets = []int64{0, 256, 512, 0} },
			func(t *testing.T, err error) {
				require.ErrorContains(t, err, `buffer "z" at offset 512: ends at 1024, past the capacity 768`)
			}},
		{"wrong peak", func(q *planner.Problem, pl *planner.Plan) { pl.Peak-- },
			func(t *testing.T, err error) {
				var pe *planner.PeakError
				require.True(t, errors.As(err, &pe), "%v", err)
				require.Equal(t, good.Peak, pe.Actual)
			}},
		{"missing offsets", func(q *planner.Problem, pl *planner.Plan) { pl.Offsets = pl.Offsets[:2] },
			func(t *testing.T, err error) { require.ErrorContains(t, err, "2 offsets for 4 buffers") }},
		{"duplicate ids", func(q *planner.Problem, pl *planner.Plan) { q.Buffers[1].ID = "x" },
			func(t *testing.T, err error) { require.ErrorIs(t, err, planner.ErrInvalidProblem) }},
		{"negative size", func(q *planner.Problem, pl *planner.Plan) { q.Buffers[1].Size = -1 },
			func(t *testing.T, err error) { require.ErrorIs(t, err, planner.ErrInvalidProblem) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, plan := broken(tc.f)
			err := planner.Verify(q, plan)
			require.Error(t, err)
			if !errors.Is(err, planner.ErrInvalidProblem) {
				require.ErrorIs(t, err, planner.ErrInvalidPlan)
			}
			tc.check(t, err)
		})
	}
}

func TestVerifyAcceptsTouchingBuffers(t *testing.T) {
	p := planner.Problem{Buffers: []planner.Buffer{
		{ID: "a", Size: 10, Align: 1, Start: 0, End: 2},
		{ID: "b", Size: 10, Align: 1, Start: 2, End: 4}, // same bytes, next step
		{ID: "c", Size: 5, Align: 1, Start: 0, End: 4},  // right above
		{ID: "z", Size: 0, Align: 1, Start: 0, End: 4},  // no bytes, anywhere
	}}
	require.NoError(t, planner.Verify(p, planner.Plan{Offsets: []int64{0, 0, 10, 3}, Peak: 15}))
}
