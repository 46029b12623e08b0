package app

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// llama31_70B is Llama-3.1-70B's published config.json (a copy of libs/graph/arch's test data).
const llama31_70B = "testdata/Llama-3.1-70B.config.json"

// TestConfigTP plans one rank of Llama-3.1-70B split over 2 and 16 ranks: half the weights but
// the norms, half the KV cache, the communicator's buffers in the total; 8 KV heads over 16 ranks
// are one per rank, each on 2.
func TestConfigTP(t *testing.T) {
	dims := []string{"--config", llama31_70B, "--target", "h200", "--dim", "batch=1", "--dim", "seq=2048"}
	whole := reportJSON(t, dims...)
	rank := reportJSON(t, append(dims, "--tp", "2")...)
	require.Equal(t, tpInfo{Ranks: 2, Heads: 32, KVHeads: 4, KVReplicas: 1, Intermediate: 14336, Vocab: 64128, AllReduces: 161, CommBytes: commBytes}, *rank.Model.Config.TP)
	require.Nil(t, whole.Model.Config.TP)
	require.Zero(t, whole.CommBytes)
	norms := int64(80*2+1) * 8192 * 2
	require.InDelta(t, (whole.WeightsBytes-norms)/2+norms, rank.WeightsBytes, 4096, "half of everything but the norms")
	require.Equal(t, int64(commBytes), rank.CommBytes)
	require.Equal(t, rank.DeviceWeightsBytes+rank.ArenaBytes+commBytes, rank.TotalBytes)
	require.Less(t, rank.ArenaBytes, whole.ArenaBytes)

	k1, code, stderr := kvJSON(t, "--config", llama31_70B, "--target", "h200", "--batch", "4", "--context", "8192")
	require.Equal(t, ExitOK, code, stderr)
	k2, code, stderr := kvJSON(t, "--config", llama31_70B, "--target", "h200", "--batch", "4", "--context", "8192", "--tp", "2")
	require.Equal(t, ExitOK, code, stderr)
	require.Equal(t, int64(80*2*8*128*2), k1.BytesPerToken)
	require.Equal(t, k1.BytesPerToken/2, k2.BytesPerToken)
	require.Equal(t, k1.At.StateBytes/2, k2.At.StateBytes)
	require.Equal(t, k2.At.DeviceWeightBytes+k2.At.ArenaBytes+k2.At.StateBytes+commBytes, k2.At.TotalBytes)

	k16, code, stderr := kvJSON(t, "--config", llama31_70B, "--target", "h200", "--batch", "4", "--context", "8192", "--tp", "16")
	require.Equal(t, ExitOK, code, stderr)
	require.Equal(t, int64(2), k16.Model.Config.TP.KVReplicas)
	require.Equal(t, k1.BytesPerToken/8, k16.BytesPerToken, "one KV head of 8 per rank")
	stdout, stderr, code := run(t, "kv", "--config", llama31_70B, "--target", "h200", "--batch", "4", "--context", "8192", "--tp", "16")
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "on each rank (1 of the 8 KV heads, each replicated on 2 ranks)")
	require.Contains(t, stdout, "the tensor-parallel communicator's buffers per rank, a declared constant")
}

// TestConfigFitTP is the capacity question of the issue: how many sequences of a 32k context fit
// on each of two H200s holding Llama-3.1-70B split in two.
func TestConfigFitTP(t *testing.T) {
	stdout, stderr, code := run(t, "fit", "--config", llama31_70B, "--target", "h200", "--tp", "2", "--dim", "seq=32768", "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var r kvResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &r))
	require.Equal(t, "batch", r.Search)
	require.NotNil(t, r.Largest)
	require.Equal(t, "budget", r.LimitedBy)
	require.Equal(t, *r.Largest*32768*r.BytesPerToken, r.At.StateBytes)
	require.Greater(t, r.Next.TotalBytes, *r.BudgetBytes)
	// On one H200 the weights alone (131 GiB) leave no room for a sequence of 32k.
	_, _, code = run(t, "fit", "--config", llama31_70B, "--target", "h200", "--dim", "seq=32768")
	require.Equal(t, ExitDoesNotFit, code)
}

func TestConfigTPErrors(t *testing.T) {
	gpt2 := "testdata/gpt2.config.json"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--config", llama31_70B, "--tp", "3", "--dim", "batch=1", "--dim", "seq=8"}, ExitError, `--tp 3: config (model_type "llama"): field "num_attention_heads": 64 heads do not split over 3 ranks`},
		{[]string{"kv", "--config", llama31_70B, "--tp", "0", "--context", "8"}, ExitUsage, "--tp 0: want 1 or more ranks"},
		{[]string{"report", "--dim", "batch=1", "--tp", "2"}, ExitUsage, "--tp applies to --config only"},
		{[]string{"report", "--config", gpt2, "--tp", "2", "--dim", "batch=1", "--dim", "seq=8"}, ExitError, "tensor parallelism is built for the Llama lineage"},
	} {
		_, stderr, code := run(t, tc.args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		require.Contains(t, oneLine(t, stderr), tc.want, tc.args)
	}
}
