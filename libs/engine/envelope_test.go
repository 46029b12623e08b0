package engine

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanEnvelopeQwen2_1p5B plans the 28-layer Qwen2-1.5B-shaped graph over batch 1..64 and
// seq 1..32768 and checks the reservation it yields: the corners are the only candidates (no
// kernel switches tactic along either dim), every candidate is planned at its lower bound, the
// largest corner is the reservation, and seq drives it. The byte counts are exact: a change to
// a kernel's sizes, the graph's lifetimes or the planner shows here.
func TestPlanEnvelopeQwen2_1p5B(t *testing.T) {
	m := loadFixture(t, "qwen2_1p5b_graph")
	env, err := ParseEnvelope([]string{"batch=1:64", "seq=1:32768"})
	require.NoError(t, err)
	ep, err := PlanEnvelope(context.Background(), m, env, Options{Workers: 4})
	require.NoError(t, err)

	require.Equal(t, int64(3_087_400_863), ep.WeightBytes)
	type cand struct {
		batch, seq, arena int64
	}
	want := []cand{
		{1, 1, 1_401_332_992},
		{1, 32768, 80_196_163_584},
		{64, 1, 1_461_311_488},
		{64, 32768, 5_131_430_025_216},
	}
	got := make([]cand, len(ep.Candidates))
	for i, c := range ep.Candidates {
		require.Equal(t, "corner", c.Why, "%v", c.Binding)
		require.Len(t, c.Binding, 2)
		require.Equal(t, c.LowerBound, c.ArenaBytes, "%v is planned at its lower bound", c.Binding)
		got[i] = cand{c.Binding["batch"], c.Binding["seq"], c.ArenaBytes}
	}
	require.Equal(t, want, got)

	// The reservation is the largest candidate, and its plan is the worst.
	require.Equal(t, want[3].arena, ep.ArenaBytes)
	require.Equal(t, ep.ArenaBytes, ep.Worst.Plan.Peak)
	require.Equal(t, map[string]int64{"batch": 64, "seq": 32768}, map[string]int64(ep.Worst.Binding.Dims))
	require.Equal(t, ep.WeightBytes+ep.ArenaBytes, ep.TotalBytes())

	// seq drives the arena: lowering it to 1 at batch 64 saves all but the batch-64 corner.
	require.Equal(t, "seq", ep.DrivingDim)
	require.Equal(t, want[3].arena-want[2].arena, ep.DrivingSavings)

	// Workspace bounds W, largest first: per layer the two attention products (scores and
	// context), the three MLP projections, q/o and k/v; then the LM head, and one node with a few KiB. Their sum is what
	// reserving every node's worst case separately would cost, far above the planned arena.
	require.True(t, slices.IsSortedFunc(ep.Bounds, func(a, b NodeBound) int { return cmp.Compare(b.Bound.Bytes, a.Bound.Bytes) }))
	perSize := map[int64]int{}
	for _, b := range ep.Bounds {
		perSize[b.Bound.Bytes]++
	}
	require.Equal(t, map[int64]int{
		3_324_305_758_208: 28, // the two attention products of each layer
		3_324_305_250_304: 28,
		1_288_352_077_824: 1,
		88_104_015_872:    3 * 28,
		25_781_377_024:    2 * 28,
		15_034_128_384:    2 * 28,
		6_784:             1,
	}, perSize)
	require.Equal(t, int64(197_135_865_959_040), ep.WorkspaceBound())
	require.Greater(t, ep.WorkspaceBound(), ep.ArenaBytes)
}
