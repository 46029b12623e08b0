package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

func TestIndexRange(t *testing.T) {
	for _, tc := range []struct {
		model, input string
		want         int64
	}{
		{"gpt2", "input_ids", 256}, // through a Reshape
		{"gpt2", "attention_mask", 0},
		{"llama", "input_ids", 256},
		{"bert", "token_type_ids", 2},
		{"bert", "input_ids", 256},
		{"qwen2_q4", "input_ids", 256},
		{"contrib_gqa", "attention_mask", 0},
	} {
		b, err := testmodels.MustGet(tc.model).Bytes()
		require.NoError(t, err)
		m, err := graph.Parse(b, "")
		require.NoError(t, err)
		require.Equal(t, tc.want, graph.IndexRange(m.Value(tc.input)), "%s %s", tc.model, tc.input)
	}
	// Through a Cast, and the smallest of two tables.
	m, err := graph.Parse(newModel().input("ids", i64, "n").
		initFloat("a", []int64{5, 2}, make([]float32, 10)...).initFloat("b", []int64{3, 2}, make([]float32, 6)...).
		node("Cast", []string{"ids"}, []string{"c"}, attrInt("to", 6)). // to int32
		node("Gather", []string{"a", "c"}, []string{"ya"}).
		node("Gather", []string{"b", "ids"}, []string{"yb"}).output("ya").output("yb").bytes(t), "")
	require.NoError(t, err)
	require.Equal(t, int64(3), graph.IndexRange(m.Value("ids")))
}
