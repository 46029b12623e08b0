package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/engine/generate"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// TestServeEqualsGenerate starts `runner serve` on 127.0.0.1:0, checks that its greedy
// completions are `runner generate`'s tokens for the same prompts, then stops it with SIGTERM:
// it drains and exits 0.
func TestServeEqualsGenerate(t *testing.T) {
	model := gqaModel(t)
	prompt := kernels.MustTensor(graph.Int64, 2, 6)
	for i := range prompt.Int64s() {
		prompt.Int64s()[i] = int64(i * 37 % 256)
	}
	in := filepath.Join(t.TempDir(), "prompt.npy")
	require.NoError(t, npyfile.WriteFile(in, prompt))
	gen := runner(t, "generate", "--model", model, "--prompt", in, "--max-new-tokens", "12", "--context", "64", "--format", "json")
	require.Equal(t, 0, gen.code, gen.stderr)
	var rep generateReport
	require.NoError(t, json.Unmarshal([]byte(gen.stdout), &rep))

	var out, errb bytes.Buffer
	ready := make(chan string, 1)
	code := make(chan int, 1)
	env := Env{Stdout: &out, Stderr: &errb, DeviceMemory: 1 << 30, ServeReady: func(addr string) { ready <- addr }}
	go func() {
		code <- Main(context.Background(), []string{"runner", "serve", "--model", model, "--addr", "127.0.0.1:0",
			"--slots", "2", "--context", "64", "--workers", "2", "--api-key", "k"}, env)
	}()
	var url string
	select {
	case addr := <-ready:
		url = "http://" + addr
	case c := <-code:
		t.Fatalf("runner serve exited %d before it was ready: %s", c, errb.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("runner serve was not ready within 2 minutes")
	}
	rows := [][]int64{prompt.Int64s()[:6], prompt.Int64s()[6:]}
	body, _ := json.Marshal(map[string]any{"prompt": rows, "max_tokens": 12, "temperature": 0})
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	var c struct {
		Choices []struct {
			TokenIDs []int64 `json:"token_ids"`
		}
	}
	require.NoError(t, json.Unmarshal(b, &c))
	require.Len(t, c.Choices, 2)
	require.Equal(t, rep.Tokens[0], c.Choices[0].TokenIDs)
	require.Equal(t, rep.Tokens[1], c.Choices[1].TokenIDs)

	resp, err = http.Get(url + "/v2/models/" + strings.TrimSuffix(filepath.Base(model), ".onnx"))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "the key guards every route but the probes")

	// The command watches SIGTERM from before it is ready: this one drains it.
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGTERM))
	select {
	case c := <-code:
		require.Equal(t, 0, c, errb.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("runner serve did not stop within 2 minutes of SIGTERM")
	}
	require.Contains(t, errb.String(), "runner serve: draining")
	require.Contains(t, errb.String(), "runner serve: stopped")
	_, err = http.Get(url + "/v2/health/live")
	require.Error(t, err, "nothing listens after the drain")
}

func TestServeErrors(t *testing.T) {
	model := gqaModel(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no slots", []string{"--model", model, "--slots", "0"}, 2, "--slots 0: want at least 1 session"},
		{"tiny context", []string{"--model", model, "--context", "1"}, 2, "--context 1"},
		{"bad body limit", []string{"--model", model, "--max-body", "lots"}, 2, "--max-body"},
		{"bad address", []string{"--model", model, "--addr", "127.0.0.1:99999"}, 1, "--addr 127.0.0.1:99999"},
		{"dim on a decoder", []string{"--model", model, "--addr", "127.0.0.1:0", "--dim", "batch=2"}, 2, "is a KV-cache decoder, whose envelope comes from --slots and --context"},
		{"does not fit", []string{"--model", model, "--addr", "127.0.0.1:0", "--slots", "64", "--context", "4096", "--limit", "4MiB"}, 3, "does not fit: 64 slots at context 4096"},
		{"not one slot fits", []string{"--model", model, "--addr", "127.0.0.1:0", "--context", "4096", "--limit", "4MiB"}, 3,
			"does not fit: not even one slot at context 4096: it needs "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runner(t, append([]string{"serve"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			requireReleased(t, r)
		})
	}
}

// TestServeMostSlots: without --slots, serve reserves the largest N slots whose reservation fits
// --limit, reservation(N) <= limit < reservation(N+1), with reservation(N) what `--slots N`
// reserves; its log says so and what N+1 would need. Not one slot fitting names the fix.
func TestServeMostSlots(t *testing.T) {
	model := gqaModel(t)
	reserved := func(slots int) int64 {
		g, err := run.LoadGenerator(context.Background(), run.GenerateConfig{
			Config: run.Config{ModelPath: model, Device: "cpu", Workers: 1, DeviceMemory: 1 << 30},
			Batch:  1, PromptLen: 63, MaxNew: 1, Context: 64, Slots: slots, PrefillChunk: generate.DefaultChunk})
		require.NoError(t, err)
		defer func() { require.NoError(t, g.Close()) }()
		require.NotNil(t, g.Batch, "the GenAI form: rows of one session")
		return g.Memory.ReservedBytes
	}
	limit := (reserved(5) + reserved(6)) / 2
	stderr := serveLog(t, "--model", model, "--context", "64", "--limit", strconv.FormatInt(limit, 10))
	m := regexp.MustCompile(`, (\d+) slots \(the most that fit in (.+) under --limit; (\d+) would need (.+)\) x context 64, continuously batched`).FindStringSubmatch(stderr)
	require.NotNil(t, m, stderr)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	require.LessOrEqual(t, reserved(n), limit)
	require.Greater(t, reserved(n+1), limit)
	require.Equal(t, 5, n)
	require.Equal(t, bytesize.Format(limit), m[2])
	require.Equal(t, strconv.Itoa(n+1), m[3])
	require.Equal(t, bytesize.Format(reserved(n+1)), m[4])
	require.Contains(t, stderr, fmt.Sprintf("reserved %s = ", bytesize.Format(reserved(n))))

	// More than run.MaxFitSlots fit in the test's device of 1 GiB.
	stderr = serveLog(t, "--model", model, "--context", "64")
	require.Contains(t, stderr, fmt.Sprintf(", %d slots (the most taken without --slots, and they fit in 1.00 GiB; --slots N asks for more) x context 64", run.MaxFitSlots))
}

// serveLog runs `runner serve` with args until it is ready, stops it as Ctrl-C does and returns
// what it logged.
func serveLog(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	ready := make(chan string, 1)
	code := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := Env{Stdout: &out, Stderr: &errb, DeviceMemory: 1 << 30, ServeReady: func(addr string) { ready <- addr }}
	go func() {
		code <- Main(ctx, append([]string{"runner", "serve", "--addr", "127.0.0.1:0", "--workers", "1"}, args...), env)
	}()
	select {
	case <-ready:
	case c := <-code:
		t.Fatalf("runner serve exited %d before it was ready: %s", c, errb.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("runner serve was not ready within 2 minutes")
	}
	cancel()
	require.Equal(t, 0, <-code, errb.String())
	return errb.String()
}
