package tp_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph/arch"
	"carve.dev/libs/graph/shard"
	"carve.dev/libs/kernels"
)

// TestRankPlanAgreesWithArch plans one rank of Llama-3.1-8B and Qwen2.5-7B at tp 2 and 4 both
// ways, as the estimator's --tp does (arch's rank graph) and as the runtime splits the loaded
// model (shard's rank of the whole graph), on the simulated device's target at a prefill
// envelope. The float weights agree to the byte (shard's TestSplitAgreesWithArch); the device
// weights differ by the rank's few small constants the plan lacks (the vocabulary-parallel
// embedding's offsets and zero, each resident in an aligned slot of its own). The arenas agree
// here: the runtime's AllReduce writes its sum beside the partial sum, where the plan takes the
// all-reduce in place as NCCL does it, but the peak is at the logits, where no partial sum is
// alive; a graph whose peak were at a row-parallel projection would plan one [batch, seq,
// hidden] buffer more.
func TestRankPlanAgreesWithArch(t *testing.T) {
	ctx := context.Background()
	env := engine.Envelope{"batch": {Lo: 1, Hi: 1}, "seq": {Lo: 1, Hi: 1024}}
	opts := engine.Options{Target: kernels.Target{Backend: kernels.BackendSim}}
	fo, err := engine.FuseOptions(opts)
	require.NoError(t, err)
	ao := arch.Options{Skip: fo.Skip}
	for _, file := range []string{"Llama-3.1-8B", "Qwen2.5-7B"} {
		b, err := os.ReadFile("../../graph/arch/testdata/" + file + ".config.json")
		require.NoError(t, err)
		c, err := arch.Parse(b)
		require.NoError(t, err)
		whole, err := c.Build(ao)
		require.NoError(t, err)
		for _, n := range []int{2, 4} {
			rc, _, err := c.Split(n)
			require.NoError(t, err)
			planned, err := rc.Build(ao)
			require.NoError(t, err)
			ranked, _, err := shard.Split(whole, 0, n, shard.Options{})
			require.NoError(t, err)
			want, err := engine.PlanEnvelope(ctx, planned, env, opts)
			require.NoError(t, err)
			got, err := engine.PlanEnvelope(ctx, ranked, env, opts)
			require.NoError(t, err)
			t.Logf("%s tp %d: device weights %d (plan %d), arena %d (plan %d)", file, n, got.DeviceWeightBytes, want.DeviceWeightBytes, got.ArenaBytes, want.ArenaBytes)
			extra := 0
			for _, v := range ranked.Initializers {
				if planned.Value(v.Name) == nil && len(v.Shape) <= 1 && v.Init.Size <= 8 {
					extra++
				}
			}
			require.GreaterOrEqual(t, got.DeviceWeightBytes, want.DeviceWeightBytes)
			require.LessOrEqual(t, got.DeviceWeightBytes-want.DeviceWeightBytes, int64(extra)*256, "%d small constants", extra)
			require.Equal(t, want.ArenaBytes, got.ArenaBytes)
		}
	}
}
