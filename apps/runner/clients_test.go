package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// asRunner, set to 1 in a process's environment, makes this test binary the runner: TestMain
// calls main. TestClients starts `runner generate` and `runner serve` that way, as processes
// of their own built from this package's main; CARVE_RUNNER=PATH runs another runner binary
// instead (a release build, Bazel's).
const asRunner = "CARVE_RUNNER_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asRunner) == "1" {
		main()
	}
	os.Exit(m.Run())
}

// runnerCommand is the runner with args, as a process.
func runnerCommand(args ...string) *exec.Cmd {
	if bin := os.Getenv("CARVE_RUNNER"); bin != "" {
		return exec.Command(bin, args...)
	}
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asRunner+"=1")
	return cmd
}

// Fixed settings of the client test's server: two slots and a queue of one, so that two
// concurrent requests of two prompts each overload it.
const (
	clientKey     = "carve-client-test"
	clientContext = 64
	clientMaxNew  = 12
)

// TestClients serves the qwen2_gqa fixture with the runner binary on the CPU and drives it
// with real clients: curl, and the official openai npm package (tools/serve/openai_client.mjs),
// each skipped with the reason when it is not installed. It checks that greedy completions are
// `runner generate`'s tokens, streaming, 400s, 401, 429 under overload, that the metrics move,
// and that SIGTERM drains a request in flight before the process exits 0.
func TestClients(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestClients starts the runner as processes")
	}
	dir := t.TempDir()
	model, err := testmodels.MustGet("qwen2_gqa").WriteDir(dir)
	require.NoError(t, err)
	name := strings.TrimSuffix(filepath.Base(model), ".onnx")

	// runner generate's greedy tokens for two prompts.
	prompt := kernels.MustTensor(graph.Int64, 2, 6)
	for i := range prompt.Int64s() {
		prompt.Int64s()[i] = int64(i * 37 % 256)
	}
	prompts := [][]int64{prompt.Int64s()[:6], prompt.Int64s()[6:]}
	npy := filepath.Join(dir, "prompt.npy")
	require.NoError(t, npyfile.WriteFile(npy, prompt))
	gen := runnerCommand("generate", "--model", model, "--prompt", npy, "--max-new-tokens", strconv.Itoa(clientMaxNew),
		"--context", strconv.Itoa(clientContext), "--workers", "1", "--format", "json")
	var genErr bytes.Buffer
	gen.Stderr = &genErr
	out, err := gen.Output()
	require.NoError(t, err, "runner generate: %s", genErr.String())
	var rep struct{ Tokens [][]int64 }
	require.NoError(t, json.Unmarshal(out, &rep))
	require.Len(t, rep.Tokens, 2)
	want := rep.Tokens

	srv := startServe(t, "serve", "--model", model, "--addr", "127.0.0.1:0", "--slots", "2", "--queue", "1",
		"--context", strconv.Itoa(clientContext), "--workers", "1")
	before := scrape(t, srv.url)

	t.Run("curl", func(t *testing.T) { curlChecks(t, srv.url, name, prompts, want) })
	t.Run("openai", func(t *testing.T) {
		openaiChecks(t, srv.url, map[string]any{"model": name, "prompts": prompts, "tokens": want,
			"max_tokens": clientMaxNew, "context": clientContext})
	})
	t.Run("metrics move", func(t *testing.T) {
		// One request of each kind, whether or not the clients above ran.
		for _, r := range []struct {
			key, body string
			code      int
		}{
			{clientKey, fmt.Sprintf(`{"prompt": %s, "max_tokens": 3}`, ids(prompts[0])), http.StatusOK},
			{clientKey, `{"prompt": []}`, http.StatusBadRequest},
			{"", `{"prompt": [1]}`, http.StatusUnauthorized},
		} {
			req, _ := http.NewRequest(http.MethodPost, srv.url+"/v1/completions", strings.NewReader(r.body))
			if r.key != "" {
				req.Header.Set("Authorization", "Bearer "+r.key)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, r.code, resp.StatusCode, r.body)
		}
		after := scrape(t, srv.url)
		for _, m := range []string{"carve:generation_tokens_total", "carve:prompt_tokens_total",
			`carve:request_success_total{finished_reason="length"}`, "carve:time_to_first_token_seconds_count",
			"carve:inter_token_latency_seconds_count", "carve:e2e_request_latency_seconds_count",
			`carve:http_requests_total{code="200",route="/v1/completions"}`,
			`carve:http_requests_total{code="400",route="/v1/completions"}`,
			`carve:http_requests_total{code="401",route="/v1/completions"}`} {
			require.Greater(t, after[m], before[m], "%s from %g", m, before[m])
		}
		require.Equal(t, 2.0, after["carve:num_slots"])
		require.Zero(t, after["carve:num_requests_running"])
		require.Zero(t, after["carve:num_requests_waiting"])
	})
	t.Run("drain on SIGTERM", func(t *testing.T) { drainCheck(t, srv, name, prompts[0], want[0]) })
}

func ids(p []int64) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// served is a `runner serve` process.
type served struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	logs bytes.Buffer
	exit chan error
}

func (s *served) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

var readyLine = regexp.MustCompile(`runner serve: ready on (http://\S+)`)

// startServe starts the runner with args and the client test's API key (from the environment,
// as an operator would keep it out of the process listing) and waits until it is ready.
func startServe(t *testing.T, args ...string) *served {
	s := &served{cmd: runnerCommand(args...), exit: make(chan error, 1)}
	if s.cmd.Env == nil {
		s.cmd.Env = os.Environ()
	}
	s.cmd.Env = append(s.cmd.Env, "CARVE_API_KEY="+clientKey)
	pipe, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			s.mu.Lock()
			s.logs.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
		s.exit <- s.cmd.Wait()
	}()
	t.Cleanup(func() { s.cmd.Process.Kill() }) // after the drain check, the process is gone
	select {
	case s.url = <-ready:
	case err := <-s.exit:
		t.Fatalf("runner serve exited (%v) before it was ready:\n%s", err, s.stderr())
	case <-time.After(2 * time.Minute):
		t.Fatalf("runner serve was not ready within 2 minutes:\n%s", s.stderr())
	}
	return s
}

// scrape reads the server's metrics: each sample by its name and labels as written.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+clientKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m
}

// curl runs curl with args and returns its output; -w '%{http_code}' output ends it.
func curl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("curl", append([]string{"-sS", "--max-time", "60"}, args...)...).CombinedOutput()
	require.NoError(t, err, "curl %s: %s", strings.Join(args, " "), out)
	return string(out)
}

func curlChecks(t *testing.T, url, name string, prompts, want [][]int64) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the curl checks are skipped")
	}
	auth := "Authorization: Bearer " + clientKey
	body := func(v map[string]any) string {
		v["model"], v["max_tokens"], v["temperature"] = name, clientMaxNew, 0
		b, _ := json.Marshal(v)
		return string(b)
	}
	const status = "\n%{http_code}"
	split := func(out string) (string, string) {
		i := strings.LastIndexByte(out, '\n')
		return out[:i], out[i+1:]
	}
	t.Run("health without the key", func(t *testing.T) {
		out, code := split(curl(t, "-w", status, url+"/v2/health/ready"))
		require.Equal(t, "200", code, out)
		require.JSONEq(t, `{"ready": true}`, out)
	})
	t.Run("completion equals runner generate", func(t *testing.T) {
		out, code := split(curl(t, "-w", status, "-H", auth, "-H", "Content-Type: application/json",
			"-d", body(map[string]any{"prompt": prompts}), url+"/v1/completions"))
		require.Equal(t, "200", code, out)
		var c struct {
			Choices []struct {
				TokenIDs     []int64 `json:"token_ids"`
				FinishReason string  `json:"finish_reason"`
			}
		}
		require.NoError(t, json.Unmarshal([]byte(out), &c))
		require.Len(t, c.Choices, 2)
		for i, ch := range c.Choices {
			require.Equal(t, want[i], ch.TokenIDs)
			require.Equal(t, "length", ch.FinishReason)
		}
	})
	t.Run("stream", func(t *testing.T) {
		out, code := split(curl(t, "-N", "-w", status, "-H", auth, "-d",
			body(map[string]any{"prompt": prompts[0], "stream": true, "stream_options": map[string]bool{"include_usage": true}}),
			url+"/v1/completions"))
		require.Equal(t, "200", code, out)
		require.True(t, strings.HasSuffix(out, "data: [DONE]\n\n"), "the stream ends with data: [DONE]: %q", out)
		var got []int64
		var u map[string]int64
		events := strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n")
		for _, ev := range events[:len(events)-1] {
			data, ok := strings.CutPrefix(ev, "data: ")
			require.True(t, ok, "an event of data lines: %q", ev)
			var c struct {
				Choices []struct {
					TokenIDs []int64 `json:"token_ids"`
				}
				Usage map[string]int64
			}
			require.NoError(t, json.Unmarshal([]byte(data), &c), data)
			for _, ch := range c.Choices {
				got = append(got, ch.TokenIDs...)
			}
			if c.Usage != nil {
				u = c.Usage
			}
		}
		require.Equal(t, want[0], got)
		require.Equal(t, map[string]int64{"prompt_tokens": 6, "completion_tokens": clientMaxNew, "total_tokens": 6 + clientMaxNew}, u)
	})
	t.Run("401 without the key", func(t *testing.T) {
		out, code := split(curl(t, "-w", status, "-d", body(map[string]any{"prompt": prompts[0]}), url+"/v1/completions"))
		require.Equal(t, "401", code, out)
		require.Contains(t, out, `"type":"authentication_error"`)
		out, code = split(curl(t, "-w", status, url+"/metrics"))
		require.Equal(t, "401", code, "every route but the probes: %s", out)
	})
	for _, tc := range []struct{ name, body, want string }{
		{"400 on bad JSON", `{"prompt": [1, 2`, "not valid JSON"},
		{"400 on a text prompt", `{"prompt": "hello"}`, "prompt is text"},
		{"400 on a long prompt", body(map[string]any{"prompt": make([]int64, clientContext)}), "context_length_exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := split(curl(t, "-w", status, "-H", auth, "-d", tc.body, url+"/v1/completions"))
			require.Equal(t, "400", code, out)
			require.Contains(t, out, tc.want)
		})
	}
}

// clientScript is the openai client's script, found beside this package's Bazel runfiles or in
// the source tree, with the real directory its node_modules are in.
func clientScript(t *testing.T) (script, dir string) {
	rel := filepath.Join("tools", "serve", "openai_client.mjs")
	script = filepath.Join("..", "..", rel)
	if src := os.Getenv("TEST_SRCDIR"); src != "" {
		script = filepath.Join(src, os.Getenv("TEST_WORKSPACE"), rel)
	}
	real, err := filepath.EvalSymlinks(script)
	require.NoError(t, err, "the openai client's script")
	real, err = filepath.Abs(real)
	require.NoError(t, err)
	return real, filepath.Dir(real)
}

func openaiChecks(t *testing.T, url string, c map[string]any) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the openai client checks are skipped")
	}
	script, dir := clientScript(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		t.Skipf("the openai npm package is not installed in %s: the openai client checks are skipped "+
			"(tools/setup.sh installs it with npm ci from the lock file)", dir)
	}
	caseJSON, _ := json.Marshal(c)
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "CARVE_URL="+url+"/v1", "CARVE_API_KEY="+clientKey, "CARVE_CASE="+string(caseJSON))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	checks := 0
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSuffix(line, "\n")
		name, ok := strings.CutPrefix(line, "ok ")
		why := ""
		if !ok {
			rest, isFail := strings.CutPrefix(line, "not ok ")
			if !isFail {
				continue
			}
			name, why, _ = strings.Cut(rest, ": ")
		}
		checks++
		t.Run(name, func(t *testing.T) {
			if why != "" {
				t.Error(why)
			}
		})
	}
	if err != nil && !t.Failed() {
		t.Fatalf("node %s: %v\n%s%s", script, err, out, stderr.String())
	}
	require.NotZero(t, checks, "node %s reported no checks:\n%s%s", script, out, stderr.String())
}

// drainCheck sends SIGTERM while a request is in flight (its handler waiting for the body, as
// the server's 100 Continue shows), checks that the server stops listening at once but answers
// that request in full, and that the process then exits 0.
func drainCheck(t *testing.T, s *served, name string, prompt, want []int64) {
	host := strings.TrimPrefix(s.url, "http://")
	conn, err := net.Dial("tcp", host)
	require.NoError(t, err)
	defer conn.Close()
	body, _ := json.Marshal(map[string]any{"model": name, "prompt": prompt, "max_tokens": clientMaxNew, "temperature": 0})
	fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", host, clientKey, len(body))
	rd := bufio.NewReader(conn)
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	cont, err := http.ReadResponse(rd, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusContinue, cont.StatusCode, "the handler reads the body: it has been admitted")
	conn.SetReadDeadline(time.Time{})

	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", host, time.Second)
		if err != nil {
			break // no longer listening: draining
		}
		c.Close()
		require.True(t, time.Now().Before(deadline), "still listening 30 s after SIGTERM:\n%s", s.stderr())
		time.Sleep(20 * time.Millisecond)
	}
	select {
	case err := <-s.exit:
		t.Fatalf("runner serve exited (%v) with a request in flight:\n%s", err, s.stderr())
	default:
	}

	_, err = conn.Write(body)
	require.NoError(t, err)
	resp, err := http.ReadResponse(rd, nil)
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
	require.Len(t, c.Choices, 1)
	require.Equal(t, want, c.Choices[0].TokenIDs, "the request in flight at SIGTERM")

	select {
	case err := <-s.exit:
		require.NoError(t, err, "runner serve's exit after the drain:\n%s", s.stderr())
	case <-time.After(time.Minute):
		t.Fatalf("runner serve did not exit within a minute of its last request:\n%s", s.stderr())
	}
	require.Contains(t, s.stderr(), "runner serve: draining")
	require.Contains(t, s.stderr(), "runner serve: stopped")
}
