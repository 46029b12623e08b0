package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fake is an OpenAI-compatible completions server: it streams max_tokens token events, one
// every step, and answers with status(n) instead for the n-th request when that is not 200.
type fake struct {
	step     time.Duration
	context  int64
	key      string
	status   func(n int64) int
	breakOff func(n int64) bool // the n-th stream ends without data: [DONE]
	textOnly bool               // stream text, no token_ids, and no usage (another server's way)
	hangUp   func(n int64) bool // the n-th request's connection is closed without an answer
	retry    string             // the refusals' Retry-After

	n                 atomic.Int64
	mu                sync.Mutex
	running, most     int
	models            []string
	promptLens, maxes []int
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		http.Error(w, `{"error": {"message": "wrong key"}}`, http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/v1/models":
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": []map[string]any{{"id": "m0", "max_model_len": f.context}, {"id": "m1"}}})
		return
	case "/v1/completions":
	default:
		http.NotFound(w, r)
		return
	}
	n := f.n.Add(1)
	if f.hangUp != nil && f.hangUp(n) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	if f.status != nil {
		if s := f.status(n); s != http.StatusOK {
			if f.retry != "" {
				w.Header().Set("Retry-After", f.retry)
			}
			http.Error(w, `{"error": {"message": "busy"}}`, s)
			return
		}
	}
	var req struct {
		Model     string  `json:"model"`
		Prompt    []int64 `json:"prompt"`
		MaxTokens int     `json:"max_tokens"`
		Stream    bool    `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.running++
	f.most = max(f.most, f.running)
	f.models = append(f.models, req.Model)
	f.promptLens = append(f.promptLens, len(req.Prompt))
	f.maxes = append(f.maxes, req.MaxTokens)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	fl := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		fl.Flush()
	}
	for i := range req.MaxTokens {
		time.Sleep(f.step)
		if f.textOnly {
			send(map[string]any{"choices": []map[string]any{{"index": 0, "text": "x"}}})
		} else {
			send(map[string]any{"choices": []map[string]any{{"index": 0, "token_ids": []int{i}}}})
		}
		if f.breakOff != nil && f.breakOff(n) && i == 1 {
			return
		}
	}
	if !f.textOnly {
		send(map[string]any{"choices": []any{}, "usage": map[string]int{"prompt_tokens": len(req.Prompt), "completion_tokens": req.MaxTokens}})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func start(t *testing.T, f *fake) string {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestLevels(t *testing.T) {
	f := &fake{step: time.Millisecond, context: 64, key: "k"}
	var progress []int
	rep, err := Run(context.Background(), Config{URL: start(t, f), APIKey: "k", Concurrency: []int{1, 4}, Requests: 12,
		PromptLen: 5, MaxTokens: 6, Vocab: 256, Seed: 1, Progress: func(done, total int) {
			require.Equal(t, 24, total)
			progress = append(progress, done)
		}})
	require.NoError(t, err)
	require.Equal(t, "m0", rep.Model, "the server's first model")
	require.Len(t, rep.Levels, 2)
	for i, lv := range rep.Levels {
		require.Equal(t, []int{1, 4}[i], lv.Concurrency)
		require.Equal(t, 12, lv.Sent)
		require.Equal(t, 12, lv.OK)
		require.Empty(t, lv.Errors)
		require.Equal(t, int64(12*6), lv.GeneratedTokens)
		require.Equal(t, 12, lv.TTFT.N)
		require.Equal(t, 12*5, lv.ITL.N)
		require.Equal(t, 12, lv.E2E.N)
		require.Greater(t, lv.TokensPerSec, 0.0)
		require.InDelta(t, lv.RequestsPerSec*6, lv.TokensPerSec, 1e-6)
		require.GreaterOrEqual(t, lv.E2E.P50, 6.0, "the server sleeps a millisecond before each of its 6 tokens")
		require.LessOrEqual(t, lv.TTFT.P50, lv.TTFT.P99)
		require.LessOrEqual(t, lv.TTFT.P99, lv.E2E.Max)
	}
	require.Equal(t, 4, f.most, "the second level's four streams run at once")
	require.Len(t, progress, 24)
	require.Equal(t, 24, progress[23])
	for i := range f.models {
		require.Equal(t, "m0", f.models[i])
		require.Equal(t, 5, f.promptLens[i])
		require.Equal(t, 6, f.maxes[i])
	}
}

func TestErrorsByStatus(t *testing.T) {
	f := &fake{status: func(n int64) int {
		switch n % 4 {
		case 1:
			return http.StatusTooManyRequests
		case 2:
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}, breakOff: func(n int64) bool { return n%4 == 3 }}
	rep, err := Run(context.Background(), Config{URL: start(t, f), Concurrency: []int{1}, Requests: 8, PromptLen: 2, MaxTokens: 4, Vocab: 10})
	require.NoError(t, err)
	lv := rep.Levels[0]
	require.Equal(t, 8, lv.Sent)
	require.Equal(t, 2, lv.OK)
	require.Equal(t, map[string]int{"429": 2, "503": 2, "stream": 2}, lv.Errors)
	require.Equal(t, int64(8), lv.GeneratedTokens, "only the successful requests' tokens")
}

// TestBackoff: a client refused with Retry-After waits before its next request, and the wait
// after the last is not in the level's time.
func TestBackoff(t *testing.T) {
	f := &fake{retry: "1", status: func(n int64) int {
		if n == 1 || n == 3 {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	}}
	begin := time.Now()
	rep, err := Run(context.Background(), Config{URL: start(t, f), Concurrency: []int{1}, Requests: 3, PromptLen: 1, MaxTokens: 1, Vocab: 1})
	require.NoError(t, err)
	took := time.Since(begin)
	lv := rep.Levels[0]
	require.Equal(t, 1, lv.OK)
	require.Equal(t, map[string]int{"429": 2}, lv.Errors)
	require.GreaterOrEqual(t, took, 2*MaxBackoff, "a wait after each refusal")
	require.Less(t, lv.WallSeconds, 1.9, "the wait after the last refusal is not in the level's time")
	require.GreaterOrEqual(t, lv.WallSeconds, 0.9)

	// A level's deadline cuts the wait short.
	f = &fake{retry: "3600", status: func(int64) int { return http.StatusServiceUnavailable }}
	begin = time.Now()
	rep, err = Run(context.Background(), Config{URL: start(t, f), Concurrency: []int{2}, Duration: 200 * time.Millisecond, PromptLen: 1, MaxTokens: 1, Vocab: 1})
	require.NoError(t, err)
	require.Less(t, time.Since(begin), MaxBackoff)
	require.Equal(t, 2, rep.Levels[0].Errors["503"])
}

func TestConnectionErrors(t *testing.T) {
	f := &fake{hangUp: func(n int64) bool { return n%2 == 0 }}
	rep, err := Run(context.Background(), Config{URL: start(t, f), Concurrency: []int{1}, Requests: 4, PromptLen: 1, MaxTokens: 2, Vocab: 1})
	require.NoError(t, err)
	require.Equal(t, 2, rep.Levels[0].OK)
	require.Equal(t, map[string]int{"connection": 2}, rep.Levels[0].Errors)

	// No server at all: the test cannot run.
	srv := httptest.NewServer(f)
	srv.Close()
	rep, err = Run(context.Background(), Config{URL: srv.URL, Concurrency: []int{2}, Requests: 3, PromptLen: 1, MaxTokens: 1, Vocab: 1})
	var se *ServerError
	require.ErrorAs(t, err, &se)
	require.Zero(t, se.Status)
	require.Nil(t, rep)
}

func TestTextStreams(t *testing.T) {
	f := &fake{textOnly: true}
	rep, err := Run(context.Background(), Config{URL: start(t, f), Concurrency: []int{2}, Requests: 4, PromptLen: 3, MaxTokens: 5, Vocab: 10})
	require.NoError(t, err)
	require.Equal(t, 4, rep.Levels[0].OK)
	require.Equal(t, int64(20), rep.Levels[0].GeneratedTokens, "one token an event without token_ids or usage")
}

func TestDuration(t *testing.T) {
	f := &fake{step: time.Millisecond}
	begin := time.Now()
	rep, err := Run(context.Background(), Config{URL: start(t, f), Concurrency: []int{2}, Duration: 100 * time.Millisecond,
		PromptLen: 1, MaxTokens: 3, Vocab: 1})
	require.NoError(t, err)
	require.Less(t, time.Since(begin), 5*time.Second)
	lv := rep.Levels[0]
	require.Greater(t, lv.Sent, 2)
	require.Equal(t, lv.Sent, lv.OK, "requests in flight at the end finish")
	require.Equal(t, 0.1, rep.Duration)
}

func TestCanceled(t *testing.T) {
	f := &fake{step: 10 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, Config{URL: start(t, f), Concurrency: []int{4}, Requests: 1000, PromptLen: 1, MaxTokens: 100, Vocab: 1})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestServerChecks(t *testing.T) {
	url := start(t, &fake{context: 16, key: "k"})
	for _, tc := range []struct {
		name    string
		cfg     Config
		status  int
		context int64
		want    string
	}{
		{"wrong key", Config{APIKey: "x"}, 401, 0, "GET /v1/models: 401 Unauthorized: wrong key"},
		{"no such model", Config{APIKey: "k", Model: "m2"}, 200, 0, `it serves no model "m2" (it serves m0, m1)`},
		{"beyond the context", Config{APIKey: "k", PromptLen: 10, MaxTokens: 8}, 200, 16, "a prompt of 10 tokens and 8 new ones need 17 positions, more than its context of 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.URL, cfg.Concurrency, cfg.Requests = url, []int{1}, 1
			_, err := Run(context.Background(), cfg)
			var se *ServerError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.status, se.Status)
			require.Equal(t, tc.context, se.Context)
			require.Contains(t, err.Error(), tc.want)
		})
	}
	// The model given, without a context in the list: any length is sent.
	rep, err := Run(context.Background(), Config{URL: url, APIKey: "k", Model: "m1", Concurrency: []int{1}, Requests: 1, PromptLen: 100, MaxTokens: 2, Vocab: 5})
	require.NoError(t, err)
	require.Equal(t, "m1", rep.Model)
}

func TestCheckLoopback(t *testing.T) {
	ctx := context.Background()
	for raw, want := range map[string]string{
		"http://127.0.0.1:8000":   "http://127.0.0.1:8000",
		"http://127.1.2.3:80/":    "http://127.1.2.3:80",
		"http://[::1]:8000":       "http://[::1]:8000",
		"https://localhost:8443/": "https://localhost:8443",
	} {
		got, err := CheckLoopback(ctx, raw)
		require.NoError(t, err, raw)
		require.Equal(t, want, got)
	}
	for _, raw := range []string{"http://10.0.0.1:8000", "http://192.0.2.7", "http://[2001:db8::1]:80", "http://0.0.0.0:8000"} {
		_, err := CheckLoopback(ctx, raw)
		var ne *NotLoopbackError
		require.ErrorAs(t, err, &ne, raw)
	}
	for _, raw := range []string{"127.0.0.1:8000", "ftp://127.0.0.1", "http://", "http://u:p@127.0.0.1", "http://127.0.0.1/?q=1", "http://%zz"} {
		_, err := CheckLoopback(ctx, raw)
		var ue *URLError
		require.ErrorAs(t, err, &ue, raw)
	}
}

func TestPercentiles(t *testing.T) {
	require.Equal(t, Percentiles{}, percentiles(nil))
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	require.Equal(t, Percentiles{N: 100, P50: 50, P90: 90, P99: 99, Max: 100}, percentiles(d))
	require.Equal(t, Percentiles{N: 1, P50: 7, P90: 7, P99: 7, Max: 7}, percentiles([]time.Duration{7 * time.Millisecond}))
}

func TestErrorsWording(t *testing.T) {
	require.Equal(t, "loadtest: 10.0.0.1 is not a loopback address", (&NotLoopbackError{Host: "10.0.0.1"}).Error())
	require.Equal(t, "loadtest: h resolves to 10.0.0.1, 127.0.0.1, not only to the loopback",
		(&NotLoopbackError{Host: "h", Addrs: []string{"10.0.0.1", "127.0.0.1"}}).Error())
	err := error(&ServerError{URL: "u", Err: context.Canceled})
	require.True(t, errors.Is(err, context.Canceled))
}
