package graph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/planner"
)

// everyPair declares every elementwise pair: output 0 over each input.
func everyPair(n *graph.Node) ([]graph.InPlace, error) {
	var pairs []graph.InPlace
	for j := range n.Inputs {
		pairs = append(pairs, graph.InPlace{Output: 0, Input: j})
	}
	return pairs, nil
}

// inPlaceOf maps each buffer that takes another's bytes to the one it takes, by ID.
func inPlaceOf(l *graph.Lifetimes) map[string]string {
	got := map[string]string{}
	for _, b := range l.Problem.Buffers {
		if b.InPlace != "" {
			got[b.ID] = b.InPlace
		}
	}
	return got
}

// TestLifetimesInPlace: an output takes the buffer of an input that its node reads last, that
// holds activations only and that no other input of the node reads; the plan verifies.
func TestLifetimesInPlace(t *testing.T) {
	m := newModel().input("x", f32, "n", "n").
		node("Neg", []string{"x"}, []string{"a"}).      // x is a graph input: not taken
		node("Relu", []string{"a"}, []string{"b"}).     // takes a
		node("Add", []string{"b", "x"}, []string{"c"}). // takes b
		node("Exp", []string{"c"}, []string{"d"}).      // c is read later: not taken
		node("Mul", []string{"c", "d"}, []string{"e"}). // takes c (the first pair), d is left
		node("Sigmoid", []string{"e"}, []string{"g"}).  // a graph output may take an activation's bytes
		node("Neg", []string{"g"}, []string{"h"}).      // ... but not a graph output's
		node("Neg", []string{"d"}, []string{"k"}).      // takes d
		node("Add", []string{"k", "k"}, []string{"q"}). // k read through both inputs: not taken
		output("g", "h", "q")
	g, err := graph.Parse(m.bytes(t), "")
	require.NoError(t, err)
	b, err := graph.Bind(g, map[string]int64{"n": 64})
	require.NoError(t, err)
	for _, r := range []graph.Residency{graph.HostResident, graph.DeviceResident} {
		l, err := b.LifetimesSunk(r, nil, everyPair)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"b": "a", "c": "b", "e": "c", "g": "e", "k": "d"}, inPlaceOf(l), "residency %d", r)
		require.Equal(t, 5, l.InPlace)
		plan, err := planner.Solve(context.Background(), l.Problem, planner.Options{})
		require.NoError(t, err)
		require.NoError(t, planner.Verify(l.Problem, plan))

		off, err := b.LifetimesSunk(r, nil, nil)
		require.NoError(t, err)
		require.Empty(t, inPlaceOf(off))
		require.LessOrEqual(t, planner.LowerBound(l.Problem), planner.LowerBound(off.Problem))
	}
	_, err = b.LifetimesSunk(graph.HostResident, nil, func(*graph.Node) ([]graph.InPlace, error) { return nil, context.Canceled })
	require.ErrorIs(t, err, context.Canceled)
}

// TestLifetimesInPlaceWrongAlias: an alias the rules refuse — c taken by d although e reads c
// later — is one the verifier rejects.
func TestLifetimesInPlaceWrongAlias(t *testing.T) {
	m := newModel().input("x", f32, "n", "n").
		node("Neg", []string{"x"}, []string{"c"}).
		node("Exp", []string{"c"}, []string{"d"}).
		node("Mul", []string{"c", "d"}, []string{"e"}).
		output("e")
	g, err := graph.Parse(m.bytes(t), "")
	require.NoError(t, err)
	b, err := graph.Bind(g, map[string]int64{"n": 64})
	require.NoError(t, err)
	l, err := b.LifetimesSunk(graph.HostResident, nil, everyPair)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"e": "c"}, inPlaceOf(l))
	plan, err := planner.Solve(context.Background(), l.Problem, planner.Options{})
	require.NoError(t, err)
	require.NoError(t, planner.Verify(l.Problem, plan))

	wrong := l.Problem
	wrong.Buffers = append([]planner.Buffer(nil), l.Problem.Buffers...)
	for i := range wrong.Buffers {
		switch wrong.Buffers[i].ID {
		case "d":
			wrong.Buffers[i].InPlace = "c"
		case "e":
			wrong.Buffers[i].InPlace = ""
		}
	}
	require.ErrorIs(t, planner.Verify(wrong, plan), planner.ErrInvalidProblem)
	// The same offsets without any declaration: c and e overlap at e's step.
	for i := range wrong.Buffers {
		wrong.Buffers[i].InPlace = ""
	}
	var oe *planner.OverlapError
	require.ErrorAs(t, planner.Verify(wrong, plan), &oe)
}
