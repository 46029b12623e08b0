package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph/testmodels"
)

const testContext = 64

// testChunk is the prefill chunk of the servers under test: prompts longer than it take more
// than one step.
const testChunk = 16

// testServer is a server on 127.0.0.1:0 with its model loaded and warm.
type testServer struct {
	*Server
	url    string
	cancel context.CancelFunc
	done   chan error
	gen    *run.Generation
	runner *run.Runner
	logs   *syncBuffer
}

type syncBuffer struct {
	mu       sync.Mutex
	b        bytes.Buffer
	draining chan struct{}
	once     sync.Once
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(p, []byte("draining")) {
		s.once.Do(func() { close(s.draining) })
	}
	return s.b.Write(p)
}

func loadConfig(model string, slots int) run.Config {
	return run.Config{ModelPath: model, Device: "cpu", DeviceMemory: 1 << 30, Workers: 2, Sessions: slots}
}

// start serves a fixture: a KV-cache decoder (kv) through LoadGenerator, otherwise through Load
// with envelope dims; hook, if set, becomes the server's step hook.
func start(t *testing.T, fixture string, slots int, opts Options, hook func(), dims ...string) *testServer {
	t.Helper()
	model := testmodels.MustGet(fixture).WriteTemp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ready := make(chan string, 1)
	opts.OnReady = func(addr string) { ready <- addr }
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = time.Minute
	}
	ts := &testServer{logs: &syncBuffer{draining: make(chan struct{})}}
	opts.Log = ts.logs
	ts.Server = New(opts)
	ts.stepHook = hook
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel, ts.done = cancel, make(chan error, 1)
	setup := func(ctx context.Context) error {
		cfg := loadConfig(model, slots)
		if len(dims) > 0 {
			env, err := engine.ParseEnvelope(dims)
			if err != nil {
				return err
			}
			cfg.Envelope = env
			r, err := run.Load(ctx, cfg)
			if err != nil {
				return err
			}
			ts.runner = r
			ts.AttachRunner(fixture, r)
		} else {
			g, err := run.LoadGenerator(ctx, run.GenerateConfig{Config: cfg, Batch: 1, PromptLen: testContext - 1, MaxNew: 1, Context: testContext,
				Slots: slots, PrefillChunk: testChunk})
			if err != nil {
				return err
			}
			ts.gen = g
			ts.AttachGeneration(fixture, g)
		}
		return ts.Warmup(ctx)
	}
	go func() { ts.done <- ts.Run(ctx, ln, setup) }()
	select {
	case addr := <-ready:
		ts.url = "http://" + addr
	case err := <-ts.done:
		t.Fatalf("the server stopped before it was ready: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the server was not ready within 2 minutes")
	}
	t.Cleanup(func() {
		ts.stop(t)
		if ts.gen != nil {
			require.NoError(t, ts.gen.Close())
		}
		if ts.runner != nil {
			require.NoError(t, ts.runner.Close())
		}
	})
	return ts
}

// stop drains the server and waits for Run to return (once).
func (ts *testServer) stop(t *testing.T) {
	t.Helper()
	ts.cancel()
	if ts.done == nil {
		return
	}
	select {
	case err := <-ts.done:
		require.NoError(t, err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the server did not stop within 2 minutes")
	}
	ts.done = nil
}

type response struct {
	code   int
	header http.Header
	body   string
}

func (ts *testServer) do(t *testing.T, method, path, body string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, ts.url+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{resp.StatusCode, resp.Header, string(b)}
}

func (ts *testServer) post(t *testing.T, path, body string) response {
	t.Helper()
	return ts.do(t, http.MethodPost, path, body)
}

// greedyTokens generates greedily from rows of prompts on a generation loaded apart from the
// server, as `runner generate` does.
func greedyTokens(t *testing.T, fixture string, prompts [][]int64, maxNew int) [][]int64 {
	t.Helper()
	model := testmodels.MustGet(fixture).WriteTemp(t)
	var flat []int64
	for _, p := range prompts {
		flat = append(flat, p...)
	}
	n := int64(len(prompts[0]))
	g, err := run.LoadGenerator(context.Background(), run.GenerateConfig{Config: loadConfig(model, 1), Prompt: flat,
		Batch: int64(len(prompts)), PromptLen: n, MaxNew: maxNew, Context: testContext})
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	res, err := g.Run(context.Background())
	require.NoError(t, err)
	var out [][]int64
	for b := range prompts {
		out = append(out, res.Tokens[b*maxNew:(b+1)*maxNew])
	}
	return out
}

func TestCompletionsEqualGenerate(t *testing.T) {
	prompts := [][]int64{{3, 14, 15, 92, 65, 35, 89, 79, 32, 38}, {27, 18, 28, 18, 28, 45, 90, 45, 23, 53}}
	for _, fixture := range []string{"qwen2_kv", "qwen2_gqa"} {
		t.Run(fixture, func(t *testing.T) {
			want := greedyTokens(t, fixture, prompts, 20)
			ts := start(t, fixture, 2, Options{Queue: 4}, nil)

			// One prompt.
			r := ts.post(t, "/v1/completions", `{"model":"`+fixture+`","prompt":[3,14,15,92,65,35,89,79,32,38],"max_tokens":20,"temperature":0}`)
			require.Equal(t, http.StatusOK, r.code, r.body)
			var c completion
			require.NoError(t, json.Unmarshal([]byte(r.body), &c))
			require.Len(t, c.Choices, 1)
			require.Equal(t, want[0], c.Choices[0].TokenIDs)
			require.Equal(t, "length", *c.Choices[0].FinishReason)
			require.Equal(t, usage{PromptTokens: 10, CompletionTokens: 20, TotalTokens: 30}, *c.Usage)
			require.Equal(t, "text_completion", c.Object)

			// A batch, on two slots at once.
			body, _ := json.Marshal(map[string]any{"prompt": prompts, "max_tokens": 20, "temperature": 0})
			r = ts.post(t, "/v1/completions", string(body))
			require.Equal(t, http.StatusOK, r.code, r.body)
			c = completion{}
			require.NoError(t, json.Unmarshal([]byte(r.body), &c))
			require.Len(t, c.Choices, 2)
			for i := range prompts {
				require.Equal(t, i, c.Choices[i].Index)
				require.Equal(t, want[i], c.Choices[i].TokenIDs)
			}

			// A stop token ends the sequence before it (the first of want[0]'s tokens after the fifth).
			stop := want[0][5]
			body, _ = json.Marshal(map[string]any{"prompt": prompts[0], "max_tokens": 20, "temperature": 0, "stop": []int64{stop}})
			r = ts.post(t, "/v1/completions", string(body))
			require.Equal(t, http.StatusOK, r.code, r.body)
			c = completion{}
			require.NoError(t, json.Unmarshal([]byte(r.body), &c))
			cut := 0
			for cut < len(want[0]) && want[0][cut] != stop {
				cut++
			}
			require.Equal(t, want[0][:cut], c.Choices[0].TokenIDs)
			require.Equal(t, "stop", *c.Choices[0].FinishReason)

			// Sampling is seeded: the same seed, the same tokens.
			body = []byte(`{"prompt":[1,2,3],"max_tokens":12,"temperature":0.8,"top_k":20,"seed":7}`)
			a, b := ts.post(t, "/v1/completions", string(body)), ts.post(t, "/v1/completions", string(body))
			require.Equal(t, http.StatusOK, a.code, a.body)
			var ca, cb completion
			require.NoError(t, json.Unmarshal([]byte(a.body), &ca))
			require.NoError(t, json.Unmarshal([]byte(b.body), &cb))
			require.Equal(t, ca.Choices[0].TokenIDs, cb.Choices[0].TokenIDs)
			require.Len(t, ca.Choices[0].TokenIDs, 12)
		})
	}
}

// readStream reads server-sent events up to data: [DONE] (which must be the last).
func readStream(t *testing.T, body io.Reader) []map[string]any {
	t.Helper()
	var events []map[string]any
	sc := bufio.NewScanner(body)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		require.False(t, done, "an event after [DONE]: %s", line)
		data, ok := strings.CutPrefix(line, "data: ")
		require.True(t, ok, line)
		if data == "[DONE]" {
			done = true
			continue
		}
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(data), &ev), data)
		events = append(events, ev)
	}
	require.NoError(t, sc.Err())
	require.True(t, done, "no data: [DONE]")
	return events
}

func streamTokens(t *testing.T, events []map[string]any) (map[int][]int64, map[int]string, map[string]any) {
	tokens, finish := map[int][]int64{}, map[int]string{}
	var usage map[string]any
	for _, ev := range events {
		if u, ok := ev["usage"].(map[string]any); ok {
			usage = u
		}
		for _, ch := range ev["choices"].([]any) {
			c := ch.(map[string]any)
			i := int(c["index"].(float64))
			for _, id := range c["token_ids"].([]any) {
				tokens[i] = append(tokens[i], int64(id.(float64)))
			}
			if f, ok := c["finish_reason"].(string); ok {
				finish[i] = f
			}
		}
	}
	return tokens, finish, usage
}

func TestCompletionsStream(t *testing.T) {
	prompts := [][]int64{{5, 6, 7, 8}, {9, 10, 11, 12}}
	want := greedyTokens(t, "qwen2_gqa", prompts, 9)
	ts := start(t, "qwen2_gqa", 2, Options{Queue: 2}, nil)
	body, _ := json.Marshal(map[string]any{"prompt": prompts, "max_tokens": 9, "temperature": 0, "stream": true,
		"stream_options": map[string]any{"include_usage": true}})
	resp, err := http.Post(ts.url+"/v1/completions", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	tokens, finish, usage := streamTokens(t, readStream(t, resp.Body))
	require.Equal(t, want[0], tokens[0])
	require.Equal(t, want[1], tokens[1])
	require.Equal(t, map[int]string{0: "length", 1: "length"}, finish)
	require.Equal(t, map[string]any{"prompt_tokens": 8.0, "completion_tokens": 18.0, "total_tokens": 26.0}, usage)
}

// blocker is a step hook that holds every generated token until released, and says when the
// first is held.
type blocker struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlocker() *blocker {
	return &blocker{entered: make(chan struct{}), release: make(chan struct{})}
}

func (b *blocker) hook() {
	b.once.Do(func() { close(b.entered) })
	<-b.release
}

func (b *blocker) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-b.entered:
	case <-time.After(time.Minute):
		t.Fatal("no generation reached its first token within a minute")
	}
}

func TestOverloadIs429(t *testing.T) {
	b := newBlocker()
	ts := start(t, "qwen2_gqa", 1, Options{Queue: 1}, b.hook)
	first := make(chan response, 2)
	go func() { first <- ts.post(t, "/v1/completions", `{"prompt":[1,2,3],"max_tokens":4,"temperature":0}`) }()
	b.waitEntered(t) // the slot is taken
	// The second waits in the queue (of 1): wait for it to be admitted before the third.
	go func() { first <- ts.post(t, "/v1/completions", `{"prompt":[1,2,3],"max_tokens":4,"temperature":0}`) }()
	for i := 0; ts.adm.load() < 2; i++ {
		require.Less(t, i, 1_000_000, "the second request was never admitted")
		time.Sleep(time.Millisecond) // not timing: a bounded wait for the admission count to move
	}
	r := ts.post(t, "/v1/completions", `{"prompt":[1,2,3],"max_tokens":4}`)
	require.Equal(t, http.StatusTooManyRequests, r.code, r.body)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	requireJSONError(t, r, "the server is full")
	// A batch larger than slots and queue together can never run: 400, not 429.
	r = ts.post(t, "/v1/completions", `{"prompt":[[1],[2],[3]],"max_tokens":4}`)
	require.Equal(t, http.StatusBadRequest, r.code, r.body)
	close(b.release)
	for range 2 {
		r := <-first
		require.Equal(t, http.StatusOK, r.code, r.body)
	}
	m := ts.do(t, http.MethodGet, "/metrics", "")
	require.Contains(t, m.body, `carve:http_requests_total{code="429",route="/v1/completions"} 1`)
}

func requireJSONError(t *testing.T, r response, want string) {
	t.Helper()
	require.Equal(t, "application/json", r.header.Get("Content-Type"), r.body)
	var v struct{ Error json.RawMessage }
	require.NoError(t, json.Unmarshal([]byte(r.body), &v), r.body)
	var msg string
	if json.Unmarshal(v.Error, &msg) != nil { // OpenAI's shape
		var e struct{ Message string }
		require.NoError(t, json.Unmarshal(v.Error, &e), r.body)
		msg = e.Message
	}
	require.Contains(t, msg, want)
}

func TestBadInput(t *testing.T) {
	ts := start(t, "qwen2_gqa", 1, Options{Queue: 1, MaxBodyBytes: 4096}, nil)
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"not json", "POST", "/v1/completions", `{"prompt":`, 400, "not valid JSON"},
		{"two values", "POST", "/v1/completions", `{"prompt":[1]} {}`, 400, "more than one JSON value"},
		{"empty body", "POST", "/v1/completions", ``, 400, "empty body"},
		{"no prompt", "POST", "/v1/completions", `{"max_tokens":3}`, 400, "prompt is missing"},
		{"text prompt", "POST", "/v1/completions", `{"prompt":"hello"}`, 400, "it loads no tokenizer"},
		{"empty prompt", "POST", "/v1/completions", `{"prompt":[]}`, 400, "prompt is empty"},
		{"empty row", "POST", "/v1/completions", `{"prompt":[[1],[]]}`, 400, "prompt 1 is empty"},
		{"float ids", "POST", "/v1/completions", `{"prompt":[1.5]}`, 400, "want token ids"},
		{"outside vocab", "POST", "/v1/completions", `{"prompt":[1,256]}`, 400, "token 256 (position 1) is outside the vocabulary [0, 256)"},
		{"negative id", "POST", "/v1/completions", `{"prompt":[-1]}`, 400, "outside the vocabulary"},
		{"beyond context", "POST", "/v1/completions", `{"prompt":[1,2,3,4],"max_tokens":62}`, 400,
			"prompt 0 of 4 tokens and max_tokens 62 need 65 positions, more than this server's context of 64 (--context): max_tokens can be at most 61"},
		{"prompt fills context", "POST", "/v1/completions", `{"prompt":[` + strings.TrimSuffix(strings.Repeat("1,", 64), ",") + `]}`, 400, "this server's context is 64 positions"},
		{"zero max_tokens", "POST", "/v1/completions", `{"prompt":[1],"max_tokens":0}`, 400, "max_tokens 0"},
		{"huge max_tokens", "POST", "/v1/completions", `{"prompt":[1],"max_tokens":9223372036854775807}`, 400, "context of 64"},
		{"negative temperature", "POST", "/v1/completions", `{"prompt":[1],"temperature":-1}`, 400, "temperature -1"},
		{"bad top_k", "POST", "/v1/completions", `{"prompt":[1],"top_k":-5}`, 400, "top_k -5"},
		{"n", "POST", "/v1/completions", `{"prompt":[1],"n":2}`, 400, "n 2"},
		{"stop string", "POST", "/v1/completions", `{"prompt":[1],"stop":"\n"}`, 400, "stop strings need a tokenizer"},
		{"stop outside vocab", "POST", "/v1/completions", `{"prompt":[1],"stop_token_ids":[999]}`, 400, "stop token 999"},
		{"wrong model", "POST", "/v1/completions", `{"model":"gpt-4","prompt":[1]}`, 400, `model "gpt-4"`},
		{"wrong type", "POST", "/v1/completions", `{"prompt":[1],"max_tokens":"many"}`, 400, "not valid JSON"},
		{"too large", "POST", "/v1/completions", `{"prompt":[` + strings.Repeat("1,", 4096) + `1]}`, 413, "larger than the limit of 4096 bytes"},
		{"get completions", "GET", "/v1/completions", ``, 405, "want POST"},
		{"no route", "GET", "/v3/nothing", ``, 404, "no route"},
		{"no model", "GET", "/v2/models/other", ``, 404, `no model "other"`},
		{"infer a decoder", "POST", "/v2/models/qwen2_gqa/infer", `{"inputs":[]}`, 400, "call POST /v1/completions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(t, tc.method, tc.path, tc.body)
			require.Equal(t, tc.code, r.code, r.body)
			requireJSONError(t, r, tc.want)
		})
	}
	// Still serving.
	r := ts.post(t, "/v1/completions", `{"prompt":[1],"max_tokens":2,"temperature":0}`)
	require.Equal(t, http.StatusOK, r.code, r.body)
}

func TestAPIKey(t *testing.T) {
	ts := start(t, "qwen2_gqa", 1, Options{APIKey: "s3cret"}, nil)
	for _, path := range []string{"/v2/health/live", "/v2/health/ready"} {
		require.Equal(t, http.StatusOK, ts.do(t, "GET", path, "").code, path)
	}
	for _, path := range []string{"/v2", "/v2/models/qwen2_gqa", "/v2/models/qwen2_gqa/ready", "/metrics", "/v1/models"} {
		r := ts.do(t, "GET", path, "")
		require.Equal(t, http.StatusUnauthorized, r.code, path)
		requireJSONError(t, r, "API key")
		r = ts.do(t, "GET", path, "", "Authorization", "Bearer wrong")
		require.Equal(t, http.StatusUnauthorized, r.code, path)
		require.Equal(t, http.StatusOK, ts.do(t, "GET", path, "", "Authorization", "Bearer s3cret").code, path)
	}
	r := ts.do(t, "POST", "/v1/completions", `{"prompt":[1],"max_tokens":2}`)
	require.Equal(t, http.StatusUnauthorized, r.code)
	require.Contains(t, r.body, `"type":"authentication_error"`)
	r = ts.do(t, "POST", "/v1/completions", `{"prompt":[1],"max_tokens":2}`, "Authorization", "Bearer s3cret")
	require.Equal(t, http.StatusOK, r.code, r.body)
}

// metric reads one sample's value from the exposition text.
func metric(t *testing.T, text, name string) float64 {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			var f float64
			_, err := fmt.Sscan(v, &f)
			require.NoError(t, err)
			return f
		}
	}
	t.Fatalf("no sample %s in\n%s", name, text)
	return 0
}

func TestMetrics(t *testing.T) {
	ts := start(t, "qwen2_gqa", 2, Options{Queue: 3}, nil)
	m0 := ts.do(t, "GET", "/metrics", "").body
	require.Equal(t, 2.0, metric(t, m0, "carve:num_slots"))
	require.Equal(t, float64(ts.gen.Memory.ReservedBytes), metric(t, m0, "carve:reserved_bytes"))
	require.Positive(t, metric(t, m0, "carve:reserved_bytes"))
	require.Zero(t, metric(t, m0, "carve:generation_tokens_total"))
	require.Zero(t, metric(t, m0, "carve:time_to_first_token_seconds_count"))

	r := ts.post(t, "/v1/completions", `{"prompt":[[1,2,3],[4,5]],"max_tokens":6,"temperature":0}`)
	require.Equal(t, http.StatusOK, r.code, r.body)
	m1 := ts.do(t, "GET", "/metrics", "").body
	require.Equal(t, 12.0, metric(t, m1, "carve:generation_tokens_total"))
	require.Equal(t, 5.0, metric(t, m1, "carve:prompt_tokens_total"))
	require.Equal(t, 2.0, metric(t, m1, "carve:time_to_first_token_seconds_count"))
	require.Equal(t, 10.0, metric(t, m1, "carve:inter_token_latency_seconds_count"))
	require.Equal(t, 1.0, metric(t, m1, "carve:e2e_request_latency_seconds_count"))
	require.Equal(t, 2.0, metric(t, m1, `carve:request_success_total{finished_reason="length"}`))
	require.Equal(t, 1.0, metric(t, m1, `carve:http_requests_total{code="200",route="/v1/completions"}`))
	require.Zero(t, metric(t, m1, "carve:num_requests_running"))
	require.Zero(t, metric(t, m1, "carve:num_requests_waiting"))
}

func TestDrain(t *testing.T) {
	b := newBlocker()
	ts := start(t, "qwen2_gqa", 1, Options{Queue: 1}, b.hook)
	want := greedyTokens(t, "qwen2_gqa", [][]int64{{7, 8, 9}}, 6)
	resp, err := http.Post(ts.url+"/v1/completions", "application/json",
		strings.NewReader(`{"prompt":[7,8,9],"max_tokens":6,"temperature":0,"stream":true}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	b.waitEntered(t) // in flight
	ts.cancel()      // what SIGTERM does
	select {
	case <-ts.logs.draining:
	case <-time.After(time.Minute):
		t.Fatal("the server did not start draining")
	}
	require.False(t, ts.ready.Load(), "not ready while draining")
	// No new work: the listener is closed, or the request is refused.
	if r, err := http.Post(ts.url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":[1]}`)); err == nil {
		r.Body.Close()
		require.Equal(t, http.StatusServiceUnavailable, r.StatusCode)
	}
	close(b.release)
	tokens, finish, _ := streamTokens(t, readStream(t, resp.Body))
	require.Equal(t, want[0], tokens[0], "the request in flight finished")
	require.Equal(t, "length", finish[0])
	ts.stop(t)
}

func TestInferV2(t *testing.T) {
	ts := start(t, "gpt2", 2, Options{Queue: 2}, nil, "batch=1:2", "seq=1:16")
	r := ts.do(t, "GET", "/v2/models/gpt2", "")
	require.Equal(t, http.StatusOK, r.code, r.body)
	require.Contains(t, r.body, `{"name":"input_ids","datatype":"INT64","shape":[-1,-1]}`)
	require.Equal(t, http.StatusOK, ts.do(t, "GET", "/v2/models/gpt2/ready", "").code)
	require.Equal(t, http.StatusOK, ts.do(t, "GET", "/v2", "").code)

	// The runner's own inputs through the protocol give its own outputs.
	res, err := ts.runner.Run(context.Background(), 1)
	require.NoError(t, err)
	var inputs []map[string]any
	for name, tn := range ts.runner.Inputs {
		inputs = append(inputs, map[string]any{"name": name, "shape": tn.Shape, "datatype": "INT64", "data": tn.Int64s()})
	}
	body, _ := json.Marshal(map[string]any{"id": "q1", "inputs": inputs})
	r = ts.post(t, "/v2/models/gpt2/infer", string(body))
	require.Equal(t, http.StatusOK, r.code, r.body)
	var out struct {
		ModelName string `json:"model_name"`
		ID        string `json:"id"`
		Outputs   []struct {
			Name, Datatype string
			Shape          []int64
			Data           []float32
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &out))
	require.Equal(t, "q1", out.ID)
	require.Len(t, out.Outputs, 1)
	require.Equal(t, "logits", out.Outputs[0].Name)
	require.Equal(t, "FP32", out.Outputs[0].Datatype)
	require.Equal(t, res.Outputs[0].Shape, out.Outputs[0].Shape)
	require.Equal(t, res.Outputs[0].Float32s(), out.Outputs[0].Data)

	ok := `{"name":"attention_mask","shape":[1,2],"datatype":"INT64","data":[1,1]}`
	for _, tc := range []struct{ name, body, want string }{
		{"missing input", `{"inputs":[` + ok + `]}`, `input "input_ids" is missing`},
		{"unknown input", `{"inputs":[{"name":"x","shape":[1],"datatype":"INT64","data":[1]}]}`, `no input "x"`},
		{"datatype", `{"inputs":[{"name":"input_ids","shape":[1,2],"datatype":"FP32","data":[1,2]},` + ok + `]}`, `datatype "FP32"; the model takes INT64`},
		{"rank", `{"inputs":[{"name":"input_ids","shape":[2],"datatype":"INT64","data":[1,2]},` + ok + `]}`, "has 1 dims; the model's has 2"},
		{"count", `{"inputs":[{"name":"input_ids","shape":[1,2],"datatype":"INT64","data":[1,2,3]},` + ok + `]}`, "more than the 2 elements"},
		{"nested count", `{"inputs":[{"name":"input_ids","shape":[1,2],"datatype":"INT64","data":[[1]]},` + ok + `]}`, "1 elements; shape [1 2] takes 2"},
		{"strings", `{"inputs":[{"name":"input_ids","shape":[1,2],"datatype":"INT64","data":["a","b"]},` + ok + `]}`, "is not a number"},
		{"fraction", `{"inputs":[{"name":"input_ids","shape":[1,2],"datatype":"INT64","data":[1.5,2]},` + ok + `]}`, "1.5 is not an integer INT64 holds"},
		{"envelope", `{"inputs":[{"name":"input_ids","shape":[1,17],"datatype":"INT64","data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]},` +
			`{"name":"attention_mask","shape":[1,17],"datatype":"INT64","data":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}]}`, "seq=17 is outside the declared envelope seq=1:16"},
		{"negative dim", `{"inputs":[{"name":"input_ids","shape":[1,-2],"datatype":"INT64","data":[]},` + ok + `]}`, "each dim must be in"},
		{"huge shape", `{"inputs":[{"name":"input_ids","shape":[2000000000,2000000000],"datatype":"INT64","data":[]},` + ok + `]}`, "more elements than the body limit"},
		{"token outside the vocabulary", `{"inputs":[{"name":"input_ids","shape":[1,2],"datatype":"INT64","data":[1,100000]},` + ok + `]}`, "the model refused the inputs"},
		{"unknown output", `{"inputs":[],"outputs":[{"name":"nope"}]}`, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.post(t, "/v2/models/gpt2/infer", tc.body)
			require.Equal(t, http.StatusBadRequest, r.code, r.body)
			requireJSONError(t, r, tc.want)
		})
	}
	r = ts.post(t, "/v1/completions", `{"prompt":[1]}`)
	require.Equal(t, http.StatusBadRequest, r.code)
	requireJSONError(t, r, "has no KV cache")
}

// gate is a step hook that holds the scheduler at the at-th token until released, and records
// the most rows the batch held at any token.
type gate struct {
	ts       *testServer
	at, n    int
	entered  chan struct{}
	release  chan struct{}
	mostBusy int
}

func newGate(at int) *gate {
	return &gate{at: at, entered: make(chan struct{}), release: make(chan struct{})}
}

// hook runs on the scheduler's goroutine, which owns the batch.
func (g *gate) hook() {
	g.n++
	g.mostBusy = max(g.mostBusy, g.ts.gen.Batch.Busy())
	if g.n == g.at {
		close(g.entered)
		<-g.release
	}
}

func (g *gate) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(time.Minute):
		t.Fatalf("the batch did not reach token %d within a minute", g.at)
	}
}

// startGated is start with a gate as the step hook.
func startGated(t *testing.T, slots int, opts Options, g *gate) *testServer {
	t.Helper()
	var ts *testServer
	ts = start(t, "qwen2_gqa", slots, opts, func() { g.ts = ts; g.hook() })
	return ts
}

// TestBatchJoinsMidStream: sequences that join a running batch while another streams, with
// prompts of different lengths (one of three prefill chunks), get the tokens `runner generate`
// makes for each alone; they share the batch's steps, the metrics show the slots in use, and
// nothing is planned after the warm-up.
func TestBatchJoinsMidStream(t *testing.T) {
	a, b, c := []int64{5, 6, 7, 8, 9}, make([]int64, 37), []int64{40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51}
	for i := range b {
		b[i] = int64(i*13+7) % 256
	}
	wantA := greedyTokens(t, "qwen2_gqa", [][]int64{a}, 40)[0]
	wantB := greedyTokens(t, "qwen2_gqa", [][]int64{b}, 20)[0]
	wantC := greedyTokens(t, "qwen2_gqa", [][]int64{c}, 15)[0]

	g := newGate(2)
	ts := startGated(t, 3, Options{Queue: 3}, g)
	require.NotNil(t, ts.gen.Batch, "the GenAI form is served by continuous batching")
	require.Contains(t, ts.logs.String(), "continuous batching")
	before := ts.gen.Replica.Runtime.Stats()

	body, _ := json.Marshal(map[string]any{"prompt": a, "max_tokens": 40, "temperature": 0, "stream": true})
	resp, err := http.Post(ts.url+"/v1/completions", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	g.waitEntered(t) // A is mid-stream: its second token is held
	m := ts.do(t, "GET", "/metrics", "").body
	require.Equal(t, 1.0, metric(t, m, "carve:num_slots_busy"))
	require.Equal(t, 1.0, metric(t, m, "carve:num_requests_running"))
	require.Greater(t, metric(t, m, "carve:kv_cache_usage_perc"), 0.0)

	results := make(chan response, 2)
	for _, p := range []struct {
		prompt []int64
		n      int
	}{{b, 20}, {c, 15}} {
		body, _ := json.Marshal(map[string]any{"prompt": p.prompt, "max_tokens": p.n, "temperature": 0})
		go func() { results <- ts.post(t, "/v1/completions", string(body)) }()
	}
	for i := 0; ts.adm.load() < 3; i++ {
		require.Less(t, i, 1_000_000, "B and C were never admitted")
		time.Sleep(time.Millisecond) // not timing: a bounded wait for the admission count to move
	}
	close(g.release)

	tokens, finish, _ := streamTokens(t, readStream(t, resp.Body))
	require.Equal(t, wantA, tokens[0])
	require.Equal(t, "length", finish[0])
	got := map[int][]int64{}
	for range 2 {
		r := <-results
		require.Equal(t, http.StatusOK, r.code, r.body)
		var cm completion
		require.NoError(t, json.Unmarshal([]byte(r.body), &cm))
		got[len(cm.Choices[0].TokenIDs)] = cm.Choices[0].TokenIDs
	}
	require.Equal(t, wantB, got[20])
	require.Equal(t, wantC, got[15])
	require.Equal(t, 3, g.mostBusy, "B and C joined while A ran")

	m = ts.do(t, "GET", "/metrics", "").body
	require.Equal(t, 75.0, metric(t, m, "carve:generation_tokens_total"))
	// A alone takes 40 steps (its prompt and 39 tokens); B and C ride along.
	require.Less(t, metric(t, m, "carve:batch_steps_total"), 60.0, "the sequences shared steps")
	require.Zero(t, metric(t, m, "carve:num_slots_busy"))
	require.Zero(t, metric(t, m, "carve:kv_cache_usage_perc"))
	require.Zero(t, metric(t, m, "carve:num_requests_running"))
	after := ts.gen.Replica.Runtime.Stats()
	require.Equal(t, before.Patterns.Misses, after.Patterns.Misses, "no pattern planned after the warm-up")
	require.Equal(t, before.Programs.Misses, after.Programs.Misses, "no program compiled after the warm-up")
}

// TestBatchCancelFreesRow: a client that disconnects mid-stream leaves the batch at the next
// step, and its row serves the next sequence (over the garbage the first left in it).
func TestBatchCancelFreesRow(t *testing.T) {
	want := greedyTokens(t, "qwen2_gqa", [][]int64{{9, 8, 7, 6}}, 10)[0]
	g := newGate(3)
	ts := startGated(t, 1, Options{Queue: 1}, g)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url+"/v1/completions",
		strings.NewReader(`{"prompt":[1,2,3],"max_tokens":60,"temperature":0,"stream":true}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	g.waitEntered(t)
	cancel()
	resp.Body.Close()
	// The scheduler is held in the hook, after it wrote its rows: reading the job is safe.
	j := ts.sched.rows[0]
	require.NotNil(t, j)
	for i := 0; j.ctx.Err() == nil; i++ {
		require.Less(t, i, 1_000_000, "the server never saw the client leave")
		time.Sleep(time.Millisecond) // not timing: a bounded wait for the disconnect to arrive
	}
	close(g.release)

	r := ts.post(t, "/v1/completions", `{"prompt":[9,8,7,6],"max_tokens":10,"temperature":0}`)
	require.Equal(t, http.StatusOK, r.code, r.body)
	var c completion
	require.NoError(t, json.Unmarshal([]byte(r.body), &c))
	require.Equal(t, want, c.Choices[0].TokenIDs)
	m := ts.do(t, "GET", "/metrics", "").body
	require.Equal(t, 13.0, metric(t, m, "carve:generation_tokens_total"), "the canceled sequence stopped at its third token")
	require.Zero(t, metric(t, m, "carve:num_slots_busy"))
}
