package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/npyfile"
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
		{"does not fit", []string{"--model", model, "--addr", "127.0.0.1:0", "--slots", "64", "--context", "4096", "--limit", "4MiB"}, 3, "does not fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runner(t, append([]string{"serve"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			requireReleased(t, r)
		})
	}
}
