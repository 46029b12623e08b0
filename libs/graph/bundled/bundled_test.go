package bundled

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

func TestBundledIsTheFixture(t *testing.T) {
	want, err := testmodels.MustGet("gpt2").Bytes()
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, Bytes()), "libs/graph/bundled/gpt2.onnx differs from the gpt2 fixture: copy it again and update ORIGIN.md")
}

func TestLoad(t *testing.T) {
	m, err := Load()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"batch", "seq"}, m.DimNames)
	require.Equal(t, []string{"input_ids", "attention_mask"}, []string{m.Inputs[0].Name, m.Inputs[1].Name})
	require.Len(t, m.Inputs, 2)
}

// TestDefaultsCoverTheModelsDims: both sets of defaults give every dim of the model, and
// nothing else, with values the model binds.
func TestDefaultsCoverTheModelsDims(t *testing.T) {
	m, err := Load()
	require.NoError(t, err)
	ranges := EstimateRanges()
	require.Len(t, ranges, len(m.DimNames))
	lo, hi := map[string]int64{}, map[string]int64{}
	for _, d := range m.DimNames {
		r, ok := ranges[d]
		require.True(t, ok, "no estimate range for dim %q", d)
		require.True(t, 1 <= r.Lo && r.Lo <= r.Hi, "dim %q: range %d..%d", d, r.Lo, r.Hi)
		lo[d], hi[d] = r.Lo, r.Hi
	}
	run := RunBinding()
	require.Len(t, run, len(m.DimNames))
	for _, d := range m.DimNames {
		require.Contains(t, run, d, "no run value for dim %q", d)
		require.GreaterOrEqual(t, run[d], int64(1), "dim %q", d)
	}
	for _, dims := range []map[string]int64{lo, hi, run} {
		_, err := graph.Bind(m, dims)
		require.NoError(t, err, "binding %v", dims)
	}
}

// TestDefaultsAreFresh: callers may change the maps they get.
func TestDefaultsAreFresh(t *testing.T) {
	EstimateRanges()["batch"] = DimRange{Lo: 7, Hi: 9}
	RunBinding()["batch"] = 7
	require.Equal(t, map[string]DimRange{"batch": {Lo: 1, Hi: 4}, "seq": {Lo: 1, Hi: 128}}, EstimateRanges())
	require.Equal(t, map[string]int64{"batch": 2, "seq": 16}, RunBinding())
}
