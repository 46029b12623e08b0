package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/generate"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// GenerateConfig says what `runner generate` loads and generates. Of Config it uses ModelPath,
// Device (one device), DeviceMemory, Policy, Limit, Workers, NoFuse, Graphs, Seed, Registry and
// Observe; the envelope and the state come from the cache (generate.Cache.RuntimeOptions).
// Config.Sessions is the sessions reserved (0: one), each with its own arena, KV state and
// generator: `runner serve`'s sequence slots.
type GenerateConfig struct {
	Config
	// Names override the cache's input and output names (generate.Names).
	Names generate.Names
	// Prompt holds Batch rows of PromptLen token ids, row-major; nil means random ids below the
	// vocabulary, made from Seed.
	Prompt    []int64
	PromptLen int64
	Batch     int64
	MaxNew    int
	// Context is the positions reserved per sequence (prompt and new tokens); 0 means
	// PromptLen+MaxNew rounded up to a bucket (generate.Bucket).
	Context int64
	// TopK > 0 or Temperature > 0 samples among the TopK most likely tokens (0: all) at
	// Temperature (0: 1), seeded with Seed; otherwise the choice is greedy.
	TopK        int
	Temperature float64
	// Slots > 0 asks for `runner serve`'s continuous batching: one session whose cache holds a
	// row for each of Slots slots and a prefill row (generate.Batch, Generation.Batch), prompts fed PrefillChunk tokens a step (0:
	// generate.DefaultChunk), where the cache's form admits rows of different lengths (the
	// shared-buffer form). In the concat form it means Slots sessions, as Config.Sessions.
	Slots        int
	PrefillChunk int64
	// MostSlots, with Slots 0, asks for the most slots whose reservation fits the available
	// bytes (the device's free memory, or Limit if smaller), at most MaxFitSlots, planned before
	// anything is reserved; Generation.SlotFit says how many and what one more would need. None
	// fitting fails with *SlotFitError.
	MostSlots bool
}

// MaxFitSlots bounds the slots GenerateConfig.MostSlots takes; GenerateConfig.Slots asks for
// more. A slot is a sequence decoding at once, and a decode step of 16-bit weights turns from
// bound by memory bandwidth to bound by compute near 200 rows on an H200 (989 TFLOP/s over
// 4.8 TB/s is about 206 FLOP per weight byte; a row does one multiply-add, 2 FLOP, per 2-byte
// weight): rows beyond the next power of two add latency per token more than tokens per second,
// and the KV state they would hold serves longer contexts better. A concat-form decoder's slots
// are sessions, each with a stream and up to two OS threads: 256 stay far below MaxSessions.
const MaxFitSlots = 256

// SlotFit is how GenerateConfig.MostSlots chose the slots.
type SlotFit struct {
	Slots int `json:"slots"`
	// Sessions says the slots are sessions (the concat form), each reserving an arena and KV
	// state of its own beside one copy of the weights; otherwise they are rows of one session.
	Sessions       bool  `json:"sessions,omitempty"`
	AvailableBytes int64 `json:"available_bytes"` // device free memory, or the limit if smaller
	LimitBytes     int64 `json:"limit_bytes"`
	// ReservedBytes is what Slots reserve as planned (a tight plan, Config.Tight, reserves at
	// most that).
	ReservedBytes int64 `json:"reserved_bytes"`
	// NextBytes is what Slots+1 would reserve, more than AvailableBytes; 0 when Slots is
	// MaxFitSlots, where more may fit.
	NextBytes int64 `json:"next_bytes,omitempty"`
}

// SlotFitError is GenerateConfig.MostSlots finding that not even one slot fits: one slot of
// Context positions needs Needed bytes (Weights + Arena + State), more than Available.
type SlotFitError struct {
	Context               int64
	Needed                int64 // math.MaxInt64 where it overflows int64
	Weights, Arena, State int64
	Available, LimitBytes int64
}

func (e *SlotFitError) Error() string {
	return fmt.Sprintf("not even one slot of context %d fits: it needs %d bytes (weights %d + arena %d + KV state %d), %d are available",
		e.Context, e.Needed, e.Weights, e.Arena, e.State, e.Available)
}

// DefaultContext is the context a generation of maxNew tokens after a prompt of promptLen
// reserves when none is given: their sum rounded up to a bucket, and at most
// engine.MaxDimValue (a sum beyond it, or beyond int64, gives engine.MaxDimValue: too short).
func DefaultContext(promptLen int64, maxNew int) int64 {
	sum, ok := graph.CheckedAdd(promptLen, int64(maxNew))
	if !ok || sum > engine.MaxDimValue {
		return engine.MaxDimValue
	}
	return generate.Bucket(sum, engine.MaxDimValue)
}

// Generation is a model loaded for generation on one device: its KV cache recognised, its
// envelope planned for the cache's configuration, and one session with the cache's state
// buffers reserved. Not safe for concurrent use.
type Generation struct {
	Model     *graph.Model    // the graph run: fused unless Config.NoFuse
	ModelName string          // the path, or bundled.Name
	Fusion    *rewrite.Report // nil with Config.NoFuse
	Cache     *generate.Cache
	Replica   *Replica
	Session   *engine.Session     // Sessions[0]
	Gen       *generate.Generator // Gens[0]
	// Sessions and Gens are the Config.Sessions sessions and their generators, by slot; with
	// Batch, the one session and no generators.
	Sessions []*engine.Session
	Gens     []*generate.Generator
	// Batch, when GenerateConfig.Slots asked for it and the form admits it, runs the slots as
	// rows of one session; BatchConfig is what it was reserved for.
	Batch       *generate.Batch
	BatchConfig generate.BatchConfig
	// SlotFit, when GenerateConfig.MostSlots asked for it, says how the slots were chosen.
	SlotFit *SlotFit
	// Generate is the configuration reserved for: batch, context and longest prompt.
	Generate generate.Config
	Prompt   []int64 // Batch rows of PromptLen ids
	Memory   GenMemory
	Config   GenerateConfig
}

// GenMemory is what a Generation holds in device memory, and what it was checked against.
type GenMemory struct {
	Envelope          string `json:"envelope"`
	WeightBytes       int64  `json:"weight_bytes"`        // the model's weights, mapped from its file
	DeviceWeightBytes int64  `json:"device_weight_bytes"` // their device copy on a discrete device; 0 on the CPU
	ArenaBytes        int64  `json:"arena_bytes"`         // each session's arena as reserved (alloc.ReservedSize)
	StateBytes        int64  `json:"kv_state_bytes"`      // each session's KV cache buffers as reserved
	// KVBytesPerToken is what one position of one sequence takes in the cache (every layer's
	// keys and values).
	KVBytesPerToken int64 `json:"kv_bytes_per_token"`
	// ReservedBytes is DeviceWeightBytes + Sessions x (ArenaBytes + StateBytes): what the
	// reservation check counts, and (for one session) what `estimator kv` reports.
	ReservedBytes  int64 `json:"reserved_bytes"`
	AvailableBytes int64 `json:"available_bytes"` // device free memory, or the limit if smaller, before reserving
	LimitBytes     int64 `json:"limit_bytes"`
	Sessions       int   `json:"sessions,omitempty"` // more than one only for `runner serve`
	Rows           int64 `json:"rows,omitempty"`     // the batch's slots (GenerateConfig.Slots), rows of its one session
}

// LoadGenerator loads the model, recognises its KV cache, plans the envelope of cfg's batch and
// context with the cache in state buffers (with MostSlots, first the most slots that fit),
// checks that weights, arena and state fit (failing with *engine.ReservationError before
// anything is allocated) and reserves one session. A prompt that does not fit the context fails
// with *generate.ContextError, before any loading. On error everything acquired is released.
func LoadGenerator(ctx context.Context, cfg GenerateConfig) (_ *Generation, err error) {
	if cfg.Batch < 1 || cfg.PromptLen < 1 || cfg.MaxNew < 1 {
		return nil, &UsageError{fmt.Sprintf("batch %d, prompt length %d, %d new tokens: each must be at least 1", cfg.Batch, cfg.PromptLen, cfg.MaxNew)}
	}
	if m := engine.MaxDimValue; cfg.Batch > m || cfg.PromptLen > m || int64(cfg.MaxNew) > m || cfg.Context > m {
		return nil, &UsageError{fmt.Sprintf("batch %d, prompt length %d, %d new tokens, context %d: each must be at most %d, the largest dim carve admits",
			cfg.Batch, cfg.PromptLen, cfg.MaxNew, cfg.Context, m)}
	}
	if t := cfg.Temperature; t < 0 || math.IsNaN(t) || math.IsInf(t, 0) {
		return nil, &UsageError{fmt.Sprintf("temperature %g: want 0 (greedy, or 1 with TopK) or a finite number more than 0", t)}
	}
	if cfg.Prompt != nil && int64(len(cfg.Prompt)) != cfg.Batch*cfg.PromptLen {
		return nil, &UsageError{fmt.Sprintf("the prompt has %d ids, not %d rows of %d", len(cfg.Prompt), cfg.Batch, cfg.PromptLen)}
	}
	if cfg.Context == 0 {
		cfg.Context = DefaultContext(cfg.PromptLen, cfg.MaxNew)
	}
	// The last new token needs no position: PromptLen + MaxNew - 1 at most the context.
	if cfg.PromptLen >= cfg.Context || int64(cfg.MaxNew)-1 > cfg.Context-cfg.PromptLen {
		return nil, &generate.ContextError{Prompt: cfg.PromptLen, New: int64(cfg.MaxNew), Context: cfg.Context}
	}
	if cfg.Sessions < 1 {
		cfg.Sessions = 1
	}
	if cfg.Sessions > MaxSessions {
		return nil, &UsageError{fmt.Sprintf("%d sessions: at most %d (each holds a stream, and on the cpu and sim devices up to two OS threads)", cfg.Sessions, MaxSessions)}
	}
	if cfg.MostSlots && cfg.Slots != 0 {
		return nil, &UsageError{fmt.Sprintf("%d slots and the most slots that fit: ask for one", cfg.Slots)}
	}
	specs, err := ParseDevices(cfg.Device)
	if err != nil {
		return nil, err
	}
	if len(specs) > 1 {
		return nil, &UsageError{fmt.Sprintf("--device %s: generation runs on one device", cfg.Device)}
	}
	g := &Generation{Config: cfg, Generate: generate.Config{Batch: cfg.Batch, Context: cfg.Context, Prompt: cfg.PromptLen}}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.Close())
		}
	}()
	if g.Model, g.ModelName, err = loadModel(cfg.ModelPath); err != nil {
		return nil, err
	}
	if g.Model, g.Fusion, err = fuse(g.Model, specs[0].Kind, cfg.Config); err != nil {
		return nil, err
	}
	prepared, cache, err := generate.Prepare(g.Model, cfg.Names)
	if err != nil {
		return nil, err // g.Model is still the loaded model, for Close
	}
	g.Model, g.Cache = prepared, cache // the tied model shares the loaded model's weights: Close closes both
	g.Replica = &Replica{}
	if err := g.Replica.open(specs[0], cfg.Config); err != nil {
		return nil, err
	}
	if cfg.MostSlots {
		if cfg.Slots, err = g.mostSlots(ctx, cfg); err != nil {
			return nil, err
		}
	}
	var opts engine.RuntimeOptions
	if cfg.Slots > 0 && cache.Form == generate.SharedBuffer {
		cfg.Sessions = 1
		g.BatchConfig = generate.BatchConfig{Rows: int64(cfg.Slots), Context: cfg.Context, Chunk: cfg.PrefillChunk}
		opts, err = BatchOptions(g.Model, g.Cache, g.BatchConfig, cfg.Config)
	} else {
		if cfg.Slots > 0 {
			if cfg.Slots > MaxSessions {
				return nil, &UsageError{fmt.Sprintf("%d slots of the %s form, a session each: at most %d (each holds a stream, and on the cpu and sim devices up to two OS threads)", cfg.Slots, cache.Form, MaxSessions)}
			}
			cfg.Sessions = cfg.Slots
		}
		opts, err = GenerateOptions(g.Model, g.Cache, g.Generate, cfg.Config)
	}
	if err != nil {
		return nil, err
	}
	g.Config = cfg
	if err := g.Replica.plan(ctx, g.Model, opts, cfg.Config); err != nil {
		return nil, err
	}
	rt := g.Replica.Runtime
	g.Prompt = cfg.Prompt
	if g.Prompt == nil {
		g.Prompt = RandomPrompt(cfg.Batch*cfg.PromptLen, g.Cache.Vocab, cfg.Seed)
	}
	for i, id := range g.Prompt {
		if id < 0 || id >= g.Cache.Vocab {
			return nil, &PromptError{Token: id, Row: int64(i) / cfg.PromptLen, Position: int64(i) % cfg.PromptLen, Vocab: g.Cache.Vocab}
		}
	}
	ep := rt.Reserve
	avail := g.Replica.available(cfg.Limit)
	arena := alloc.ReservedSize(max(ep.ArenaBytes, 1))
	g.Memory = GenMemory{Envelope: ep.Envelope.String(), WeightBytes: ep.WeightBytes, DeviceWeightBytes: ep.DeviceWeightBytes,
		ArenaBytes: arena, StateBytes: rt.StateBytes(), KVBytesPerToken: g.Cache.BytesPerToken(),
		ReservedBytes:  ep.DeviceWeightBytes + int64(cfg.Sessions)*(arena+rt.StateBytes()), // checked for overflow by NewRuntime
		AvailableBytes: avail, LimitBytes: cfg.Limit}
	if cfg.Sessions > 1 {
		g.Memory.Sessions = cfg.Sessions
	}
	if g.BatchConfig.Rows > 0 {
		g.Memory.Rows = g.BatchConfig.Rows
		s, err := rt.NewSession()
		if err != nil {
			return nil, fmt.Errorf("%s: reserving the session's arena and KV cache of %d rows: %w", g.Replica.Backend.Name(), g.BatchConfig.Rows, err)
		}
		g.Replica.Sessions = append(g.Replica.Sessions, s)
		if g.Batch, err = generate.NewBatch(rt, s, g.Cache, g.BatchConfig); err != nil {
			return nil, err
		}
		g.BatchConfig = g.Batch.Config()
		g.Sessions, g.Session = []*engine.Session{s}, s
		return g, nil
	}
	for range cfg.Sessions {
		s, err := rt.NewSession()
		if err != nil {
			return nil, fmt.Errorf("%s: reserving the session's arena and KV cache: %w", g.Replica.Backend.Name(), err)
		}
		g.Replica.Sessions = append(g.Replica.Sessions, s)
		gen, err := generate.New(rt, s, g.Cache, g.Generate)
		if err != nil {
			return nil, err
		}
		g.Sessions, g.Gens = append(g.Sessions, s), append(g.Gens, gen)
	}
	g.Session, g.Gen = g.Sessions[0], g.Gens[0]
	return g, nil
}

// mostSlots finds the most slots of cfg's context whose reservation fits the open replica's
// available bytes, at most MaxFitSlots, planned as the runtime will plan them (Replica.planOptions)
// and without reserving anything: rows of one batch in the shared-buffer form
// (generate.Cache.MostRows), sessions of cfg's generation in the concat form, whose reservation
// grows by one session's arena and state a slot. It sets g.SlotFit; none fitting is a
// *SlotFitError.
func (g *Generation) mostSlots(ctx context.Context, cfg GenerateConfig) (int, error) {
	rep := g.Replica
	fit := &SlotFit{AvailableBytes: rep.available(cfg.Limit), LimitBytes: cfg.Limit}
	g.SlotFit = fit
	opts := rep.planOptions(runtimeOptions(nil, cfg.Config).Options, cfg.Config)
	var one *generate.Reservation // what one slot reserves, for the error
	if g.Cache.Form == generate.SharedBuffer {
		rf, err := g.Cache.MostRows(ctx, g.Model, generate.BatchConfig{Context: cfg.Context, Chunk: cfg.PrefillChunk}, opts, fit.AvailableBytes, MaxFitSlots)
		if err != nil {
			return 0, err
		}
		fit.Slots = int(rf.Rows)
		if rf.At != nil {
			fit.ReservedBytes, _ = rf.At.Bytes(1) // it fits: no overflow
		}
		if rf.Next != nil {
			fit.NextBytes = bytesOrMax(rf.Next, 1)
		}
		one = rf.Next
	} else {
		fit.Sessions = true
		ro, err := GenerateOptions(g.Model, g.Cache, g.Generate, cfg.Config)
		if err != nil {
			return 0, err
		}
		ro.Options = opts
		r, err := generate.Reserve(ctx, g.Model, ro)
		if err != nil {
			return 0, err
		}
		// Sessions share the weights; each adds its arena and state (the arena at least
		// alloc.ReservedSize(1), so more than 0).
		if all, ok := r.Bytes(1); ok && all <= fit.AvailableBytes {
			per := all - r.DeviceWeightBytes
			fit.Slots = int(min((fit.AvailableBytes-r.DeviceWeightBytes)/per, MaxFitSlots))
		}
		fit.ReservedBytes, _ = r.Bytes(int64(fit.Slots)) // it fits (0 slots: the weights)
		if fit.Slots < MaxFitSlots {
			fit.NextBytes = bytesOrMax(r, int64(fit.Slots)+1)
		}
		one = r
	}
	if fit.Slots == 0 {
		return 0, &SlotFitError{Context: cfg.Context, Needed: bytesOrMax(one, 1), Weights: one.DeviceWeightBytes, Arena: one.ArenaBytes, State: one.StateBytes,
			Available: fit.AvailableBytes, LimitBytes: cfg.Limit}
	}
	return fit.Slots, nil
}

// bytesOrMax is r.Bytes(sessions), or math.MaxInt64 where that overflows: more than any device.
func bytesOrMax(r *generate.Reservation, sessions int64) int64 {
	if n, ok := r.Bytes(sessions); ok {
		return n
	}
	return math.MaxInt64
}

// PromptError is a token of GenerateConfig.Prompt outside the model's vocabulary [0, Vocab):
// a problem with the prompt given, not with how the runner was asked to run.
type PromptError struct {
	Token, Row, Position, Vocab int64
}

func (e *PromptError) Error() string {
	return fmt.Sprintf("prompt token %d (row %d, position %d) is outside the vocabulary [0, %d)", e.Token, e.Row, e.Position, e.Vocab)
}

// GenerateOptions are the runtime options `runner generate` loads m with for the generation
// gc: the cache's envelope and state buffers, with the values they hold external to the arena,
// for cfg.Sessions sessions (0: one). The estimator plans with the same options, so that both
// agree to the byte.
func GenerateOptions(m *graph.Model, c *generate.Cache, gc generate.Config, cfg Config) (engine.RuntimeOptions, error) {
	cfg.Sessions = max(cfg.Sessions, 1)
	return c.RuntimeOptions(m, gc, runtimeOptions(nil, cfg))
}

// BatchOptions are the runtime options `runner serve` loads m with for continuous batching
// with bc (generate.Cache.BatchRuntimeOptions): one session, its cache of bc.Rows slot rows and
// the prefill row.
func BatchOptions(m *graph.Model, c *generate.Cache, bc generate.BatchConfig, cfg Config) (engine.RuntimeOptions, error) {
	cfg.Sessions = 1
	return c.BatchRuntimeOptions(m, bc, runtimeOptions(nil, cfg))
}

// RandomPrompt is n token ids uniform in [0, vocab), the same for the same seed.
func RandomPrompt(n, vocab int64, seed uint64) []int64 {
	rng := rand.New(rand.NewPCG(seed, 0x70726f6d7074)) // "prompt"
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = rng.Int64N(vocab)
	}
	return ids
}

// Close releases the session, the runtime, the allocator, the device and the model.
func (g *Generation) Close() error {
	var errs []error
	if g.Replica != nil {
		errs = append(errs, g.Replica.close(g.Config.Observe))
		g.Replica, g.Session, g.Gen, g.Sessions, g.Gens, g.Batch = nil, nil, nil, nil, nil, nil
	}
	if g.Model != nil {
		errs = append(errs, g.Model.Close())
		g.Model = nil
	}
	return errors.Join(errs...)
}

// sampler makes a fresh sampler, so that every generation samples the same tokens.
func (g *Generation) sampler() generate.Sampler {
	if g.Config.TopK > 0 || g.Config.Temperature > 0 {
		return generate.NewTopK(g.Config.TopK, g.Config.Temperature, g.Config.Seed)
	}
	return generate.Greedy{}
}

// GenResult is a timed generation's figures. Durations are in milliseconds.
type GenResult struct {
	Tokens []int64 `json:"-"` // the new tokens, [Batch, New]
	Batch  int64   `json:"batch"`
	Prompt int64   `json:"prompt_len"`
	New    int     `json:"new_tokens"`
	// WarmupMs is the untimed generation that planned and compiled every bucket the timed one uses.
	WarmupMs     float64 `json:"warmup_ms"`
	FirstTokenMs float64 `json:"time_to_first_token_ms"` // the prompt's run and its token
	// DecodeMs is the New-1 decode steps' time; PerToken their percentiles (one step makes a
	// token for every sequence of the batch).
	DecodeMs float64 `json:"decode_ms"`
	PerToken Latency `json:"ms_per_token"`
	// TokensPerSec is Batch x (New-1) decode tokens over DecodeMs; TotalTokensPerSec is
	// Batch x New over the whole generation (first token included).
	TokensPerSec      float64     `json:"tokens_per_second"`
	TotalTokensPerSec float64     `json:"total_tokens_per_second"`
	Timed             GenCounters `json:"timed"`
}

// GenCounters are the counters' increase over the timed generation.
type GenCounters struct {
	Plans           int64 `json:"plans"`            // shape patterns planned (engine pattern misses)
	Compiles        int64 `json:"program_compiles"` // programs bound to the session (engine program misses)
	GraphCaptures   int64 `json:"graph_captures"`
	DeviceMallocs   int64 `json:"device_mallocs"`
	AllocatorAllocs int64 `json:"allocator_allocs"`
	// GoAllocsPerToken is the Go heap allocations (runtime.MemStats.Mallocs) from the first
	// token to the last, over the decode steps: what each step allocates.
	GoAllocsPerToken float64 `json:"go_allocs_per_token"`
	DecodeSteps      int     `json:"decode_steps"`
}

// Run generates twice from the prompt: once untimed, which plans and compiles every bucket the
// generation meets, then timed, counting what the engine planned, compiled and allocated.
func (g *Generation) Run(ctx context.Context) (*GenResult, error) {
	cfg := g.Config
	t0 := time.Now()
	if _, _, err := g.Gen.Generate(ctx, g.Prompt, cfg.PromptLen, cfg.MaxNew, g.sampler(), nil); err != nil {
		return nil, err
	}
	res := &GenResult{Batch: cfg.Batch, Prompt: cfg.PromptLen, New: cfg.MaxNew, WarmupMs: ms(time.Since(t0))}

	var ms0, ms1 runtime.MemStats
	last := cfg.MaxNew - 1
	each := func(st generate.Step) error {
		// Read after the step's clock stopped and before the next one's starts.
		switch st.Index {
		case 0:
			runtime.ReadMemStats(&ms0)
		case last:
			runtime.ReadMemStats(&ms1)
		}
		return ctx.Err()
	}
	es0, c0 := g.Replica.Runtime.Stats(), g.counters()
	tokens, tm, err := g.Gen.Generate(ctx, g.Prompt, cfg.PromptLen, cfg.MaxNew, g.sampler(), each)
	if err != nil {
		return nil, err
	}
	es1, c1 := g.Replica.Runtime.Stats(), g.counters()
	res.Tokens = tokens
	res.FirstTokenMs = ms(tm.FirstToken)
	var decode time.Duration
	for _, d := range tm.Steps {
		decode += d
	}
	res.DecodeMs = ms(decode)
	res.PerToken = percentiles(tm.Steps)
	if decode > 0 {
		res.TokensPerSec = float64(cfg.Batch*int64(len(tm.Steps))) / decode.Seconds()
	}
	res.TotalTokensPerSec = float64(cfg.Batch*int64(cfg.MaxNew)) / (tm.FirstToken + decode).Seconds()
	d := c1.Sub(c0)
	res.Timed = GenCounters{
		Plans: es1.Patterns.Misses - es0.Patterns.Misses, Compiles: es1.Programs.Misses - es0.Programs.Misses,
		GraphCaptures: es1.GraphCaptures - es0.GraphCaptures, DeviceMallocs: d.DeviceMallocs, AllocatorAllocs: d.Allocs,
		DecodeSteps: len(tm.Steps),
	}
	if n := len(tm.Steps); n > 0 {
		res.Timed.GoAllocsPerToken = float64(ms1.Mallocs-ms0.Mallocs) / float64(n)
	}
	return res, nil
}

// counters reads the replica's allocation counters.
func (g *Generation) counters() Counters {
	calls := deviceCalls(g.Replica.Backend.Device())
	st := g.Replica.Alloc.Stats()
	return Counters{DeviceMallocs: calls.Malloc, DeviceFrees: calls.Free, Allocs: st.Allocations.Allocated, Frees: st.Allocations.Freed}
}

// Stats snapshots the allocator's, the engine's and the device's counters.
func (g *Generation) Stats() Stats { return g.Replica.stats() }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
