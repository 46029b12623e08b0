package serve

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"carve.dev/libs/engine/generate"
)

var greedy = generate.Greedy{}

// completionRequest is OpenAI's /v1/completions request, with token-id prompts; the fields of
// vLLM's that mean the same (top_k, stop_token_ids) too. Fields it does not name are ignored,
// as OpenAI's clients send some by default.
type completionRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"`
	MaxTokens     *int64          `json:"max_tokens"`
	Temperature   *float64        `json:"temperature"`
	TopK          *int64          `json:"top_k"`
	Seed          *int64          `json:"seed"`
	Stop          json.RawMessage `json:"stop"`
	StopTokenIDs  []int64         `json:"stop_token_ids"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	N *int64 `json:"n"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type choice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	TokenIDs     []int64 `json:"token_ids"`
	FinishReason *string `json:"finish_reason"`
	Logprobs     any     `json:"logprobs"`
}

type completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   *usage   `json:"usage,omitempty"`
}

// sequence is one prompt of a request, as it is checked and then generated.
type sequence struct {
	prompt []int64
	max    int
	pick   generate.Sampler
	tokens []int64
	finish string
	err    error
}

// DefaultMaxTokens is max_tokens when a request gives none (OpenAI's default), or the room the
// context leaves if less.
const DefaultMaxTokens = 16

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if !s.available(w, r) {
		return
	}
	if s.gen == nil {
		writeError(w, r, http.StatusBadRequest, "invalid_request_error",
			fmt.Sprintf("model %q has no KV cache to generate with: call POST /v2/models/%s/infer", s.name, s.name))
		return
	}
	var req completionRequest
	if !decodeBody(w, r, &req) {
		return
	}
	seqs, stops, err := s.parseCompletion(&req)
	if err != nil {
		var ce *contextError
		kind := "invalid_request_error"
		if errors.As(err, &ce) {
			kind = "context_length_exceeded"
		}
		writeError(w, r, http.StatusBadRequest, kind, err.Error())
		return
	}
	k := len(seqs)
	if !s.admit(w, r, k) {
		return
	}
	defer s.adm.leave(k)

	id := fmt.Sprintf("cmpl-%d", s.nextID.Add(1))
	created := time.Now().Unix()
	var u usage
	for _, q := range seqs {
		u.PromptTokens += int64(len(q.prompt))
	}
	s.m.promptTokens.Add(float64(u.PromptTokens))

	var (
		mu      sync.Mutex // the stream's writes
		sse     *sseWriter
		flusher http.Flusher
	)
	if req.Stream {
		flusher, _ = w.(http.Flusher)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		sse = &sseWriter{w: w, f: flusher}
		if flusher != nil {
			flusher.Flush() // the headers now: the client sees the stream open while it waits for a slot
		}
	}
	var wg sync.WaitGroup
	for i, q := range seqs {
		var emit func(tok int64)
		if sse != nil {
			emit = func(tok int64) {
				mu.Lock()
				defer mu.Unlock()
				sse.send(completion{ID: id, Object: "text_completion", Created: created, Model: s.name,
					Choices: []choice{{Index: i, TokenIDs: []int64{tok}}}})
			}
		}
		if s.sched != nil {
			wg.Go(func() { s.runBatched(r.Context(), start, q, stops, emit) })
		} else {
			wg.Go(func() { s.runSequence(r.Context(), start, q, stops, emit) })
		}
	}
	wg.Wait()
	for _, q := range seqs {
		u.CompletionTokens += int64(len(q.tokens))
		if q.finish == "stop" {
			u.CompletionTokens++ // the stop token was generated, though not returned
		}
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	var failed error
	for _, q := range seqs {
		if q.err != nil {
			failed = q.err
			break
		}
	}
	if sse != nil {
		if failed != nil {
			sse.send(map[string]any{"error": map[string]any{"message": failed.Error(), "type": "server_error"}})
		} else {
			for i, q := range seqs {
				sse.send(completion{ID: id, Object: "text_completion", Created: created, Model: s.name,
					Choices: []choice{{Index: i, TokenIDs: []int64{}, FinishReason: &q.finish}}})
			}
			if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
				sse.send(completion{ID: id, Object: "text_completion", Created: created, Model: s.name, Choices: []choice{}, Usage: &u})
			}
		}
		sse.done()
		s.m.e2e.Observe(time.Since(start).Seconds())
		return
	}
	if failed != nil {
		runError(w, r, failed)
		return
	}
	resp := completion{ID: id, Object: "text_completion", Created: created, Model: s.name, Usage: &u}
	for i, q := range seqs {
		resp.Choices = append(resp.Choices, choice{Index: i, TokenIDs: q.tokens, FinishReason: &q.finish})
	}
	writeJSON(w, http.StatusOK, resp)
	s.m.e2e.Observe(time.Since(start).Seconds())
}

// errStop ends a generation at a stop token.
var errStop = errors.New("stop token")

// runSequence waits for a slot and generates q on it, handing each token to emit (if not nil).
func (s *Server) runSequence(ctx context.Context, arrived time.Time, q *sequence, stops map[int64]bool, emit func(int64)) {
	slot, err := s.acquire(ctx)
	if err != nil {
		s.m.waiting.Dec()
		q.err = err
		return
	}
	defer s.release(slot)
	q.tokens = make([]int64, 0, q.max)
	last := time.Time{}
	each := func(st generate.Step) error {
		if s.stepHook != nil {
			s.stepHook()
		}
		now := time.Now()
		if st.Index == 0 {
			s.m.ttft.Observe(now.Sub(arrived).Seconds())
		} else {
			s.m.itl.Observe(now.Sub(last).Seconds())
		}
		last = now
		s.m.genTokens.Inc()
		tok := st.Tokens[0]
		if stops[tok] {
			return errStop
		}
		q.tokens = append(q.tokens, tok)
		if emit != nil {
			emit(tok)
		}
		return ctx.Err()
	}
	_, _, err = s.gen.Gens[slot].Generate(ctx, q.prompt, int64(len(q.prompt)), q.max, q.pick, each)
	switch {
	case err == nil:
		q.finish = "length"
	case errors.Is(err, errStop):
		q.finish = "stop"
	default:
		q.err = err
		return
	}
	s.m.success.WithLabelValues(q.finish).Inc()
}

// contextError is a prompt and max_tokens that do not fit the context reserved.
type contextError struct{ msg string }

func (e *contextError) Error() string { return e.msg }

// parseCompletion checks the request and makes its sequences and stop tokens.
func (s *Server) parseCompletion(req *completionRequest) ([]*sequence, map[int64]bool, error) {
	g := s.gen
	vocab, ctxLen := g.Cache.Vocab, g.Generate.Context
	if req.Model != "" && req.Model != s.name {
		return nil, nil, badf("model %q: this server serves %q", req.Model, s.name)
	}
	if req.N != nil && *req.N != 1 {
		return nil, nil, badf("n %d: this server makes one completion per prompt (give several prompts instead)", *req.N)
	}
	prompts, err := parsePrompt(req.Prompt)
	if err != nil {
		return nil, nil, err
	}
	if slots := s.slots(); len(prompts) > slots+s.opts.Queue {
		return nil, nil, badf("%d prompts: at most %d in one request (the server's %d slots and queue of %d)", len(prompts), slots+s.opts.Queue, slots, s.opts.Queue)
	}
	temp := 1.0 // OpenAI's default
	if req.Temperature != nil {
		temp = *req.Temperature
		if temp < 0 || math.IsNaN(temp) || math.IsInf(temp, 0) || temp > 100 {
			return nil, nil, badf("temperature %g: want a number in [0, 100] (0: greedy)", temp)
		}
	}
	topK := int64(0)
	if req.TopK != nil {
		topK = *req.TopK
		if topK < -1 {
			return nil, nil, badf("top_k %d: want -1 or 0 (every token) or a positive number", topK)
		}
		topK = max(topK, 0)
	}
	var seed uint64
	if req.Seed != nil {
		seed = uint64(*req.Seed)
	} else {
		var b [8]byte
		rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])
	}
	stops := map[int64]bool{}
	ids, err := parseStop(req.Stop)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range append(ids, req.StopTokenIDs...) {
		if id < 0 || id >= vocab {
			return nil, nil, badf("stop token %d is outside the vocabulary [0, %d)", id, vocab)
		}
		stops[id] = true
	}
	var seqs []*sequence
	for i, p := range prompts {
		n := int64(len(p))
		if n == 0 {
			return nil, nil, badf("prompt %d is empty: give at least one token id", i)
		}
		for j, id := range p {
			if id < 0 || id >= vocab {
				return nil, nil, badf("prompt %d: token %d (position %d) is outside the vocabulary [0, %d)", i, id, j, vocab)
			}
		}
		if n >= ctxLen {
			return nil, nil, &contextError{fmt.Sprintf("prompt %d has %d tokens: this server's context is %d positions (--context), and a prompt must leave room for a new token",
				i, n, ctxLen)}
		}
		maxNew := min(int64(DefaultMaxTokens), ctxLen-n+1)
		if req.MaxTokens != nil {
			maxNew = *req.MaxTokens
			if maxNew < 1 {
				return nil, nil, badf("max_tokens %d: want at least 1", maxNew)
			}
			// The last new token needs no position: prompt + max_tokens - 1 at most the context.
			if maxNew-1 > ctxLen-n {
				return nil, nil, &contextError{fmt.Sprintf("prompt %d of %d tokens and max_tokens %d need %d positions, more than this server's context of %d (--context): "+
					"max_tokens can be at most %d", i, n, maxNew, n+maxNew-1, ctxLen, ctxLen-n+1)}
			}
		}
		var pick generate.Sampler = greedy
		if temp > 0 && topK != 1 {
			pick = generate.NewTopK(int(topK), temp, seed+uint64(i))
		}
		seqs = append(seqs, &sequence{prompt: p, max: int(maxNew), pick: pick})
	}
	return seqs, stops, nil
}

// parsePrompt reads a prompt of token ids ([1, 2, 3]) or a batch of them ([[1, 2], [3]]).
func parsePrompt(raw json.RawMessage) ([][]int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badf("prompt is missing: give token ids, e.g. [1, 2, 3], or a batch of them, [[1, 2], [3]]")
	}
	var one []int64
	if err := json.Unmarshal(raw, &one); err == nil {
		if len(one) == 0 {
			return nil, badf("prompt is empty: give at least one token id")
		}
		return [][]int64{one}, nil
	}
	var batch [][]int64
	if err := json.Unmarshal(raw, &batch); err == nil {
		if len(batch) == 0 {
			return nil, badf("prompt is an empty batch: give at least one prompt")
		}
		return batch, nil
	}
	var text any
	if json.Unmarshal(raw, &text) == nil {
		switch text.(type) {
		case string:
			return nil, badf("prompt is text: this server takes token ids (it loads no tokenizer), e.g. [1, 2, 3]")
		case []any:
			return nil, badf("prompt: want token ids, e.g. [1, 2, 3], or a batch of them, [[1, 2], [3]] (text needs a tokenizer, which this server does not load)")
		}
	}
	return nil, badf("prompt: want token ids, e.g. [1, 2, 3], or a batch of them, [[1, 2], [3]]")
}

// parseStop reads stop as a token id or a list of them.
func parseStop(raw json.RawMessage) ([]int64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var id int64
	if json.Unmarshal(raw, &id) == nil {
		return []int64{id}, nil
	}
	var ids []int64
	if json.Unmarshal(raw, &ids) == nil {
		return ids, nil
	}
	return nil, badf("stop: want token ids (a number or a list of them); stop strings need a tokenizer, which this server does not load")
}

// sseWriter writes server-sent events.
type sseWriter struct {
	w interface{ Write([]byte) (int, error) }
	f http.Flusher
}

func (s *sseWriter) send(v any) {
	b, _ := json.Marshal(v)
	s.w.Write([]byte("data: "))
	s.w.Write(b)
	s.w.Write([]byte("\n\n"))
	if s.f != nil {
		s.f.Flush()
	}
}

func (s *sseWriter) done() {
	s.w.Write([]byte("data: [DONE]\n\n"))
	if s.f != nil {
		s.f.Flush()
	}
}
