package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/generate"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// kvModel writes the shared-buffer KV fixture to a temporary file.
func kvModel(t *testing.T) string {
	t.Helper()
	return testmodels.MustGet("qwen2_gqa").WriteTemp(t)
}

func kvJSON(t *testing.T, args ...string) (kvResult, int, string) {
	t.Helper()
	stdout, stderr, code := run(t, append(append([]string{"kv"}, args...), "--format", "json")...)
	var r kvResult
	if stdout != "" {
		require.NoError(t, json.Unmarshal([]byte(stdout), &r), stdout)
	}
	return r, code, stderr
}

// runnerReservation loads m for generation as `runner generate` does (fused for the backend,
// the cache's runtime options, one session) on a backend of kind and returns what the runtime
// counts and what the allocator reserved.
func runnerReservation(t *testing.T, path, kind string, gc generate.Config) (counted, reserved int64) {
	t.Helper()
	return loadReservation(t, path, kind, func(c *generate.Cache, m *graph.Model) (engine.RuntimeOptions, error) {
		return c.RuntimeOptions(m, gc, engine.RuntimeOptions{Sessions: 1})
	}, nil)
}

// loadReservation loads m fused for the backend of kind with the cache's runtime options from
// opts, makes one session (and runs then on it, when given), and returns what the runtime
// counts and what the allocator reserved.
func loadReservation(t *testing.T, path, kind string, opts func(*generate.Cache, *graph.Model) (engine.RuntimeOptions, error),
	then func(*engine.Runtime, *engine.Session, *generate.Cache)) (counted, reserved int64) {
	t.Helper()
	m, err := graph.Load(path)
	require.NoError(t, err)
	defer m.Close()
	fo, err := engine.FuseOptions(engine.Options{Target: kernels.Target{Backend: kind}})
	require.NoError(t, err)
	fused, _, err := rewrite.Fuse(m, fo)
	require.NoError(t, err)
	fused, c, err := generate.Prepare(fused, generate.Names{})
	require.NoError(t, err)
	drv, err := kernels.LookupDriver(kind)
	require.NoError(t, err)
	be, err := drv.Open(kernels.OpenOptions{Workers: 2, Memory: 1 << 30})
	require.NoError(t, err)
	defer be.Close()
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	defer al.Close()
	ro, err := opts(c, fused)
	require.NoError(t, err)
	rt, err := engine.NewRuntime(context.Background(), fused, be, al, ro)
	require.NoError(t, err)
	defer rt.Close()
	s, err := rt.NewSession()
	require.NoError(t, err)
	defer s.Close()
	if then != nil {
		then(rt, s, c)
	}
	counted = rt.Reserve.DeviceWeightBytes + alloc.ReservedSize(max(rt.Reserve.ArenaBytes, 1)) + rt.StateBytes()
	return counted, al.Stats().ReservedBytes
}

// TestKVEqualsRunnerReservation: the estimator's total for a batch and a context is what a
// runtime made with the runner's options counts and what its allocator reserves, to the byte.
func TestKVEqualsRunnerReservation(t *testing.T) {
	models := map[string]string{"qwen2_gqa": kvModel(t), "qwen2_kv": testmodels.MustGet("qwen2_kv").WriteTemp(t)}
	for _, tc := range []struct {
		fixture, target, kind  string
		batch, context, prompt int64
	}{
		{"qwen2_gqa", "cpu:2", kernels.BackendCPU, 1, 64, 16},
		{"qwen2_gqa", "cpu:2", kernels.BackendCPU, 3, 200, 0},
		{"qwen2_gqa", "sim:2", kernels.BackendSim, 2, 100, 40},
		{"qwen2_kv", "cpu:2", kernels.BackendCPU, 2, 100, 20},
		{"qwen2_kv", "sim:2", kernels.BackendSim, 1, 300, 0},
	} {
		model := models[tc.fixture]
		t.Run(fmt.Sprintf("%s/%s/b%d/c%d", tc.fixture, tc.target, tc.batch, tc.context), func(t *testing.T) {
			args := []string{"--model", model, "--target", tc.target, "--batch", strconv.FormatInt(tc.batch, 10),
				"--context", strconv.FormatInt(tc.context, 10)}
			prompt := tc.context - 1
			if tc.prompt > 0 {
				args, prompt = append(args, "--prompt", strconv.FormatInt(tc.prompt, 10)), tc.prompt
			}
			r, code, stderr := kvJSON(t, args...)
			require.Equal(t, ExitOK, code, stderr)
			p := r.At
			require.Equal(t, p.DeviceWeightBytes+p.ArenaBytes+p.StateBytes, p.TotalBytes)
			require.EqualValues(t, 512, r.BytesPerToken, "2 layers x keys and values x 2 heads x 16 x 4 bytes")
			require.Equal(t, 512*tc.context, p.KVBytesPerSequence)
			require.Nil(t, r.Fits, "no budget, no verdict")

			counted, reserved := runnerReservation(t, model, tc.kind, generate.Config{Batch: tc.batch, Context: tc.context, Prompt: prompt})
			require.Equal(t, counted, p.TotalBytes, "what the runtime counts")
			require.Equal(t, reserved, p.TotalBytes, "what the allocator reserved")
		})
	}
}

// runnerBatchReservation loads m as `runner serve` does for continuous batching with bc (fused
// for the backend, the cache's batch runtime options, one session) on a backend of kind and
// returns what the runtime counts and what the allocator reserved.
func runnerBatchReservation(t *testing.T, path, kind string, bc generate.BatchConfig) (counted, reserved int64) {
	t.Helper()
	return loadReservation(t, path, kind, func(c *generate.Cache, m *graph.Model) (engine.RuntimeOptions, error) {
		return c.BatchRuntimeOptions(m, bc, engine.RuntimeOptions{Sessions: 1})
	}, func(rt *engine.Runtime, s *engine.Session, c *generate.Cache) {
		_, err := generate.NewBatch(rt, s, c, bc)
		require.NoError(t, err)
	})
}

// TestKVServeEqualsRunnerReservation: kv --serve's total for slot rows and a context is what a
// runtime made with runner serve's batch options counts and what its allocator reserves, to the
// byte: the slot rows, the prefill row and its move buffer, and the arena of every decode batch
// and prefill chunk.
func TestKVServeEqualsRunnerReservation(t *testing.T) {
	model := kvModel(t)
	for _, tc := range []struct {
		target, kind         string
		rows, context, chunk int64 // chunk 0: --prefill-chunk left out
	}{
		{"cpu:2", kernels.BackendCPU, 1, 64, 0},
		{"cpu:2", kernels.BackendCPU, 5, 200, 16},
		{"sim:2", kernels.BackendSim, 3, 100, 300}, // the chunk is at most the context
	} {
		t.Run(fmt.Sprintf("%s/r%d/c%d/k%d", tc.target, tc.rows, tc.context, tc.chunk), func(t *testing.T) {
			args := []string{"--model", model, "--target", tc.target, "--serve", "--batch", strconv.FormatInt(tc.rows, 10),
				"--context", strconv.FormatInt(tc.context, 10)}
			if tc.chunk > 0 {
				args = append(args, "--prefill-chunk", strconv.FormatInt(tc.chunk, 10))
			}
			r, code, stderr := kvJSON(t, args...)
			require.Equal(t, ExitOK, code, stderr)
			chunk := tc.chunk
			if chunk == 0 {
				chunk = generate.DefaultChunk
			}
			require.NotNil(t, r.Serve)
			require.Equal(t, min(chunk, tc.context), r.Serve.PrefillChunk)
			p := r.At
			require.Equal(t, tc.rows, p.Batch)
			require.Equal(t, tc.context-1, p.Prompt, "any prompt that leaves room for a new token")
			require.Equal(t, p.DeviceWeightBytes+p.ArenaBytes+p.StateBytes, p.TotalBytes)
			row := 512 * tc.context // every layer's keys and values of one row
			require.Equal(t, row*(tc.rows+1)+row, p.StateBytes-p.StateBytes%row, "slot rows, the prefill row and its move buffer, then alignment")
			require.Empty(t, r.Workspaces, "the workspace table is the per-session form's")

			counted, reserved := runnerBatchReservation(t, model, tc.kind, generate.BatchConfig{Rows: tc.rows, Context: tc.context, Chunk: chunk})
			require.Equal(t, counted, p.TotalBytes, "what the runtime counts")
			require.Equal(t, reserved, p.TotalBytes, "what the allocator reserved")
		})
	}
}

// TestKVServeSearch: kv --serve --batch ? is the most slots that fit: the next does not, planning
// either on its own agrees, and it is what generate.Cache.MostRows, which runner serve takes
// without --slots, finds for the same budget.
func TestKVServeSearch(t *testing.T) {
	model := kvModel(t)
	const budget = 4 << 20
	r, code, stderr := kvJSON(t, "--model", model, "--target", "cpu:2", "--budget", "4MiB", "--serve", "--batch", "?", "--context", "256")
	require.Equal(t, ExitOK, code, stderr)
	require.Equal(t, "batch", r.Search)
	require.NotNil(t, r.Largest)
	require.Equal(t, "budget", r.LimitedBy)
	require.LessOrEqual(t, r.At.TotalBytes, int64(budget))
	require.Greater(t, r.Next.TotalBytes, int64(budget))
	require.Equal(t, *r.Largest, r.At.Batch)
	require.Equal(t, *r.Largest+1, r.Next.Batch)

	point, code, _ := kvJSON(t, "--model", model, "--target", "cpu:2", "--serve", "--batch", strconv.FormatInt(*r.Largest, 10), "--context", "256")
	require.Equal(t, ExitOK, code)
	require.Equal(t, r.At.TotalBytes, point.At.TotalBytes)
	_, code, stderr = kvJSON(t, "--model", model, "--target", "cpu:2", "--budget", "4MiB", "--serve",
		"--batch", strconv.FormatInt(r.Next.Batch, 10), "--context", "256")
	require.Equal(t, ExitDoesNotFit, code)
	require.Contains(t, oneLine(t, stderr), fmt.Sprintf("does not fit: %d slots at context 256 needs", r.Next.Batch))

	m, err := graph.Load(model)
	require.NoError(t, err)
	defer m.Close()
	fo, err := engine.FuseOptions(engine.Options{Target: kernels.CPU(2)})
	require.NoError(t, err)
	fused, _, err := rewrite.Fuse(m, fo)
	require.NoError(t, err)
	fused, c, err := generate.Prepare(fused, generate.Names{})
	require.NoError(t, err)
	fit, err := c.MostRows(context.Background(), fused, generate.BatchConfig{Context: 256}, engine.Options{Target: kernels.CPU(2)}, budget, 1<<20)
	require.NoError(t, err)
	require.Equal(t, *r.Largest, fit.Rows)

	stdout, stderr, code := run(t, "kv", "--model", model, "--target", "cpu:2", "--budget", "4MiB", "--serve", "--batch", "?", "--context", "256")
	require.Equal(t, ExitOK, code, stderr)
	for _, want := range []string{
		"serve                    runner serve's batched session: slot rows, a prefill row and its move buffer; prompts fed 64 tokens a step",
		fmt.Sprintf("most slots               %d at context 256  limited by the budget", *r.Largest),
		fmt.Sprintf("  %d slots, context 256", r.Next.Batch),
	} {
		require.Contains(t, stdout, want)
	}
}

// TestKVSearch: the longest context and the most sequences are the last values that fit: the
// next one does not, and planning either point on its own agrees.
func TestKVSearch(t *testing.T) {
	model := kvModel(t)
	for _, tc := range []struct {
		search string
		args   []string
	}{
		{"context", []string{"--batch", "8", "--context", "?"}},
		{"batch", []string{"--batch", "?", "--context", "2048"}},
	} {
		t.Run(tc.search, func(t *testing.T) {
			r, code, stderr := kvJSON(t, append([]string{"--model", model, "--target", "cpu:2", "--budget", "64MiB"}, tc.args...)...)
			require.Equal(t, ExitOK, code, stderr)
			require.Equal(t, tc.search, r.Search)
			require.NotNil(t, r.Largest)
			require.Equal(t, "budget", r.LimitedBy)
			require.True(t, r.At.Fits)
			require.False(t, r.Next.Fits)
			require.LessOrEqual(t, r.At.TotalBytes, int64(64<<20))
			require.Greater(t, r.Next.TotalBytes, int64(64<<20))
			at, next := r.At.Context, r.Next.Context
			if tc.search == "batch" {
				at, next = r.At.Batch, r.Next.Batch
			}
			require.Equal(t, *r.Largest, at)
			require.Equal(t, *r.Largest+1, next)

			point, code, _ := kvJSON(t, "--model", model, "--target", "cpu:2", "--budget", "64MiB",
				"--batch", strconv.FormatInt(r.At.Batch, 10), "--context", strconv.FormatInt(r.At.Context, 10))
			require.Equal(t, ExitOK, code)
			require.Equal(t, r.At.TotalBytes, point.At.TotalBytes)
			_, code, stderr = kvJSON(t, "--model", model, "--target", "cpu:2", "--budget", "64MiB",
				"--batch", strconv.FormatInt(r.Next.Batch, 10), "--context", strconv.FormatInt(r.Next.Context, 10))
			require.Equal(t, ExitDoesNotFit, code)
			require.Contains(t, oneLine(t, stderr), "does not fit: batch")
		})
	}
}

func TestKVTable(t *testing.T) {
	model := kvModel(t)
	stdout, stderr, code := run(t, "kv", "--model", model, "--target", "cpu:2", "--budget", "64MiB", "--batch", "8", "--context", "?")
	require.Equal(t, ExitOK, code, stderr)
	for _, want := range []string{
		"cache                    shared-buffer form, 2 layers x 2 KV heads x 16, float32",
		"KV per token             512 B (512 bytes) per sequence",
		"longest context          ",
		"at batch 8  limited by the budget",
		"+ KV state 6.00 MiB: fits,",
		"probes                   ",
	} {
		require.Contains(t, stdout, want)
	}
}

func TestKVErrors(t *testing.T) {
	model := kvModel(t)
	gpt2 := fixture(t, "gpt2")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no model", []string{"--context", "64"}, ExitUsage, "estimator kv needs --model"},
		{"no context", []string{"--model", model}, ExitUsage, "estimator kv needs --context"},
		{"two searches", []string{"--model", model, "--context", "?", "--batch", "?", "--budget", "1GiB"}, ExitUsage, "search one at a time"},
		{"search without budget", []string{"--model", model, "--context", "?"}, ExitUsage, "needs --budget"},
		{"bad batch", []string{"--model", model, "--context", "64", "--batch", "many"}, ExitUsage, `--batch "many"`},
		{"bad maximum", []string{"--model", model, "--context", "?:x", "--budget", "1GiB"}, ExitUsage, "--context ?:x"},
		{"context within the prompt", []string{"--model", model, "--context", "16", "--prompt", "16"}, ExitUsage, "--context 16"},
		{"no cache", []string{"--model", gpt2, "--context", "64"}, ExitError, "has no recognisable KV cache: no input \"past_key_values.0.key\""},
		{"names to try", []string{"--model", gpt2, "--context", "64"}, ExitError, "--past-key-name, --past-value-name"},
		{"bad name", []string{"--model", model, "--context", "64", "--present-key-name", "k"}, ExitUsage, `--present-key-name "k"`},
		{"nothing fits", []string{"--model", model, "--target", "cpu:2", "--context", "?", "--budget", "1KiB"}, ExitDoesNotFit, "does not fit: even batch 1 at context 2"},
		{"point does not fit", []string{"--model", model, "--target", "cpu:2", "--context", "4096", "--batch", "64", "--budget", "64MiB"}, ExitDoesNotFit, "does not fit: batch 64 at context 4096 needs"},
		{"serve with a prompt", []string{"--model", model, "--context", "64", "--serve", "--prompt", "8"}, ExitUsage, "--prompt does not apply to --serve"},
		{"chunk without serve", []string{"--model", model, "--context", "64", "--prefill-chunk", "8"}, ExitUsage, "--prefill-chunk applies to --serve only"},
		{"bad chunk", []string{"--model", model, "--context", "64", "--serve", "--prefill-chunk", "0"}, ExitUsage, "--prefill-chunk 0: want 1 to"},
		{"serve of the concat form", []string{"--model", testmodels.MustGet("qwen2_kv").WriteTemp(t), "--context", "64", "--serve"}, ExitError,
			"--serve plans runner serve's batched session, which needs the shared-buffer (GenAI) form"},
		{"no slot fits", []string{"--model", model, "--target", "cpu:2", "--serve", "--batch", "?", "--context", "4096", "--budget", "1MiB"}, ExitDoesNotFit,
			"does not fit: even 1 slot at context 4096 needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, append([]string{"kv"}, tc.args...)...)
			require.Equal(t, tc.code, code, stderr)
			require.Contains(t, oneLine(t, stderr), tc.want)
			require.NotContains(t, stderr, "generate: ", "no library prefixes")
		})
	}
}
