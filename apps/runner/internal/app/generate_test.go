package app

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// gqaModel writes the shared-buffer KV fixture to a temporary file.
func gqaModel(t *testing.T) string {
	t.Helper()
	return testmodels.MustGet("qwen2_gqa").WriteTemp(t)
}

func TestGenerateTable(t *testing.T) {
	model := gqaModel(t)
	r := runner(t, "generate", "--model", model, "--prompt-len", "12", "--max-new-tokens", "24", "--batch", "2", "--workers", "2")
	require.Equal(t, 0, r.code, r.stderr)
	requireReleased(t, r)
	for _, want := range []string{
		"cache     shared-buffer form, 2 layers x 2 KV heads x 16, float32: 512 B per token per sequence",
		"envelope  batch=2 max_seq=64 seq=1:16 total_seq=1:64",
		"prompt    2 x 12 tokens, random (seed 1); context 64, 24 new tokens, greedy",
		"warm-up      one untimed generation",
		"first token  ",
		"ms/token     p50 ",
		"over 23 decode steps",
		"tokens/s     ",
		"KV state 64.00 KiB for batch 2 x context 64 (512 B per token per sequence)",
		"timed run    0 plans, 0 program compiles, 0 device mallocs, 0 allocator allocations,",
		"(sequence 0 of 2)",
	} {
		require.Contains(t, r.stdout, want)
	}
}

// TestGenerateJSONAndOut: --format json carries the figures and the tokens, --out writes the
// same tokens as int64 [batch, new], and --prompt reads the prompt (its rows are the batch).
func TestGenerateJSONAndOut(t *testing.T) {
	model := gqaModel(t)
	dir := t.TempDir()
	prompt := kernels.MustTensor(graph.Int64, 3, 5)
	for i := range prompt.Int64s() {
		prompt.Int64s()[i] = int64(i * 11 % 256)
	}
	in := filepath.Join(dir, "prompt.npy")
	require.NoError(t, npyfile.WriteFile(in, prompt))
	out := filepath.Join(dir, "new.npy")
	r := runner(t, "generate", "--model", model, "--prompt", in, "--max-new-tokens", "9", "--context", "32",
		"--top-k", "5", "--temperature", "0.8", "--seed", "4", "--device", "sim", "--format", "json", "--out", out)
	require.Equal(t, 0, r.code, r.stderr)
	requireReleased(t, r)
	var rep generateReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, "shared-buffer", rep.Cache.Form)
	require.EqualValues(t, 3, rep.Batch)
	require.EqualValues(t, 5, rep.GenResult.Prompt)
	require.EqualValues(t, 32, rep.Context)
	require.Equal(t, "top-k 5, temperature 0.8, seed 4", rep.Sampler)
	require.Equal(t, in, rep.Prompt)
	require.Len(t, rep.Tokens, 3)
	require.Equal(t, rep.Memory.DeviceWeightBytes+rep.Memory.ArenaBytes+rep.Memory.StateBytes, rep.Memory.ReservedBytes)
	require.Positive(t, rep.Memory.DeviceWeightBytes, "the sim device holds the weights")
	require.EqualValues(t, 3*32*512, rep.Memory.StateBytes)
	require.Zero(t, rep.Timed.Plans)
	require.Zero(t, rep.Timed.Compiles)
	require.Equal(t, 8, rep.Timed.DecodeSteps)

	got, err := npyfile.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, []int64{3, 9}, got.Shape)
	require.Equal(t, graph.Int64, got.DType)
	var flat []int64
	for _, row := range rep.Tokens {
		flat = append(flat, row...)
	}
	require.Equal(t, flat, got.Int64s())
}

func TestGenerateErrors(t *testing.T) {
	model := gqaModel(t)
	gpt2 := testmodels.MustGet("gpt2").WriteTemp(t)
	dir := t.TempDir()
	floats := filepath.Join(dir, "f.npy")
	require.NoError(t, npyfile.WriteFile(floats, kernels.MustTensor(graph.Float32, 1, 4)))
	ids := filepath.Join(dir, "ids.npy")
	require.NoError(t, npyfile.WriteFile(ids, kernels.MustTensor(graph.Int64, 2, 4)))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{}, 2, "--model is required: give the .onnx file of a decoder with a KV cache (the bundled model has none) (see runner generate --help)"},
		{"no cache", []string{"--model", gpt2}, 1, "has no recognisable KV cache: no input \"past_key_values.0.key\""},
		{"no cache names the flags", []string{"--model", gpt2}, 1, "give the names with --input-ids-name, --mask-name,"},
		{"wrong names", []string{"--model", model, "--past-key-name", "cache.%d.k"}, 1, "has no recognisable KV cache: layer 0 lacks one of cache.0.k, past_key_values.0.value (inputs)"},
		{"name without layer", []string{"--model", model, "--past-key-name", "cache.k"}, 2, `--past-key-name "cache.k": want a name with one %d`},
		{"prompt beyond context", []string{"--model", model, "--prompt-len", "30", "--context", "32"}, 2,
			"a prompt of 30 tokens and 32 new tokens need a context of at least 61 positions, but --context is 32: raise --context to 61"},
		{"prompt longer than the context", []string{"--model", model, "--prompt-len", "100", "--context", "64"}, 2,
			"a prompt of 100 tokens and 32 new tokens need a context of at least 131 positions, but --context is 64: raise --context to 131"},
		{"cache does not fit", []string{"--model", model, "--batch", "64", "--context", "4096", "--limit", "4MiB"}, 3,
			"does not fit: batch 64 at context 4096 needs"},
		{"cache share named", []string{"--model", model, "--batch", "64", "--context", "4096", "--limit", "4MiB"}, 3,
			"KV state 128.00 MiB) but only 4.00 MiB is available under --limit; the KV state is 92% of it: lower --context or --batch"},
		{"prompt and prompt-len", []string{"--model", model, "--prompt", ids, "--prompt-len", "3"}, 2, "--prompt and --prompt-len: give one"},
		{"prompt of floats", []string{"--model", model, "--prompt", floats}, 1, "dtype float32; want int64"},
		{"batch disagrees", []string{"--model", model, "--prompt", ids, "--batch", "3"}, 2, "--batch 3, but --prompt " + ids + " has 2 rows"},
		{"missing prompt", []string{"--model", model, "--prompt", filepath.Join(dir, "nope.npy")}, 1, "no such file"},
		{"no new tokens", []string{"--model", model, "--max-new-tokens", "0"}, 2, "--max-new-tokens 0"},
		{"zero temperature", []string{"--model", model, "--temperature", "0"}, 2, "--temperature 0: want more than 0"},
		{"negative top-k", []string{"--model", model, "--top-k", "-2"}, 2, "--top-k -2"},
		{"tiny context", []string{"--model", model, "--context", "1"}, 2, "--context 1"},
		{"two devices", []string{"--model", model, "--device", "sim,sim:1"}, 2, "generation runs on one device"},
		{"no dim flag", []string{"--model", model, "--dim", "batch=2"}, 2, "flag provided but not defined: -dim (see runner generate --help)"},
		{"profile on the cpu", []string{"--model", model, "--profile"}, 2, "--profile times kernels with the device's timing events: it needs --device cuda (the cpu device has none) (see runner generate --help)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runner(t, append([]string{"generate"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			require.NotContains(t, r.stderr, "generate: ", "no library prefixes")
			require.NotContains(t, r.stderr, "engine: ")
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			require.Len(t, lines, 1, r.stderr)
			require.Empty(t, r.stdout, "refused before any output")
			requireReleased(t, r)
		})
	}
}
