package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/arch"
	"carve.dev/libs/graph/testmodels/zoo"
)

// TestConfigKVMatchesExport: for every zoo model in onnxruntime GenAI's form (separate and packed
// q|k|v, Mistral's sliding window as local_window_size), kv --config on its config.json plans
// what kv --model plans for the export, on the CPU and the H200, at a point and in a search:
// the KV bytes per token exactly, the weights within 1%, the arena and the KV state to the byte.
// The rotary caches have the export's rows (--positions: the zoo's exports are made for a
// context of 64, not the config's max_position_embeddings). A family whose GenAI-form graph
// arch does not build yet (arch.KVFamilies) is skipped, named.
func TestConfigKVMatchesExport(t *testing.T) {
	n := 0
	for _, zm := range zoo.Models() {
		g := zm.Generation
		if g == nil || g.Form != "gqa" {
			continue
		}
		data, err := zoo.Config(zm)
		require.NoError(t, err)
		var mt struct {
			ModelType string `json:"model_type"`
		}
		require.NoError(t, json.Unmarshal(data, &mt))
		if !slices.Contains(arch.KVFamilies(), mt.ModelType) {
			t.Logf("%s: skipped, arch builds the GenAI form of %v only, not %s", zm.Name, arch.KVFamilies(), mt.ModelType)
			continue
		}
		n++
		t.Run(zm.Name, func(t *testing.T) {
			cfg := writeFile(t, zm.Family+".config.json", data)
			onnx := zm.WriteTemp(t)
			qkv, dtype := "separate", []string{}
			if strings.HasSuffix(zm.Name, "_packed") {
				qkv = "packed"
			}
			if strings.HasSuffix(zm.Name, "_q4") { // GenAI's int4 CPU form: blocks of 32, float32 activations
				dtype = []string{"--dtype", "int4:fp32", "--int4-block", "32"}
			}
			rows := fmt.Sprint(g.MaxSeq)
			// The budgets stop the search inside its range (the H200's arena holds a 32 MiB workspace).
			for target, budget := range map[string]string{"cpu:2": "2MiB", "h200": "40MiB"} {
				for _, point := range [][]string{
					{"--batch", "2", "--context", rows},
					{"--batch", "3", "--context", "40", "--prompt", "9"},
					{"--batch", "?:64", "--context", rows, "--budget", budget},
				} {
					args := append([]string{"--target", target}, point...)
					want, code, stderr := kvJSON(t, append([]string{"--model", onnx}, args...)...)
					require.Equal(t, ExitOK, code, stderr)
					got, code, stderr := kvJSON(t, slices.Concat([]string{"--config", cfg, "--qkv", qkv, "--positions", rows}, dtype, args)...)
					require.Equal(t, ExitOK, code, stderr)
					how := fmt.Sprintf("%s %v", target, point)
					require.Equal(t, g.Layers*2*g.KVHeads*g.HeadDim*4, got.BytesPerToken, how)
					require.Equal(t, want.BytesPerToken, got.BytesPerToken, how)
					require.Equal(t, want.Cache, got.Cache, how)
					require.Equal(t, want.Largest, got.Largest, how)
					require.Equal(t, want.LimitedBy, got.LimitedBy, how)
					w, c := want.At, got.At
					require.InEpsilon(t, w.WeightBytes, c.WeightBytes, 0.01, how)
					require.InDelta(t, w.DeviceWeightBytes, c.DeviceWeightBytes, 0.01*float64(w.WeightBytes), how)
					require.Equal(t, w.ArenaBytes, c.ArenaBytes, "%s: arena", how)
					require.Equal(t, w.StateBytes, c.StateBytes, "%s: KV state", how)
					require.Equal(t, w.TotalBytes, c.TotalBytes, how)
					require.Equal(t, "genai", got.Graph.Form)
					t.Logf("%s: weights %d vs %d, arena %d vs %d, KV state %d, total %d", how, c.WeightBytes, w.WeightBytes, c.ArenaBytes, w.ArenaBytes, c.StateBytes, c.TotalBytes)
				}
			}
		})
	}
	require.Equal(t, 14, n, "the zoo's GenAI-form models arch builds")
}

// TestConfigKV plans Llama-3.1-8B's GenAI decode graph from its config: 128 KiB of cache per
// token (32 layers x 2 x 8 kv heads x 128 x 2 bytes), the rotary caches of the config's 131072
// positions, and a context beyond them refused by the model.
func TestConfigKV(t *testing.T) {
	path := writeFile(t, "config.json", []byte(llama31_8B))
	r, code, stderr := kvJSON(t, "--config", path, "--target", "h200", "--budget", "141GiB", "--batch", "?", "--context", "32768")
	require.Equal(t, ExitOK, code, stderr)
	require.Equal(t, int64(32*2*8*128*2), r.BytesPerToken)
	require.Equal(t, kvGraph{Form: "genai", QKV: "packed", RotaryPositions: 131072}, *r.Graph)
	require.Equal(t, "batch", r.Search)
	require.NotNil(t, r.Largest)
	require.Equal(t, "budget", r.LimitedBy)
	params := int64(8_030_261_248)
	rotary := int64(2 * 131072 * 64 * 2)
	require.GreaterOrEqual(t, r.At.WeightBytes, 2*params+rotary)
	require.Less(t, r.At.WeightBytes, 2*params+rotary+4096, "the parameters, the rotary caches and a few constants")
	require.Equal(t, *r.Largest*32768*r.BytesPerToken, r.At.StateBytes)

	r, code, stderr = kvJSON(t, "--config", path, "--target", "h200", "--budget", "1TiB", "--batch", "1", "--context", "?", "--positions", "4096")
	require.Equal(t, ExitOK, code, stderr)
	require.Equal(t, int64(4096), *r.Largest)
	require.Equal(t, "model", r.LimitedBy)
	require.Contains(t, r.Next.Problem, "beyond the 4096 positions of the rotary caches")

	stdout, stderr, code := run(t, "kv", "--config", path, "--target", "h200", "--batch", "2", "--context", "1024")
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "onnxruntime GenAI's decode graph, built from the config: GroupQueryAttention, packed q|k|v, rotary caches of 131072 positions")
	require.Contains(t, stdout, "shared-buffer form, 32 layers x 8 KV heads x 128, bfloat16")
}
