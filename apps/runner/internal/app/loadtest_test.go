package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/loadtest"
)

// serveInProcess starts `runner serve` with args on 127.0.0.1:0 and returns its URL; it is
// stopped when the test ends.
func serveInProcess(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	ready := make(chan string, 1)
	code := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	env := Env{Stdout: &out, Stderr: &errb, DeviceMemory: 1 << 30, ServeReady: func(addr string) { ready <- addr }}
	go func() {
		code <- Main(ctx, append([]string{"runner", "serve", "--addr", "127.0.0.1:0", "--workers", "1"}, args...), env)
	}()
	t.Cleanup(func() {
		cancel() // as Ctrl-C: the server drains and exits 0
		require.Equal(t, 0, <-code)
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case c := <-code:
		t.Fatalf("runner serve exited %d before it was ready: %s", c, errb.String())
	case <-time.After(2 * time.Minute):
		t.Fatal("runner serve was not ready within 2 minutes")
	}
	return ""
}

func TestLoadtest(t *testing.T) {
	url := serveInProcess(t, "--model", gqaModel(t), "--slots", "4", "--context", "64", "--api-key", "k")
	r := runner(t, "loadtest", "--url", url, "--api-key", "k", "--concurrency", "1,4", "--requests", "8",
		"--prompt-len", "8", "--max-tokens", "16")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	for _, want := range []string{
		"server    " + url + ", model qwen2_gqa",
		"requests  streamed, prompts of 8 random token ids, 16 new tokens, greedy; at most 8 requests or 1m0s per level",
		"1.00x",
		"TTFT: from sending a request to its first token",
	} {
		require.Contains(t, r.stdout, want)
	}
	lines := strings.Split(r.stdout, "\n")
	// the columns' widths follow the figures, so the header is compared field by field
	require.Regexp(t, `^ +STREAMS +SENT +OK +TOKENS/S +VS FIRST +REQ/S +TTFT P50 +TTFT P99 +ITL P50 +ITL P99 +ERRORS$`, lines[3])
	require.Regexp(t, `^ +1 +8 +8 +[0-9.]+ +1\.00x .* -$`, lines[4])
	require.Regexp(t, `^ +4 +8 +8 +[0-9.]+ +[0-9.]+x .* -$`, lines[5])

	r = runner(t, "loadtest", "--url", url, "--api-key", "k", "--concurrency", "2", "--requests", "4",
		"--prompt-len", "4", "--max-tokens", "5", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var rep loadtest.Report
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, "qwen2_gqa", rep.Model)
	require.Len(t, rep.Levels, 1)
	lv := rep.Levels[0]
	require.Equal(t, 4, lv.OK)
	require.Equal(t, int64(20), lv.GeneratedTokens)
	require.Equal(t, 4, lv.TTFT.N)
	require.Equal(t, 16, lv.ITL.N)

	// The server's context bounds the prompt and max_tokens; its key is required.
	r = runner(t, "loadtest", "--url", url, "--api-key", "k", "--prompt-len", "60", "--max-tokens", "10")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "runner: --prompt-len 60 and --max-tokens 10 need 69 positions: the server's context is 64")
	r = runner(t, "loadtest", "--url", url)
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "the server wants an API key: give --api-key KEY (or CARVE_API_KEY)")
}

// TestLoadtestFailures: requests that fail are counted by status in the report, and the exit
// code says so.
func TestLoadtestFailures(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Write([]byte(`{"data": [{"id": "m"}]}`))
			return
		}
		n++
		if n%2 == 0 {
			http.Error(w, `{"error": {"message": "full"}}`, http.StatusTooManyRequests)
			return
		}
		w.Write([]byte("data: {\"choices\": [{\"index\": 0, \"token_ids\": [1]}]}\n\ndata: [DONE]\n\n"))
	}))
	defer srv.Close()
	r := runner(t, "loadtest", "--url", srv.URL, "--concurrency", "1", "--requests", "4", "--max-tokens", "1")
	require.Equal(t, ExitError, r.code)
	require.Contains(t, r.stdout, "429: 2")
	require.Equal(t, "runner: 2 of 4 requests failed (429: 2)\n", r.stderr)
}

func TestLoadtestErrors(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"off the loopback", []string{"--url", "http://192.0.2.1:8000"}, 2,
			"--url http://192.0.2.1:8000: 192.0.2.1 is not on this machine (runner loadtest loads only servers on the loopback: 127.0.0.1, ::1 or localhost)"},
		{"not a URL", []string{"--url", "127.0.0.1:8000"}, 2, `--url "127.0.0.1:8000": want http://HOST:PORT`},
		{"no server", []string{"--url", dead.URL}, 1, "no server answers there"},
		{"bad levels", []string{"--concurrency", "1,x"}, 2, `--concurrency "1,x": want positive counts of streams separated by commas, e.g. 1,8,32`},
		{"zero level", []string{"--concurrency", "0"}, 2, "--concurrency"},
		{"unbounded", []string{"--requests", "0", "--duration", "0"}, 2, "a load test must end"},
		{"bad format", []string{"--format", "xml"}, 2, `--format "xml": want table or json`},
		{"huge level", []string{"--concurrency", "5000"}, 2, "--concurrency 5000: want at most 4096"},
		{"no prompt", []string{"--prompt-len", "0"}, 2, "--prompt-len 0: want at least 1 token"},
		{"argument", []string{"now"}, 2, `unexpected argument "now"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runner(t, append([]string{"loadtest"}, tc.args...)...)
			require.Equal(t, tc.code, r.code, r.stderr)
			require.Contains(t, r.stderr, tc.want)
			if tc.code == ExitUsage {
				require.Contains(t, r.stderr, "(see runner loadtest --help)")
			}
		})
	}
}
