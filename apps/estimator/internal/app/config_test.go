package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels/zoo"
)

// llama31_8B is Llama-3.1-8B's published config.json, less its token ids.
const llama31_8B = `{"architectures": ["LlamaForCausalLM"], "attention_bias": false, "hidden_act": "silu",
 "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072, "mlp_bias": false,
 "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
 "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
 "original_max_position_embeddings": 8192, "rope_type": "llama3"}, "rope_theta": 500000.0,
 "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 128256}`

func reportJSON(t *testing.T, args ...string) report {
	t.Helper()
	stdout, stderr, code := run(t, append(append([]string{"report"}, args...), "--format", "json")...)
	require.Equal(t, ExitOK, code, stderr)
	var r report
	require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	return r
}

// TestConfigReport plans Llama-3.1-8B from its config: 8,030,261,248 parameters in bf16 (and
// the rotary frequencies and the graph's constants, a few hundred bytes), the fused graph, the
// architecture in the JSON; --dtype fp32 doubles the weights.
func TestConfigReport(t *testing.T) {
	path := writeFile(t, "config.json", []byte(llama31_8B))
	r := reportJSON(t, "--config", path, "--dim", "batch=1", "--dim", "seq=2048", "--target", "h200")
	require.NotNil(t, r.Model.Config)
	require.Equal(t, configInfo{ModelType: "llama", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128, Vocab: 128256, DType: "bfloat16"}, *r.Model.Config)
	require.True(t, r.Fusion.FromConfig)
	params := int64(8_030_261_248)
	require.GreaterOrEqual(t, r.WeightsBytes, 2*params)
	require.Less(t, r.WeightsBytes, 2*params+4096, "the parameters and a few constants")
	require.Greater(t, r.ArenaBytes, int64(0))

	f := reportJSON(t, "--config", path, "--dim", "batch=1", "--dim", "seq=2048", "--dtype", "fp32", "--last-logits")
	require.Equal(t, "float32", f.Model.Config.DType)
	require.GreaterOrEqual(t, f.WeightsBytes, 4*params)
	require.Less(t, f.WeightsBytes, 4*params+4096)

	stdout, stderr, code := run(t, "report", "--config", path, "--dim", "batch=1", "--dim", "seq=16")
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "llama, built from the config: 32 layers, hidden 4096, 32 heads, 8 kv heads x 128, vocab 128256, bfloat16")
	require.Contains(t, stdout, "built fused")
}

// TestConfigMatchesExport: report --config of a zoo model's config.json and report --model of its
// export agree on the arena to the byte, on the CPU and the H200.
func TestConfigMatchesExport(t *testing.T) {
	for _, zm := range zoo.Models() {
		if zm.Name != "llama.dyn_mask" && zm.Name != "qwen2.dyn_mask" {
			continue
		}
		data, err := zoo.Config(zm)
		require.NoError(t, err)
		cfg := writeFile(t, zm.Family+".config.json", data)
		onnx := zm.WriteTemp(t)
		for _, target := range []string{"cpu:2", "h200"} {
			dims := []string{"--dim", "batch=1:8", "--dim", "seq=1:1024", "--target", target}
			fromConfig := reportJSON(t, append([]string{"--config", cfg}, dims...)...)
			fromExport := reportJSON(t, append([]string{"--model", onnx}, dims...)...)
			require.Equal(t, fromExport.ArenaBytes, fromConfig.ArenaBytes, "%s on %s", zm.Name, target)
			require.InEpsilon(t, fromExport.WeightsBytes, fromConfig.WeightsBytes, 0.01, "%s on %s", zm.Name, target)
		}
	}
}

// TestConfigFit: fit --config plans generation as kv --config does: --dim seq is the context,
// batch=? by default (the most sequences), the budget the target's memory unless given.
func TestConfigFit(t *testing.T) {
	path := writeFile(t, "config.json", []byte(llama31_8B))
	stdout, stderr, code := run(t, "fit", "--config", path, "--target", "h200", "--dim", "seq=32768", "--prompt", "2048", "--format", "json")
	require.Equal(t, ExitOK, code, stderr)
	var f kvResult
	require.NoError(t, json.Unmarshal([]byte(stdout), &f), stdout)
	require.Equal(t, "batch", f.Search)
	require.Equal(t, "target", f.BudgetFrom)
	require.Equal(t, int64(150109880320), *f.BudgetBytes, "the H200's memory")
	k, code, stderr := kvJSON(t, "--config", path, "--target", "h200", "--batch", "?", "--context", "32768", "--prompt", "2048", "--budget", "150109880320")
	require.Equal(t, ExitOK, code, stderr)
	f.BudgetFrom = ""
	require.Equal(t, k, f, "fit --config is kv --config")
	require.Greater(t, *f.Largest, int64(8))

	stdout, stderr, code = run(t, "fit", "--config", path, "--target", "h200", "--dim", "batch=8", "--dim", "seq=?:65536", "--budget", "141GiB", "--prompt", "1024")
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stdout, "longest context")
	_, stderr, code = run(t, "fit", "--config", path, "--target", "h200", "--dim", "seq=4096", "--budget", "10GiB")
	require.Equal(t, ExitDoesNotFit, code, stderr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dim", "batch=4"}, "fit --config needs --dim seq=N"},
		{[]string{"--dim", "seq=1:4096"}, "takes a value or ? for each dim"},
		{[]string{"--dim", "seq=4096", "--dim", "batch=2"}, "nothing to search"},
		{[]string{"--dim", "seq=4096", "--dim", "total_seq=2"}, "--dim total_seq: fit --config plans generation"},
		{[]string{"--dim", "seq=4096", "--target", "cpu"}, "needs --budget: the target cpu has no memory size"},
	} {
		_, stderr, code := run(t, append([]string{"fit", "--config", path, "--target", "h200"}, tc.args...)...)
		require.Equal(t, ExitUsage, code, "%v: %s", tc.args, stderr)
		require.Contains(t, oneLine(t, stderr), tc.want, tc.args)
	}
}

// TestConfigErrors: every mistake is one line naming what to fix.
func TestConfigErrors(t *testing.T) {
	good := writeFile(t, "config.json", []byte(llama31_8B))
	missing := writeFile(t, "missing.json", []byte(strings.Replace(llama31_8B, `"intermediate_size": 14336,`, "", 1)))
	unknown := writeFile(t, "mamba.json", []byte(`{"model_type": "mamba"}`))
	window := writeFile(t, "phi3.json", []byte(`{"model_type": "phi3", "hidden_size": 64, "num_hidden_layers": 2,
	  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "sliding_window": 2047}`))
	unknownKV := writeFile(t, "gemma.json", []byte(strings.Replace(llama31_8B, `"model_type": "llama"`, `"model_type": "gemma", "hidden_activation": "gelu_pytorch_tanh"`, 1)))
	noPositions := writeFile(t, "nopos.json", []byte(strings.Replace(llama31_8B, `"max_position_embeddings": 131072,`, "", 1)))
	dims := []string{"--dim", "batch=1", "--dim", "seq=8"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report", "--config", unknown}, ExitError, `unknown model_type; supported: bloom, cohere, falcon, gemma, gemma2, gemma3_text, gpt2, gpt_bigcode, gpt_neox, gptj, granite, llama, mistral, mixtral, olmo2, opt, phi, phi3, qwen2, qwen3, smollm3, stablelm, starcoder2`},
		{[]string{"report", "--config", missing}, ExitError, `field "intermediate_size": missing`},
		{[]string{"report", "--config", good + ".nope"}, ExitError, "no such file"},
		{[]string{"report", "--config", good, "--model", "m.onnx"}, ExitUsage, "--model and --config: give one"},
		{[]string{"report", "--config", good, "--no-fuse"}, ExitUsage, "--no-fuse and --config"},
		{[]string{"report", "--config", good, "--dtype", "int3"}, ExitUsage, `--dtype "int3": want fp32, bf16, fp16 or int4[:fp32|bf16|fp16]`},
		{[]string{"report", "--config", good, "--dtype", "int4"}, ExitUsage, "--dtype int4 plans the decode graph of onnxruntime GenAI's int4 models: use kv"},
		{[]string{"kv", "--config", good, "--context", "4096", "--dtype", "int4:int8"}, ExitUsage, `--dtype "int4:int8": int4's activations are int4:fp32, int4:bf16 or int4:fp16`},
		{[]string{"kv", "--config", good, "--context", "4096", "--dtype", "int4", "--int4-block", "48"}, ExitUsage, "--int4-block 48: want one of [16 32 64 128 256]"},
		{[]string{"kv", "--config", good, "--context", "4096", "--int4-block", "64"}, ExitUsage, "--int4-block applies to --dtype int4 only"},
		{[]string{"report", "--dtype", "fp16"}, ExitUsage, "--dtype applies to --config only"},
		{[]string{"kv", "--config", unknownKV, "--context", "4096"}, ExitError, `the KV-cache graph (onnxruntime GenAI's form) is not built for this family yet; supported: gemma3_text, granite, llama, mistral, mixtral, phi3, qwen2`},
		{[]string{"kv", "--config", good, "--context", "4096", "--last-logits"}, ExitUsage, "--last-logits does not apply to kv and fit with --config"},
		{[]string{"kv", "--config", good, "--context", "4096", "--qkv", "fused"}, ExitUsage, `--qkv "fused": want packed or separate`},
		{[]string{"kv", "--config", good, "--context", "4096", "--positions", "1"}, ExitUsage, "--positions 1: want 2 to"},
		{[]string{"kv", "--model", "m.onnx", "--context", "4096", "--positions", "64"}, ExitUsage, "--positions applies to --config only"},
		{[]string{"kv", "--config", noPositions, "--context", "4096"}, ExitError, `field "max_position_embeddings": missing`},
	} {
		args := tc.args
		if args[0] != "kv" {
			args = append(args, dims...)
		}
		_, stderr, code := run(t, args...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		require.Contains(t, oneLine(t, stderr), tc.want, tc.args)
	}
	// A sliding window plans as its fused Attention's window, or ignored as plain causal attention.
	for _, extra := range [][]string{nil, {"--ignore-window"}} {
		_, stderr, code := run(t, append(append([]string{"report", "--config", window}, extra...), dims...)...)
		require.Equal(t, ExitOK, code, stderr)
	}
}
