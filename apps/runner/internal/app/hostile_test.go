package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// runnerWithin runs the runner like runner, failing the test if it has not returned within d:
// a command line that makes it spin fails here instead of hanging the test binary.
func runnerWithin(t *testing.T, d time.Duration, args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runner(t, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(d):
		t.Fatalf("runner %s has not returned after %v", strings.Join(args, " "), d)
	}
	return result{}
}

// TestHostileNumbers: integer flags are bounded where they are read, with the bound and its
// reason in the message; sums and roundings of what is left cannot overflow, so that no number
// makes the runner spin (a doubling that wrapped to 0), panic (a negative length) or word an
// overflowed number.
func TestHostileNumbers(t *testing.T) {
	kv := testmodels.MustGet("qwen2_kv").WriteTemp(t)
	const dimBound = "want at most 1099511627776 (the largest dim carve admits)"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"new tokens whose bucket overflows", []string{"generate", "--model", kv, "--max-new-tokens", "4611686018427387904"}, ExitUsage,
			"--max-new-tokens 4611686018427387904: " + dimBound},
		{"new tokens whose sum with the prompt overflows", []string{"generate", "--model", kv, "--max-new-tokens", "9223372036854775807"}, ExitUsage,
			"--max-new-tokens 9223372036854775807: " + dimBound},
		{"largest context", []string{"generate", "--model", kv, "--context", "9223372036854775807"}, ExitUsage,
			"--context 9223372036854775807: " + dimBound},
		{"largest prompt", []string{"generate", "--model", kv, "--prompt-len", "9223372036854775807"}, ExitUsage,
			"--prompt-len 9223372036854775807: " + dimBound},
		{"largest batch", []string{"generate", "--model", kv, "--batch", "9223372036854775807"}, ExitUsage,
			"--batch 9223372036854775807: " + dimBound},
		{"prompt that leaves no context", []string{"generate", "--model", kv, "--prompt-len", "1099511627776"}, ExitUsage,
			"a prompt of 1099511627776 tokens and 32 new tokens need a context of 1099511627807 positions, more than the 1099511627776 carve admits: " +
				"shorten the prompt or --max-new-tokens"},
		{"new tokens beyond any context", []string{"generate", "--model", kv, "--max-new-tokens", "1099511627776"}, ExitUsage,
			"a prompt of 16 tokens and 1099511627776 new tokens need a context of 1099511627791 positions, more than the 1099511627776 carve admits"},
		{"cache whose size overflows", []string{"generate", "--model", kv, "--batch", "1099511627776", "--context", "1099511627776"}, ExitError,
			"batch 1099511627776 at context 1099511627776 cannot be planned: a cache of batch 1099511627776 and 1099511627777 positions overflows (lower --batch or --context)"},
		{"largest top-k", []string{"generate", "--model", kv, "--top-k", "9223372036854775807"}, ExitUsage,
			"--top-k 9223372036854775807: want at most 1099511627776 (more than the vocabulary samples among every token)"},
		{"too many sessions", []string{"run", "--concurrency", "5200"}, ExitUsage,
			"--concurrency 5200: want at most 4096 (each session holds a stream, and on the cpu and sim devices up to two OS threads; " +
				"Go ends a process that holds more than 10000)"},
		{"too many sessions over devices", []string{"run", "--device", "sim,sim:1", "--concurrency", "3000"}, ExitUsage,
			"--concurrency 3000 on 2 device(s): at most 4096 sessions in all"},
		{"too many workers", []string{"run", "--workers", "5000"}, ExitUsage,
			"--workers 5000: want at most 4096 (the CPU kernels plan a workspace for each worker)"},
		{"too many repeats", []string{"run", "--repeat", "9223372036854775807"}, ExitUsage,
			"--repeat 9223372036854775807: want at most 10000000 (every run's latency is kept)"},
		{"too many runs", []string{"bench", "--runs", "2000000000"}, ExitUsage,
			"--runs 2000000000: want at most 10000000 (every run's latency is kept; --duration times longer soaks in fixed-size histograms)"},
		{"too many warm-up runs", []string{"bench", "--warmup", "2000000000"}, ExitUsage, "--warmup 2000000000: want at most 10000000"},
		{"too many profiled runs", []string{"bench", "--profile", "2000000000"}, ExitUsage, "--profile 2000000000: want at most 10000000 (as --runs)"},
		{"temperature NaN", []string{"generate", "--model", kv, "--temperature", "NaN"}, ExitUsage,
			"--temperature NaN: want a finite number more than 0 (leave it out for greedy choice)"},
		{"temperature Inf", []string{"generate", "--model", kv, "--temperature", "Inf"}, ExitUsage, "--temperature +Inf: want a finite number more than 0"},
		{"temperature -Inf", []string{"generate", "--model", kv, "--temperature", "-Inf"}, ExitUsage, "--temperature -Inf: want more than 0"},
		{"name with another verb", []string{"generate", "--model", kv, "--past-key-name", "foo.%s.%d"}, ExitUsage,
			`--past-key-name "foo.%s.%d": want a name with one %d for the layer and no other %, e.g. past_key_values.%d.key`},
		{"name with a width", []string{"generate", "--model", kv, "--present-value-name", "p.%3d.v"}, ExitUsage,
			`--present-value-name "p.%3d.v": want a name with one %d for the layer and no other %`},
		{"name with a verb", []string{"generate", "--model", kv, "--logits-name", "logits%d"}, ExitUsage,
			`--logits-name "logits%d": want a name (without %)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runnerWithin(t, time.Minute, tc.args...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			require.NotContains(t, r.stderr, "-922337203685477", "no overflowed numbers")
			require.NotContains(t, r.stderr, "%!", "no format errors")
			require.NotContains(t, r.stderr, "generate: ", "no library prefixes")
			require.NotContains(t, r.stderr, "goroutine", "no stacks")
			require.Len(t, strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n"), 1, r.stderr)
			require.Empty(t, r.stdout, "refused before any output")
			requireReleased(t, r)
		})
	}
}

// readFIFO makes a FIFO in a temporary directory and reads it in the background: the channel
// gets what one writer wrote, up to its close.
func readFIFO(t *testing.T, dir, name string) (string, <-chan []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, syscall.Mkfifo(p, 0o644))
	got := make(chan []byte, 1)
	go func() {
		b, err := os.ReadFile(p)
		if err != nil {
			b = []byte(err.Error())
		}
		got <- b
	}()
	return p, got
}

// requireFIFO checks that p is still a FIFO: written through, not replaced by a regular file
// (as root, --out /dev/null replaced /dev/null).
func requireFIFO(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	require.Equal(t, fs.ModeNamedPipe, fi.Mode().Type(), "%s is still a FIFO", p)
}

// TestHostileOutputs: an output path that is a FIFO (or a character device) is written
// through, never replaced; one that is a directory is refused before the model is loaded (it
// failed after the whole generation, "rename ...: file exists").
func TestHostileOutputs(t *testing.T) {
	kv := testmodels.MustGet("qwen2_kv").WriteTemp(t)
	dir := t.TempDir()

	fifo, got := readFIFO(t, dir, "new.npy")
	r := runnerWithin(t, time.Minute, "generate", "--model", kv, "--prompt-len", "4", "--max-new-tokens", "3", "--out", fifo)
	require.Equal(t, ExitOK, r.code, r.stderr)
	requireFIFO(t, fifo)
	tokens, err := npyfile.Decode(<-got)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 3}, tokens.Shape)
	require.Contains(t, r.stdout, "out          "+fifo+": int64 [1, 3]")

	// run --out DIR writes each output into DIR: a FIFO there is written through as well.
	outs := filepath.Join(dir, "outs")
	require.NoError(t, os.Mkdir(outs, 0o755))
	logits, got := readFIFO(t, outs, "logits.npy")
	r = runnerWithin(t, time.Minute, "run", "--out", outs)
	require.Equal(t, ExitOK, r.code, r.stderr)
	requireFIFO(t, logits)
	out, err := npyfile.Decode(<-got)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 16, 256}, out.Shape)

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	blocked := filepath.Join(dir, "blocked")
	require.NoError(t, os.MkdirAll(filepath.Join(blocked, "logits.npy"), 0o755))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"generate into a directory", []string{"generate", "--model", kv, "--out", sub},
			"--out " + sub + " is a directory: give a file name, e.g. " + filepath.Join(sub, "new_tokens.npy")},
		{"generate into a missing model's directory", []string{"generate", "--model", filepath.Join(dir, "none.onnx"), "--out", sub},
			"--out " + sub + " is a directory"},
		{"run onto a directory", []string{"run", "--out", blocked},
			"--out " + blocked + `: output "logits": ` + filepath.Join(blocked, "logits.npy") + " is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runnerWithin(t, time.Minute, tc.args...)
			require.Equal(t, ExitError, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			require.Empty(t, r.stdout, "refused before any output")
			requireReleased(t, r)
		})
	}
	fi, err := os.Stat(sub)
	require.NoError(t, err)
	require.True(t, fi.IsDir())
}

// TestBenchDurationShorterThanARun: a --duration shorter than one run still times one run on
// every session (it reported 0 timed runs with every percentile 0.000, and exit 0), and the
// table says why the benchmark took longer than the duration.
func TestBenchDurationShorterThanARun(t *testing.T) {
	r := runnerWithin(t, time.Minute, "bench", "--duration", "1ns", "--warmup", "1", "--concurrency", "2", "--format", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var rep benchReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.GreaterOrEqual(t, rep.Runs, 2, "a timed run on each session")
	require.Positive(t, rep.Latency.Min)
	require.Positive(t, rep.Latency.P50)
	require.True(t, rep.DurationShort)

	r = runnerWithin(t, time.Minute, "bench", "--duration", "1ns", "--warmup", "1")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "runs        1 timed on 1 session(s)")
	require.Contains(t, r.stdout, "--duration 1ns passed before a session's first run ended: each session timed at least one")
	require.NotContains(t, r.stdout, "p50 0.000 ")
}

// TestNaNOutputsInTheTable: an output with NaNs says so in the table, not only in the JSON
// ("nans"): its MIN, MAX and MEAN are of the other elements.
func TestNaNOutputsInTheTable(t *testing.T) {
	fx := testmodels.MustGet("contrib_norm")
	model := fx.WriteTemp(t)
	m, err := graph.Load(model)
	require.NoError(t, err)
	defer m.Close()
	dir := t.TempDir()
	args := writeInputs(t, m, fx.Bindings[len(fx.Bindings)-1], dir) // more than one row
	x := strings.TrimPrefix(args[1], "x=")
	in, err := npyfile.ReadFile(x)
	require.NoError(t, err)
	in.Float32s()[0] = float32(math.NaN()) // the first row's norms are NaN
	require.NoError(t, npyfile.WriteFile(x, in))

	r := runnerWithin(t, time.Minute, append([]string{"run", "--model", model, "--format", "json"}, args...)...)
	require.Equal(t, ExitOK, r.code, r.stderr)
	var rep runReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	nans := map[string]int64{}
	for _, o := range rep.Outputs {
		nans[o.Name] = o.NaNs
	}
	row := in.Shape[len(in.Shape)-1]
	require.Equal(t, map[string]int64{"bg": row, "sln_sum": 1}, nans, "the norm's row, and the skip sum's element")

	r = runnerWithin(t, time.Minute, append([]string{"run", "--model", model}, args...)...)
	require.Equal(t, ExitOK, r.code, r.stderr)
	total := int64(in.Len())
	for name, n := range nans {
		require.Contains(t, r.stdout, fmt.Sprintf("%s: %d of %d elements are NaN; MIN, MAX and MEAN are of the other %d", name, n, total, total-n))
	}

	// An output of NaNs alone shows NaN, not "-" (no numbers, as for a bool).
	all := kernels.MustTensor(graph.Float32, 4)
	for i := range all.Float32s() {
		all.Float32s()[i] = float32(math.NaN())
	}
	var b strings.Builder
	printRun(&b, &runReport{Outputs: []tensorInfo{describe("y", all, "")}})
	require.Contains(t, b.String(), "y       float32  [4]    NaN  NaN  NaN   -")
	require.Contains(t, b.String(), "y: all 4 elements are NaN\n")
}

// TestExitCodeRule: one rule, the estimator's too (README.md, "Exit codes"): a file the user
// named exits 1 whatever is wrong with it (missing, corrupt, of the wrong dtype or rank, with
// ids outside the vocabulary: a wrong dtype or rank exited 2, a corrupt file 1); the command
// line exits 2; a panic, a bug, exits 70 with its stack (Go's own 2 read as a usage error).
func TestExitCodeRule(t *testing.T) {
	kv := testmodels.MustGet("qwen2_kv").WriteTemp(t)
	dir := t.TempDir()
	write := func(name string, tn kernels.Tensor) string {
		p := filepath.Join(dir, name)
		require.NoError(t, npyfile.WriteFile(p, tn))
		return p
	}
	floats := write("floats.npy", kernels.MustTensor(graph.Float32, 1, 4))
	rank3 := write("rank3.npy", kernels.MustTensor(graph.Int64, 1, 2, 2))
	outside := kernels.MustTensor(graph.Int64, 1, 3)
	copy(outside.Int64s(), []int64{1, 2, 1 << 20})
	vocab := write("vocab.npy", outside)
	corrupt := filepath.Join(dir, "corrupt.npy")
	require.NoError(t, os.WriteFile(corrupt, []byte("\x93NUMPY\x01\x00junk"), 0o644))
	ids := write("ids.npy", kernels.MustTensor(graph.Int64, 2, 4))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"prompt of floats", []string{"--prompt", floats}, ExitError, "--prompt " + floats + ": dtype float32; want int64 (or int32) token ids"},
		{"prompt of rank 3", []string{"--prompt", rank3}, ExitError, "--prompt " + rank3 + ": shape [1 2 2]; want token ids [batch, length]"},
		{"corrupt prompt", []string{"--prompt", corrupt}, ExitError, "bad .npy file " + corrupt},
		{"missing prompt", []string{"--prompt", filepath.Join(dir, "none.npy")}, ExitError, "no such file"},
		{"prompt is a directory", []string{"--prompt", dir}, ExitError, dir + " is not a regular file"},
		{"ids outside the vocabulary", []string{"--prompt", vocab}, ExitError,
			"--prompt " + vocab + ": token 1048576 (row 0, position 2) is outside the model's vocabulary [0, 256)"},
		{"batch against the file", []string{"--prompt", ids, "--batch", "3"}, ExitUsage, "--batch 3, but --prompt " + ids + " has 2 rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runnerWithin(t, time.Minute, append([]string{"generate", "--model", kv}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			require.Len(t, strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n"), 1, r.stderr)
			requireReleased(t, r)
		})
	}

	// A panic inside a command (here its output's writer) is an internal error, with the stack,
	// after the runner has been closed on the way out.
	var errb strings.Builder
	closed := map[string]bool{}
	code := Main(context.Background(), []string{"runner", "run"}, Env{Stdout: panicWriter{}, Stderr: &errb, DeviceMemory: 1 << 30,
		Observe: func(stage string, _ alloc.Stats) { closed[stage] = true }})
	require.Equal(t, ExitInternal, code, errb.String())
	first, _, _ := strings.Cut(errb.String(), "\n")
	require.True(t, strings.HasPrefix(first, "runner: internal error: "), errb.String())
	require.Contains(t, first, "the writer broke")
	require.True(t, strings.HasSuffix(first, " (a bug: please report it with the stack below)"), first)
	require.Contains(t, errb.String(), "goroutine ")
	require.True(t, closed["after-close"], "the runner was closed")
}

// panicWriter panics at every write, as a bug would.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("the writer broke") }
