package planner_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/planner"
)

// inPlaceChain is x -> y -> z, each written over the one before at the step that last reads it
// (a convolution's output, its residual sum, its Relu), beside w, live throughout.
func inPlaceChain() planner.Problem {
	return planner.Problem{Buffers: []planner.Buffer{
		{ID: "x", Size: 1000, Start: 0, End: 2},
		{ID: "w", Size: 300, Start: 0, End: 5},
		{ID: "y", Size: 1000, Start: 1, End: 3, InPlace: "x"},
		{ID: "z", Size: 1000, Start: 2, End: 5, InPlace: "y", Kind: planner.Output},
	}}
}

func TestSolveInPlace(t *testing.T) {
	p := inPlaceChain()
	for _, alg := range planner.Algorithms() {
		t.Run(string(alg), func(t *testing.T) {
			plan, err := planner.Solve(context.Background(), p, planner.Options{Algorithm: alg})
			require.NoError(t, err)
			require.NoError(t, planner.Verify(p, plan))
			require.Equal(t, plan.Offsets[0], plan.Offsets[2])
			require.Equal(t, plan.Offsets[0], plan.Offsets[3])
			// One 1000-byte chain beside w: 1024 + 300, whatever the order.
			require.Equal(t, int64(1024+300), plan.Peak)
			require.Equal(t, plan.Peak, plan.LowerBound)
			require.True(t, plan.Optimal)
		})
	}
	// Without the in-place declarations, x, y and z pairwise need their own bytes.
	q := inPlaceChain()
	for i := range q.Buffers {
		q.Buffers[i].InPlace = ""
	}
	require.Greater(t, planner.LowerBound(q), planner.LowerBound(p))
}

func TestSolveInPlaceCapacity(t *testing.T) {
	p := inPlaceChain()
	p.Capacity = 1024
	_, err := planner.Solve(context.Background(), p, planner.Options{})
	var nf *planner.NoFitError
	require.ErrorAs(t, err, &nf)
	require.True(t, nf.Proven)
	require.Len(t, nf.Best.Offsets, len(p.Buffers))
}

// TestValidateInPlace: a buffer takes another's bytes only when the two are one placement live
// together at the taker's first step alone.
func TestValidateInPlace(t *testing.T) {
	tests := []struct {
		name string
		f    func(b []planner.Buffer)
		msg  string
	}{
		{"still read later", func(b []planner.Buffer) { b[0].End = 3 }, `buffer 2 ("y"): takes the bytes of "x" in place, but it lives over [0, 3)`},
		{"ends before", func(b []planner.Buffer) { b[0].End = 1 }, `it lives over [0, 1)`},
		{"starts with it", func(b []planner.Buffer) { b[0].Start = 1 }, `it lives over [1, 2)`},
		{"no such buffer", func(b []planner.Buffer) { b[2].InPlace = "v" }, `takes the bytes of "v" in place, but the problem has no such buffer`},
		{"itself", func(b []planner.Buffer) { b[2].InPlace = "y" }, `it lives over [1, 3)`},
		{"size", func(b []planner.Buffer) { b[2].Size = 999 }, `it has 1000 bytes aligned to 256, not 999 aligned to 256`},
		{"alignment", func(b []planner.Buffer) { b[2].Align = 512 }, `not 1000 aligned to 512`},
		{"taken twice", func(b []planner.Buffer) { b[1] = planner.Buffer{ID: "w", Size: 1000, Start: 1, End: 2, InPlace: "x"} }, `so does buffer 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := inPlaceChain()
			tc.f(p.Buffers)
			err := p.Validate()
			var pe *planner.ProblemError
			require.ErrorAs(t, err, &pe)
			require.ErrorIs(t, err, planner.ErrInvalidProblem)
			require.ErrorContains(t, err, tc.msg)
			_, err = planner.Solve(context.Background(), p, planner.Options{})
			require.ErrorAs(t, err, &pe)
		})
	}
}

// TestVerifyInPlace: the verifier accepts exactly the declared aliases and rejects every other
// overlap, an alias whose input is still read later among them.
func TestVerifyInPlace(t *testing.T) {
	p := inPlaceChain()
	good, err := planner.Solve(context.Background(), p, planner.Options{})
	require.NoError(t, err)
	require.NoError(t, planner.Verify(p, good))
	x, w := good.Offsets[0], good.Offsets[1]

	t.Run("input still read later", func(t *testing.T) {
		q := inPlaceChain()
		q.Buffers[0].End = 3 // x read at step 2, after y overwrote it
		err := planner.Verify(q, good)
		require.ErrorIs(t, err, planner.ErrInvalidProblem)
		require.ErrorContains(t, err, `lives over [0, 3)`)
	})
	t.Run("undeclared alias", func(t *testing.T) {
		q := inPlaceChain()
		q.Buffers[2].InPlace = ""
		q.Buffers[3].InPlace = ""
		var oe *planner.OverlapError
		require.ErrorAs(t, planner.Verify(q, good), &oe)
		require.ErrorIs(t, planner.Verify(q, good), planner.ErrInvalidPlan)
		require.Equal(t, []string{"x", "y"}, []string{oe.IDA, oe.IDB})
		require.Equal(t, 1, oe.Step)
	})
	t.Run("taker elsewhere", func(t *testing.T) {
		plan := good
		plan.Offsets = slices.Clone(good.Offsets)
		plan.Offsets[3] = max(x, w) + 1024
		plan.Peak = plan.Offsets[3] + 1000
		var pe *planner.PlacementError
		require.ErrorAs(t, planner.Verify(p, plan), &pe)
		require.Equal(t, "z", pe.ID)
		require.ErrorContains(t, planner.Verify(p, plan), `takes the bytes of "y" in place, at offset`)
	})
	t.Run("another buffer over the chain", func(t *testing.T) {
		plan := good
		plan.Offsets = slices.Clone(good.Offsets)
		plan.Offsets[1] = x
		plan.Peak = x + 1000
		err := planner.Verify(p, plan)
		var oe *planner.OverlapError
		require.True(t, errors.As(err, &oe), "%v", err)
		require.Equal(t, "w", oe.IDB)
	})
}
