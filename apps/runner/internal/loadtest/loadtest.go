// Package loadtest is `runner loadtest`'s load generator: it drives an OpenAI-compatible
// /v1/completions server on the loopback with streaming requests of token-id prompts, at one
// concurrency level after another, and measures at each the throughput (generated tokens and
// requests per second), the time to the first token and the inter-token latency (percentiles),
// and the requests that failed, by HTTP status.
//
// Each level is a closed loop: as many clients as its concurrency send requests back to back
// until the level's request count or its duration is reached, whichever comes first; requests in
// flight then finish (each within Config.Timeout). A client refused with a Retry-After (429,
// 503) waits that long, at most MaxBackoff, before its next request, as the OpenAI clients do. It refuses any server that is not on the
// loopback: it is a tool for measuring one's own server, not for loading other people's.
package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config is a load test.
type Config struct {
	// URL is the server's base, e.g. http://127.0.0.1:8000; its host must be on the loopback.
	URL string
	// Model is the request's model; "" asks the server's /v1/models for its first.
	Model string
	// APIKey, if set, is sent as "Authorization: Bearer KEY".
	APIKey string
	// Concurrency lists the levels, each the number of concurrent streams.
	Concurrency []int
	// Requests bounds the requests sent at each level (0: no bound but Duration).
	Requests int
	// Duration bounds the time a level sends requests for (0: no bound but Requests).
	Duration time.Duration
	// PromptLen is each prompt's length in tokens, MaxTokens the tokens it asks for.
	PromptLen, MaxTokens int
	// Vocab bounds the prompts' token ids, drawn at random in [0, Vocab).
	Vocab int64
	// Seed seeds the prompts.
	Seed uint64
	// Timeout bounds each request, its stream included (0: DefaultTimeout).
	Timeout time.Duration
	// Progress, if set, is called after each request, one call at a time, with the requests
	// done and their bound (levels x Requests, fewer when Duration ends a level first; 0 when
	// only Duration bounds them).
	Progress func(done, total int)
}

// DefaultTimeout is a request's bound when Config.Timeout is 0.
const DefaultTimeout = 5 * time.Minute

// MaxBackoff bounds the wait a Retry-After header asks of a client.
const MaxBackoff = time.Second

// Report is a load test's result.
type Report struct {
	URL       string  `json:"url"`
	Model     string  `json:"model"`
	PromptLen int     `json:"prompt_len"`
	MaxTokens int     `json:"max_tokens"`
	Requests  int     `json:"requests_per_level,omitempty"`
	Duration  float64 `json:"duration_s_per_level,omitempty"`
	Levels    []Level `json:"levels"`
}

// Level is one concurrency level's measurements.
type Level struct {
	Concurrency int `json:"concurrency"`
	// Sent counts the requests sent; OK those that streamed to their end.
	Sent int `json:"sent"`
	OK   int `json:"ok"`
	// Errors counts the failed requests by HTTP status ("429"), or "connection" (no response)
	// and "stream" (a 200 whose stream broke off or reported an error).
	Errors map[string]int `json:"errors"`
	// WallSeconds is the level's time, from its first request to its last response's end
	// (a client's wait after a refusal at the end is not in it).
	WallSeconds float64 `json:"wall_s"`
	// GeneratedTokens counts the tokens of the successful requests (the usage's
	// completion_tokens, or the streamed tokens where a server sends no usage).
	GeneratedTokens int64   `json:"generated_tokens"`
	TokensPerSec    float64 `json:"tokens_per_s"`
	RequestsPerSec  float64 `json:"requests_per_s"`
	// TTFT is the time from sending a request to its first token; ITL the time between a
	// stream's consecutive token events; E2E a request's whole time. In milliseconds.
	TTFT Percentiles `json:"ttft_ms"`
	ITL  Percentiles `json:"itl_ms"`
	E2E  Percentiles `json:"e2e_ms"`
}

// Percentiles summarize samples, in milliseconds; all zero when there are none.
type Percentiles struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// NotLoopbackError is a server URL whose host is not on the loopback.
type NotLoopbackError struct {
	Host string
	// Addrs are the addresses the host resolved to, if it is a name.
	Addrs []string
}

func (e *NotLoopbackError) Error() string {
	if len(e.Addrs) > 0 {
		return fmt.Sprintf("loadtest: %s resolves to %s, not only to the loopback", e.Host, strings.Join(e.Addrs, ", "))
	}
	return fmt.Sprintf("loadtest: %s is not a loopback address", e.Host)
}

// URLError is a server URL that is not an http(s) base URL.
type URLError struct {
	URL, Reason string
}

func (e *URLError) Error() string { return fmt.Sprintf("loadtest: URL %q: %s", e.URL, e.Reason) }

// ServerError is a server that is not ready for the load test, or that refuses its settings.
type ServerError struct {
	URL string
	// Status is the HTTP status of the answer, 0 if there was none.
	Status int
	// Context is the server's context (max_model_len), when the prompt and max_tokens exceed it.
	Context int64
	Err     error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("loadtest: the server at %s: %v", e.URL, e.Err)
}

func (e *ServerError) Unwrap() error { return e.Err }

// CheckLoopback returns the server's base URL, without a trailing slash, if its host is on
// the loopback (an IP address of 127.0.0.0/8 or ::1, or a name that resolves to nothing else).
func CheckLoopback(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return "", &URLError{raw, "want http://HOST:PORT"}
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", &URLError{raw, "want a base URL, http://HOST:PORT"}
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return "", &NotLoopbackError{Host: host}
		}
	} else {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return "", &URLError{raw, "its host: " + err.Error()}
		}
		var all []string
		loop := len(addrs) > 0
		for _, a := range addrs {
			all = append(all, a.IP.String())
			loop = loop && a.IP.IsLoopback()
		}
		if !loop {
			return "", &NotLoopbackError{Host: host, Addrs: all}
		}
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// Run runs the load test, one level after another. It returns an error, and no report, only
// when the test could not run: a URL off the loopback, a server that is not ready, or ctx's
// end; failed requests are counted in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	base, err := CheckLoopback(ctx, cfg.URL)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Vocab <= 0 {
		cfg.Vocab = 1
	}
	most := slices.Max(cfg.Concurrency)
	client := &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        most,
		MaxIdleConnsPerHost: most,
		MaxConnsPerHost:     most,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}}
	defer client.CloseIdleConnections()
	lt := &loadTest{cfg: cfg, base: base, client: client}
	if err := lt.check(ctx); err != nil {
		return nil, err
	}
	rep := &Report{URL: base, Model: lt.cfg.Model, PromptLen: cfg.PromptLen, MaxTokens: cfg.MaxTokens,
		Requests: cfg.Requests, Duration: cfg.Duration.Seconds()}
	total := 0
	if cfg.Requests > 0 {
		total = cfg.Requests * len(cfg.Concurrency)
	}
	var (
		mu   sync.Mutex
		done int
	)
	lt.progress = func() {
		mu.Lock()
		defer mu.Unlock()
		done++
		if cfg.Progress != nil {
			cfg.Progress(done, total)
		}
	}
	for i, c := range cfg.Concurrency {
		lv, err := lt.level(ctx, i, c)
		if err != nil {
			return nil, err
		}
		rep.Levels = append(rep.Levels, lv)
	}
	return rep, nil
}

type loadTest struct {
	cfg      Config
	base     string
	client   *http.Client
	progress func()
}

func (lt *loadTest) get(ctx context.Context, path string, auth bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, lt.base+path, nil)
	if err != nil {
		return nil, err
	}
	if auth && lt.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+lt.cfg.APIKey)
	}
	return lt.client.Do(req)
}

// check asks the server for its models: the first is the model when none is given, and its
// max_model_len, where it says one, must hold the prompt and max_tokens.
func (lt *loadTest) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := lt.get(ctx, "/v1/models", true)
	if err != nil {
		return &ServerError{URL: lt.base, Err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return &ServerError{URL: lt.base, Status: resp.StatusCode, Err: fmt.Errorf("GET /v1/models: %s: %s", resp.Status, errorMessage(b))}
	}
	var list struct {
		Data []modelEntry `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return &ServerError{URL: lt.base, Status: resp.StatusCode, Err: fmt.Errorf("GET /v1/models: %w", err)}
	}
	i := slices.IndexFunc(list.Data, func(m modelEntry) bool { return lt.cfg.Model == "" || m.ID == lt.cfg.Model })
	switch {
	case i < 0 && lt.cfg.Model == "":
		return &ServerError{URL: lt.base, Status: resp.StatusCode, Err: errors.New("it serves no model for /v1/completions")}
	case i < 0:
		var ids []string
		for _, m := range list.Data {
			ids = append(ids, m.ID)
		}
		return &ServerError{URL: lt.base, Status: resp.StatusCode, Err: fmt.Errorf("it serves no model %q (it serves %s)", lt.cfg.Model, strings.Join(ids, ", "))}
	}
	m := list.Data[i]
	lt.cfg.Model = m.ID
	if need := int64(lt.cfg.PromptLen + lt.cfg.MaxTokens - 1); m.MaxModelLen > 0 && need > m.MaxModelLen {
		return &ServerError{URL: lt.base, Status: resp.StatusCode, Context: m.MaxModelLen,
			Err: fmt.Errorf("a prompt of %d tokens and %d new ones need %d positions, more than its context of %d", lt.cfg.PromptLen, lt.cfg.MaxTokens, need, m.MaxModelLen)}
	}
	return nil
}

// modelEntry is a model of /v1/models' list; max_model_len is vLLM's field (and carve's).
type modelEntry struct {
	ID          string `json:"id"`
	MaxModelLen int64  `json:"max_model_len"`
}

// errorMessage is the message of an OpenAI-shaped error body, or the body.
func errorMessage(b []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	return strings.TrimSpace(string(b))
}

// outcome is one request's measurements.
type outcome struct {
	kind   string        // "" for success, else the Errors key
	retry  time.Duration // the Retry-After of a refusal
	end    time.Time     // when the response ended
	tokens int64
	ttft   time.Duration
	itl    []time.Duration
	e2e    time.Duration
}

func (lt *loadTest) level(ctx context.Context, index, concurrency int) (Level, error) {
	var (
		sent    atomic.Int64
		mu      sync.Mutex
		results []outcome
		wg      sync.WaitGroup
	)
	start := time.Now()
	var deadline time.Time
	if lt.cfg.Duration > 0 {
		deadline = start.Add(lt.cfg.Duration)
	}
	for w := range concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(lt.cfg.Seed, uint64(index)<<32|uint64(w)))
			for ctx.Err() == nil {
				if n := sent.Add(1); lt.cfg.Requests > 0 && n > int64(lt.cfg.Requests) {
					sent.Add(-1)
					return
				}
				if !deadline.IsZero() && !time.Now().Before(deadline) {
					sent.Add(-1)
					return
				}
				o := lt.request(ctx, rng)
				o.end = time.Now()
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				results = append(results, o)
				mu.Unlock()
				lt.progress()
				if o.retry > 0 {
					wait := min(o.retry, MaxBackoff)
					if !deadline.IsZero() {
						wait = min(wait, time.Until(deadline))
					}
					select {
					case <-time.After(wait):
					case <-ctx.Done():
					}
				}
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Level{}, err
	}
	var last time.Time
	for _, o := range results {
		if o.end.After(last) {
			last = o.end
		}
	}
	wall := last.Sub(start)
	lv := Level{Concurrency: concurrency, Sent: int(sent.Load()), Errors: map[string]int{}, WallSeconds: wall.Seconds()}
	var ttft, itl, e2e []time.Duration
	for _, o := range results {
		if o.kind != "" {
			lv.Errors[o.kind]++
			continue
		}
		lv.OK++
		lv.GeneratedTokens += o.tokens
		ttft = append(ttft, o.ttft)
		itl = append(itl, o.itl...)
		e2e = append(e2e, o.e2e)
	}
	if s := wall.Seconds(); s > 0 {
		lv.TokensPerSec = float64(lv.GeneratedTokens) / s
		lv.RequestsPerSec = float64(lv.OK) / s
	}
	lv.TTFT, lv.ITL, lv.E2E = percentiles(ttft), percentiles(itl), percentiles(e2e)
	return lv, nil
}

// request sends one streaming completion and reads its stream to the end.
func (lt *loadTest) request(ctx context.Context, rng *rand.Rand) outcome {
	prompt := make([]int64, lt.cfg.PromptLen)
	for i := range prompt {
		prompt[i] = rng.Int64N(lt.cfg.Vocab)
	}
	body, _ := json.Marshal(map[string]any{"model": lt.cfg.Model, "prompt": prompt, "max_tokens": lt.cfg.MaxTokens,
		"temperature": 0, "stream": true, "stream_options": map[string]bool{"include_usage": true}})
	ctx, cancel := context.WithTimeout(ctx, lt.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, lt.base+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		return outcome{kind: "connection"}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if lt.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+lt.cfg.APIKey)
	}
	start := time.Now()
	resp, err := lt.client.Do(req)
	if err != nil {
		return outcome{kind: "connection"}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		o := outcome{kind: strconv.Itoa(resp.StatusCode)}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 &&
			(resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
			o.retry = time.Duration(min(s, 3600)) * time.Second
		}
		return o
	}
	o := outcome{}
	var last time.Time
	var streamed, usage int64 = 0, -1
	done := false
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	for !done {
		line, err := rd.ReadSlice('\n')
		if err != nil && (err != io.EOF || len(line) == 0) {
			break
		}
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var ev struct {
			Choices []struct {
				Text     string  `json:"text"`
				TokenIDs []int64 `json:"token_ids"`
			} `json:"choices"`
			Usage *struct {
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"usage"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &ev) != nil || len(ev.Error) > 0 {
			return outcome{kind: "stream"}
		}
		if ev.Usage != nil {
			usage = ev.Usage.CompletionTokens
		}
		n := int64(0)
		for _, ch := range ev.Choices {
			switch {
			case len(ch.TokenIDs) > 0:
				n += int64(len(ch.TokenIDs))
			case ch.Text != "":
				n++ // a server that streams text alone: one token an event
			}
		}
		if n == 0 {
			continue
		}
		now := time.Now()
		if streamed == 0 {
			o.ttft = now.Sub(start)
		} else {
			o.itl = append(o.itl, now.Sub(last))
		}
		last = now
		streamed += n
	}
	if !done || streamed == 0 {
		return outcome{kind: "stream"}
	}
	o.e2e = time.Since(start)
	o.tokens = streamed
	if usage >= 0 {
		o.tokens = usage
	}
	return o
}

// percentiles are the samples' nearest-rank percentiles.
func percentiles(d []time.Duration) Percentiles {
	if len(d) == 0 {
		return Percentiles{}
	}
	slices.Sort(d)
	at := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(d)))) - 1
		return ms(d[min(max(i, 0), len(d)-1)])
	}
	return Percentiles{N: len(d), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(d[len(d)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
