package graph_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// TestArity: every operator's inputs are checked by one rule before its inference runs: the
// required inputs present, then the count for operators that take a fixed or variadic list.
func TestArity(t *testing.T) {
	x := func() *mb { return newModel().input("x", f32, 2).input("z", f32, 2) }
	tests := []struct {
		name string
		op   string
		ins  []string
		want string // the whole problem after the node
	}{
		{"unary without input", "Neg", nil, "input 0 is missing"},
		{"required input omitted", "Gather", []string{"x", ""}, "input 1 is missing"},
		{"required input absent", "MatMul", []string{"x"}, "input 1 is missing"},
		{"first of three omitted", "Where", []string{"", "x", "z"}, "input 0 is missing"},
		{"binary with one input", "Add", []string{"x"}, "Add takes 2 inputs, has 1"},
		{"binary with three inputs", "Mul", []string{"x", "z", "x"}, "Mul takes 2 inputs, has 3"},
		{"binary omission before count", "Mul", []string{"x", "", "x"}, "input 1 is missing"},
		{"binary without inputs", "Sub", nil, "Sub has no inputs"},
		{"variadic without inputs", "Concat", nil, "Concat has no inputs"},
		{"variadic input omitted", "Max", []string{"x", "z", ""}, "input 2 is missing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := x().node(tc.op, tc.ins, []string{"y"}).output("y")
			_, err := graph.Parse(m.bytes(t), t.TempDir())
			var me *graph.ModelError
			require.True(t, errors.As(err, &me), "typed error, got %v", err)
			require.Equal(t, tc.want, me.Problem)
			require.Equal(t, tc.op, me.Node.OpType)
		})
	}

	// Variadic operators take any number of inputs, optional inputs may be omitted.
	for _, m := range []*mb{
		x().node("Max", []string{"x", "z", "x"}, []string{"y"}).output("y"),
		x().node("Sum", []string{"x"}, []string{"y"}).output("y"),
		x().initInt64("s", []int64{1}, 0).initInt64("e", []int64{1}, 1).
			node("Slice", []string{"x", "s", "e", "", ""}, []string{"y"}).output("y"),
	} {
		_, err := graph.Parse(m.bytes(t), t.TempDir())
		require.NoError(t, err)
	}
}
