package generate

import (
	"context"
	"fmt"
	"math"
	"sort"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
)

// Config is what a runtime is reserved for: Batch sequences generated together, each of at most
// Context positions (its prompt and its new tokens), with prompts of at most Prompt positions.
// Prompt is part of the reservation: the arena is planned for prompts up to Prompt's bucket.
type Config struct {
	Batch   int64
	Context int64
	Prompt  int64 // 0 means Context - 1: any prompt that leaves room for a new token
	// Logits reads every step's logits to the host (Step.Logits). Without it a greedy
	// generation reads only the chosen ids (Cache.Greedy) and its Steps have no Logits; other
	// samplers read the logits either way.
	Logits bool
}

// ConfigError reports a Config that cannot be planned for the model.
type ConfigError struct{ Problem string }

func (e *ConfigError) Error() string { return "generate: " + e.Problem }

// MinBucket is the smallest bucket of prompt and past lengths.
const MinBucket = 16

// Bucket is the length a shape of n positions is padded to: the smallest power of two that is at
// least n and MinBucket, capped at limit. It doubles only while below both n and limit, and
// returns limit where the next power of two would not fit in int64.
func Bucket(n, limit int64) int64 {
	b := int64(MinBucket)
	for b < n && b < limit {
		if b > math.MaxInt64/2 {
			return limit
		}
		b *= 2
	}
	return min(b, limit)
}

func (c *Cache) check(cfg Config) (Config, error) {
	if cfg.Prompt == 0 {
		cfg.Prompt = cfg.Context - 1
	}
	switch {
	case cfg.Batch < 1:
		return cfg, &ConfigError{Problem: fmt.Sprintf("batch %d: want at least 1", cfg.Batch)}
	case cfg.Batch > engine.MaxDimValue:
		return cfg, &ConfigError{Problem: fmt.Sprintf("batch %d: want at most %d, the largest dim carve admits", cfg.Batch, engine.MaxDimValue)}
	case cfg.Context < 2:
		return cfg, &ConfigError{Problem: fmt.Sprintf("context %d: want at least 2 positions (a prompt and a new token)", cfg.Context)}
	case cfg.Context > engine.MaxDimValue:
		return cfg, &ConfigError{Problem: fmt.Sprintf("context %d: want at most %d positions, the largest dim carve admits", cfg.Context, engine.MaxDimValue)}
	case cfg.Prompt < 1 || cfg.Prompt >= cfg.Context:
		return cfg, &ConfigError{Problem: fmt.Sprintf("longest prompt %d: want 1 to %d, below the context %d", cfg.Prompt, cfg.Context-1, cfg.Context)}
	}
	return cfg, nil
}

// slots is the positions of the past buffer: the context, plus the concat form's masked first
// position.
func (c *Cache) slots(cfg Config) int64 {
	if c.Form == Concat {
		return cfg.Context + 1
	}
	return cfg.Context
}

// Envelope is the range of bindings generation with cfg runs: prompts up to cfg.Prompt's bucket,
// single-token decode steps, and past lengths up to the context.
func (c *Cache) Envelope(m *graph.Model, cfg Config) (engine.Envelope, error) {
	cfg, err := c.check(cfg)
	if err != nil {
		return nil, err
	}
	env := engine.Envelope{
		c.BatchDim: {Lo: cfg.Batch, Hi: cfg.Batch},
		c.SeqDim:   {Lo: 1, Hi: Bucket(cfg.Prompt, cfg.Context)},
	}
	switch c.Form {
	case Concat:
		if c.MaskDim != "" {
			return nil, &ConfigError{Problem: fmt.Sprintf("the mask's length %q is a dim of its own: tie it to the cache first (Cache.Tie)", c.MaskDim)}
		}
		env[c.PastDim] = engine.Range{Lo: 1, Hi: c.slots(cfg)}
	case SharedBuffer:
		env[c.PastDim] = engine.Range{Lo: cfg.Context, Hi: cfg.Context}
		env[c.MaskDim] = engine.Range{Lo: 1, Hi: cfg.Context}
	}
	for _, d := range m.DimNames {
		if _, ok := env[d]; !ok {
			return nil, &ConfigError{Problem: fmt.Sprintf("the model has dim %q, which generation does not set (it sets %s)", d, engine.DimList(env.Names()))}
		}
	}
	return env, nil
}

// State is the runtime's state buffers for cfg: per layer, the keys' and the values' past and
// present (one buffer in the shared-buffer form, two in the concat form).
func (c *Cache) State(cfg Config) ([]engine.StateBuffer, error) {
	cfg, err := c.check(cfg)
	if err != nil {
		return nil, err
	}
	row := c.KVHeads * c.HeadDim * c.DType.Size()
	size := func(positions int64) (int64, error) {
		n, ok := graph.CheckedMul(cfg.Batch*row, positions)
		if !ok || cfg.Batch*row/row != cfg.Batch {
			return 0, &ConfigError{Problem: fmt.Sprintf("a cache of batch %d and %d positions overflows", cfg.Batch, positions)}
		}
		return n, nil
	}
	slots := c.slots(cfg)
	past, err := size(slots)
	if err != nil {
		return nil, err
	}
	present, err := size(slots + 1)
	if err != nil {
		return nil, err
	}
	var bufs []engine.StateBuffer
	for i, l := range c.Layers {
		for _, kv := range []struct{ kind, past, present string }{{"key", l.PastKey, l.PresentKey}, {"value", l.PastValue, l.PresentValue}} {
			name := fmt.Sprintf("layer%d.%s", i, kv.kind)
			if c.Form == SharedBuffer {
				bufs = append(bufs, engine.StateBuffer{Name: name, Bytes: past, Values: []string{kv.past, kv.present}})
				continue
			}
			bufs = append(bufs,
				engine.StateBuffer{Name: name + ".past", Bytes: past, Values: []string{kv.past}},
				engine.StateBuffer{Name: name + ".present", Bytes: present, Values: []string{kv.present}})
		}
	}
	return bufs, nil
}

// StateBytes is the cache's bytes for cfg before alignment: what State's buffers add up to.
func (c *Cache) StateBytes(cfg Config) (int64, error) {
	bufs, err := c.State(cfg)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, b := range bufs {
		n += b.Bytes
	}
	return n, nil
}

// RuntimeOptions completes opts for generation with cfg: the envelope and the state buffers.
func (c *Cache) RuntimeOptions(m *graph.Model, cfg Config, opts engine.RuntimeOptions) (engine.RuntimeOptions, error) {
	env, err := c.Envelope(m, cfg)
	if err != nil {
		return opts, err
	}
	state, err := c.State(cfg)
	if err != nil {
		return opts, err
	}
	return c.withState(opts, env, state), nil
}

// withState is opts with the envelope and the state buffers of a generation, the state's
// values held by it, and the logits (and greedy ids) left on the device: the generator reads
// one row of logits per sequence (takeLogits), or one greedy id (takeGreedy), not a prompt's all.
func (c *Cache) withState(opts engine.RuntimeOptions, env engine.Envelope, state []engine.StateBuffer) engine.RuntimeOptions {
	opts.Envelope, opts.State = env, state
	opts.External = engine.HeldValues(state)
	opts.DeviceOutputs = append(opts.DeviceOutputs, c.Logits)
	if c.Greedy != "" {
		opts.DeviceOutputs = append(opts.DeviceOutputs, c.Greedy)
	}
	return opts
}

// Workspace is one kernel's workspace under generation: its bound W over the whole envelope,
// and the capacity C the largest prompt's pattern and the longest decode step's pattern plan
// for it (for an exact pattern, C is the kernel's R there).
type Workspace struct {
	Node, Op        string
	Bound           int64 // W over the envelope
	Prefill, Decode int64 // C at the largest prompt bucket, at the longest past
}

// Workspaces plans cfg's two extreme patterns, the largest prompt and the longest decode step,
// with the options of ep, the envelope plan of cfg (made with RuntimeOptions' envelope and
// options), and returns every kernel with a workspace in any of the three: first those whose
// decode step needs least of their W (where one worst-case W per kernel wastes most), then by W.
func (c *Cache) Workspaces(ctx context.Context, m *graph.Model, cfg Config, ep *engine.EnvelopePlan) ([]Workspace, error) {
	cfg, err := c.check(cfg)
	if err != nil {
		return nil, err
	}
	prefill, decode := c.extremeBindings(cfg)
	opts := ep.Worst.Options
	pp, err := engine.Plan(ctx, m, prefill, opts)
	if err != nil {
		return nil, err
	}
	dp, err := engine.Plan(ctx, m, decode, opts)
	if err != nil {
		return nil, err
	}
	var out []Workspace
	for i, n := range m.Nodes {
		w := Workspace{Node: n.Name, Op: n.OpType, Prefill: pp.Steps[i].Workspace, Decode: dp.Steps[i].Workspace}
		for _, b := range ep.Bounds {
			if b.Node == n {
				w.Bound = b.Bound.Bytes
			}
		}
		if w.Bound > 0 || w.Prefill > 0 || w.Decode > 0 {
			out = append(out, w)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		si, sj := out[i].Bound-out[i].Decode, out[j].Bound-out[j].Decode
		if si != sj {
			return si > sj
		}
		return out[i].Bound > out[j].Bound
	})
	return out, nil
}

// extremeBindings are the largest prompt's binding and the longest decode step's under cfg.
func (c *Cache) extremeBindings(cfg Config) (prefill, decode engine.Binding) {
	seq := Bucket(cfg.Prompt, cfg.Context)
	prefill = engine.Binding{c.BatchDim: cfg.Batch, c.SeqDim: seq}
	decode = engine.Binding{c.BatchDim: cfg.Batch, c.SeqDim: 1}
	switch c.Form {
	case Concat:
		prefill[c.PastDim] = 1
		decode[c.PastDim] = c.slots(cfg)
	case SharedBuffer:
		prefill[c.PastDim], prefill[c.MaskDim] = cfg.Context, seq
		decode[c.PastDim], decode[c.MaskDim] = cfg.Context, cfg.Context
	}
	return prefill, decode
}
