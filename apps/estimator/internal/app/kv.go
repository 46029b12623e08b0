package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/engine/generate"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/arch"
	"carve.dev/libs/planner"
)

// KV capacity planning is a command of its own rather than flags on fit: fit searches one dim of
// an envelope given with --dim, while generation's envelope, and the KV state reserved beside the
// arena, follow from a batch and a context through the model's cache (generate.Cache), several
// dims moving together. kv keeps fit's conventions: "?" marks what to search (--context ? or
// --batch ?, ?:MAX to bound it), --budget, doubling then bisection (engine.Largest), exit 3.

// nameFlag is the flag that overrides a name of the model's cache (generate.NameFields), as
// `runner generate` and `estimator kv` both take it.
func nameFlag(f generate.NameField) string { return f.Key + "-name" }

func kvCommand(s Streams) *cli.Command {
	var flags []cli.Flag
	for _, f := range modelFlags() {
		if f.Names()[0] != "dim" {
			flags = append(flags, f)
		}
	}
	flags = append(flags,
		&cli.StringFlag{Name: "budget", Usage: "device memory `SIZE` to fit in, e.g. 141GiB, 80GB or bytes (required to search)"},
		&cli.StringFlag{Name: "batch", Value: "1", Usage: "sequences generated together: `B`, or ? (most that fit) or ?:MAX"},
		&cli.StringFlag{Name: "context", Usage: "positions per sequence, prompt and new tokens: `N`, or ? (longest that fits) or ?:MAX (required)"},
		&cli.Int64Flag{Name: "prompt", Usage: "the longest prompt `N` the runtime admits", DefaultText: "the context less one"},
		&cli.BoolFlag{Name: "serve", Usage: "plan runner serve's continuously batched session instead: --batch slot rows of --context positions, a prefill row and its move buffer, prompts fed --prefill-chunk tokens a step (the shared-buffer form)"},
		&cli.Int64Flag{Name: "prefill-chunk", Value: generate.DefaultChunk, Usage: "with --serve: the prompt tokens `N` a step feeds, as runner serve's --prefill-chunk"},
	)
	flags = append(flags, kvConfigFlags()...)
	for _, nf := range generate.NameFields {
		flags = append(flags, &cli.StringFlag{Name: nameFlag(nf), Usage: fmt.Sprintf("the model's `NAME` for %s", nf.Default)})
	}
	return &cli.Command{
		Name:  "kv",
		Usage: "KV-cache capacity: bytes per token, and the longest context or the most sequences that fit a budget",
		UsageText: "estimator kv --model M.onnx --target h200 --context 4096 [--batch 8]\n" +
			"   estimator kv --config config.json --target h200 --budget 141GiB --batch ? --context 32768\n" +
			"   estimator kv --model M.onnx --target h200 --budget 141GiB --batch 8 --context ?\n" +
			"   estimator kv --model M.onnx --target h200 --budget 141GiB --batch ? --context 4096\n" +
			"   estimator kv --model M.onnx --target h200 --budget 141GiB --serve --batch ? --context 1024 [--prefill-chunk 64]",
		Description: "Recognises the model's KV cache as `runner generate` does and plans what it reserves for --batch\n" +
			"sequences of --context positions: the weights on the device, one arena planned for the prompt and\n" +
			"decode shapes (the cache held outside it), and the cache's state buffers: the same bytes the runner\n" +
			"reserves. With --context ? it finds the longest context that fits --budget at the batch; with --batch ?\n" +
			"the most sequences at the context (doubling, then bisection). Exits 3 if even the smallest does not fit.\n" +
			"With --config it builds, without weights, the decode graph onnxruntime GenAI writes for that config\n" +
			"(GroupQueryAttention, past and present one buffer of the context) and plans it as that export.\n" +
			"With --serve it plans `runner serve`'s continuously batched session instead: --batch slot rows and a\n" +
			"prefill row of KV state with its move buffer, the envelope of every decode batch and prefill chunk;\n" +
			"--serve --batch ? is the most slots that fit (runner serve takes at most 256 without --slots: --batch ?:256\n" +
			"answers what it takes when given the device's free memory as --budget).",
		Flags:  flags,
		Action: func(c *cli.Context) error { return runKV(c, s) },
	}
}

// kvResult is the JSON form of kv; README.md documents it.
type kvResult struct {
	Model   modelInfo `json:"model"`
	Backend string    `json:"backend"`
	Workers int       `json:"workers"`
	Cache   kvCache   `json:"cache"`
	// Graph says how a --config graph was built; absent for an ONNX model.
	Graph *kvGraph `json:"graph,omitempty"`
	// Serve is runner serve's batched session (--serve), where the batch is the slot rows;
	// absent for the per-session form.
	Serve         *kvServe `json:"serve,omitempty"`
	BytesPerToken int64    `json:"kv_bytes_per_token"` // one position of one sequence, every layer's keys and values
	// Search is what was searched: "context", "batch", or "" for a plan at the given point.
	Search      string `json:"search"`
	SearchLo    int64  `json:"search_lo,omitempty"`
	SearchHi    int64  `json:"search_hi,omitempty"`
	BudgetBytes *int64 `json:"budget_bytes"`
	// BudgetFrom is "target" when the budget is the target's memory (fit --config without
	// --budget); absent when given.
	BudgetFrom string `json:"budget_from,omitempty"`
	Fits       *bool  `json:"fits"` // nil without a budget
	// Largest is the longest context or the most sequences that fit; nil when even the smallest
	// does not, or when nothing was searched.
	Largest *int64 `json:"largest"`
	// LimitedBy says what stops the search at Largest: "budget", "model", "overflow" or "search_max".
	LimitedBy string   `json:"limited_by,omitempty"`
	At        *kvProbe `json:"at"`   // the plan at the answer (or at the given point)
	Next      *kvProbe `json:"next"` // the plan one step beyond it
	Probes    int      `json:"probes"`
	// Serving is the load spread over --replicas; absent without the flag.
	Serving *kvServing `json:"serving,omitempty"`
	// Workspaces are, at a given point (no search), every kernel's workspace bound W over the
	// envelope beside the capacity C that the largest prompt's pattern and the longest decode
	// step's pattern plan for it: what separate W, C and R save over one worst-case W.
	Workspaces []kvWorkspace `json:"workspaces,omitempty"`
}

// kvServing is a load served by identical replicas of the model (--replicas), each a
// tensor-parallel group of ranks_per_replica GPUs (--tp) holding its share of the sequences.
type kvServing struct {
	Replicas        int `json:"replicas"`
	RanksPerReplica int `json:"ranks_per_replica"` // --tp; 1 without it
	GPUs            int `json:"gpus"`              // replicas x ranks_per_replica
	// Batch is the sequences of all the replicas: the batch given, or in a search of the batch
	// replicas x batch_per_replica; nil when not even one sequence fits.
	Batch *int64 `json:"batch"`
	// BatchPerReplica is what each replica holds, and what was planned: ceil(batch / replicas)
	// of a batch given, the most that fit one replica in a search of the batch.
	BatchPerReplica *int64 `json:"batch_per_replica"`
}

// kvServe is the batched session of `runner serve` that kv --serve plans: the batch's slot rows,
// a prefill row, and per layer a move buffer of one row, with prompts fed PrefillChunk tokens a
// step (generate.BatchConfig).
type kvServe struct {
	PrefillChunk int64 `json:"prefill_chunk"` // at most the context
}

// maxReplicas bounds --replicas.
const maxReplicas = 1 << 16

// parseReplicas reads --replicas for the batch: 1 without it. A batch given must give each
// replica at least one sequence.
func parseReplicas(c *cli.Context, batch kvAxis) (int, error) {
	n := c.Int("replicas")
	switch {
	case !c.IsSet("replicas"):
		return 1, nil
	case !c.IsSet("config"):
		return 0, usagef("--replicas applies to --config only")
	case n < 1:
		return 0, usagef("--replicas %d: want 1 or more replicas of the model", n)
	case n > maxReplicas:
		return 0, usagef("--replicas %d: want at most %d replicas", n, maxReplicas)
	case !batch.open && int64(n) > batch.value:
		return 0, usagef("--replicas %d: more replicas than the batch's %d sequences (each replica holds at least one): give fewer replicas or a larger batch", n, batch.value)
	}
	return n, nil
}

// ceilDiv is a/b rounded up, for a >= 0 and b > 0.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// kvGraph is how kv --config built its graph: GenAI's form, q, k and v packed or separate, and
// the rows of its rotary caches (the longest context it admits).
type kvGraph struct {
	Form            string `json:"form"` // "genai"
	QKV             string `json:"qkv"`  // "packed" or "separate"
	RotaryPositions int64  `json:"rotary_positions"`
	Int4Block       int64  `json:"int4_block,omitempty"` // --dtype int4: MatMulNBits' block size
}

// describe says what the graph is, for people.
func (g *kvGraph) describe() string {
	d := fmt.Sprintf("onnxruntime GenAI's decode graph, built from the config: GroupQueryAttention, %s q|k|v, rotary caches of %d positions", g.QKV, g.RotaryPositions)
	if g.Int4Block != 0 {
		d += fmt.Sprintf(", int4 weights (MatMulNBits, blocks of %d)", g.Int4Block)
	}
	return d
}

type kvCache struct {
	Form    string `json:"form"`
	Layers  int    `json:"layers"`
	KVHeads int64  `json:"kv_heads"`
	HeadDim int64  `json:"head_dim"`
	DType   string `json:"dtype"`
}

// kvWorkspace is one kernel's workspace under generation (generate.Workspace).
type kvWorkspace struct {
	Node         string `json:"node"`
	Op           string `json:"op"`
	BoundBytes   int64  `json:"bound_bytes"`   // W over the envelope
	PrefillBytes int64  `json:"prefill_bytes"` // C for the largest prompt's pattern
	DecodeBytes  int64  `json:"decode_bytes"`  // C for the longest decode step's pattern
}

// kvProbe is what the runner reserves for one batch and context.
type kvProbe struct {
	Batch    int64  `json:"batch"`
	Context  int64  `json:"context"`
	Prompt   int64  `json:"prompt"`
	Envelope string `json:"envelope,omitempty"`
	// KVBytesPerSequence is the cache of one sequence at the context: kv_bytes_per_token x context.
	KVBytesPerSequence int64 `json:"kv_bytes_per_sequence"`
	WeightBytes        int64 `json:"weight_bytes"`        // the model's weights
	DeviceWeightBytes  int64 `json:"device_weight_bytes"` // their device copy (0 on a host-visible target: mapped from the file)
	ArenaBytes         int64 `json:"arena_bytes"`         // the session's arena as reserved
	StateBytes         int64 `json:"kv_state_bytes"`      // the cache's state buffers as reserved (the concat form keeps past and present)
	// CommBytes is the tensor-parallel communicator's buffers (--tp), a declared constant.
	CommBytes int64 `json:"comm_bytes,omitempty"`
	// TotalBytes is device weights + arena + KV state (+ the communicator's buffers under --tp):
	// what the runner reserves and checks.
	TotalBytes  int64  `json:"total_bytes"`
	MarginBytes *int64 `json:"margin_bytes"` // budget - total; nil without a budget
	Fits        bool   `json:"fits"`
	Problem     string `json:"problem,omitempty"` // why it was not planned
	limit       string
	plan        *engine.EnvelopePlan // the envelope planned, for the workspace table (nil in a search)
}

// kvAxis is --batch or --context: a value, or "?" with an optional maximum.
type kvAxis struct {
	value int64
	open  bool
	max   int64 // 0: none
}

func parseKVAxis(flag, s string) (kvAxis, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "?"); ok {
		a := kvAxis{open: true}
		if rest == "" {
			return a, nil
		}
		m, err := strconv.ParseInt(strings.TrimPrefix(rest, ":"), 10, 64)
		if !strings.HasPrefix(rest, ":") || err != nil || m < 1 || m > engine.MaxDimValue {
			return a, usagef("--%s %s: want N, ? or ?:MAX with MAX from 1 to %d (the largest dim carve admits)", flag, s, engine.MaxDimValue)
		}
		a.max = m
		return a, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || v > engine.MaxDimValue {
		return kvAxis{}, usagef("--%s %q: want a whole number from 1 to %d (the largest dim carve admits), ? or ?:MAX", flag, s, engine.MaxDimValue)
	}
	return kvAxis{value: v}, nil
}

// kvPlanner plans the runner's reservation for generation at a batch and a context.
type kvPlanner struct {
	ctx    context.Context
	m      *graph.Model
	cache  *generate.Cache
	opts   engine.Options
	prompt int64 // 0: the context less one
	budget int64 // -1: none
	comm   int64 // the communicator's buffers (--tp)
	// maxContext is the longest context the model admits (the rotary caches' rows of a graph
	// built from a config); 0: no limit known.
	maxContext int64
	// serve plans runner serve's batched session (generate.BatchConfig) with prompts fed chunk
	// tokens a step; otherwise one session of a generation (generate.Config).
	serve bool
	chunk int64
}

// plan returns what the runner reserves for batch sequences of context positions
// (generate.Reserve): the cache's envelope planned with the values it holds external (as
// engine.NewRuntime plans it), the arena as reserved, the state buffers as reserved, and the
// device weights. With serve, batch is the slot rows of runner serve's batched session, which
// admits any prompt that leaves room for a new token.
func (k *kvPlanner) plan(batch, ctxLen int64) (*kvProbe, error) {
	prompt := k.prompt
	if prompt == 0 || k.serve {
		prompt = ctxLen - 1
	}
	p := &kvProbe{Batch: batch, Context: ctxLen, Prompt: prompt}
	p.KVBytesPerSequence, _ = graph.CheckedMul(k.cache.BytesPerToken(), ctxLen)
	if k.maxContext > 0 && ctxLen > k.maxContext {
		p.limit, p.Problem = "model", fmt.Sprintf("context %d is beyond the %d positions of the rotary caches (the config's max_position_embeddings, or --positions)", ctxLen, k.maxContext)
		return p, nil
	}
	var ro engine.RuntimeOptions
	var err error
	if k.serve {
		ro, err = k.cache.BatchRuntimeOptions(k.m, generate.BatchConfig{Rows: batch, Context: ctxLen, Chunk: k.chunk}, engine.RuntimeOptions{Options: k.opts})
	} else {
		ro, err = k.cache.RuntimeOptions(k.m, generate.Config{Batch: batch, Context: ctxLen, Prompt: prompt}, engine.RuntimeOptions{Options: k.opts})
	}
	var ce *generate.ConfigError
	if errors.As(err, &ce) {
		p.limit, p.Problem = "overflow", ce.Problem
		return p, nil
	}
	if err != nil {
		return nil, err
	}
	res, err := generate.Reserve(k.ctx, k.m, ro) // the held values External, as the runtime plans them
	var oe *graph.OverflowError
	var be *graph.BindError
	var pe *engine.PlanError
	var pre *planner.ProblemError
	switch {
	case errors.As(err, &oe):
		p.limit, p.Problem = "overflow", "sizes overflow int64"
		return p, nil
	case errors.As(err, &pre):
		p.limit, p.Problem = "overflow", fmt.Sprintf("the buffers are too large to plan (more than %d bytes)", planner.MaxTotalBytes)
		return p, nil
	case errors.As(err, &be) && errors.As(err, &pe):
		p.limit, p.Problem = "model", planProblem(pe)
		return p, nil
	case err != nil:
		return nil, err
	}
	ep := res.Plan
	p.plan = ep
	p.Envelope, p.WeightBytes, p.DeviceWeightBytes = ep.Envelope.String(), ep.WeightBytes, res.DeviceWeightBytes
	p.ArenaBytes, p.StateBytes = res.ArenaBytes, res.StateBytes
	total := p.DeviceWeightBytes + p.ArenaBytes
	if total < p.ArenaBytes || total+p.StateBytes < total {
		p.limit, p.Problem = "overflow", "weights, arena and state overflow int64"
		return p, nil
	}
	p.TotalBytes = total + p.StateBytes + k.comm
	p.CommBytes = k.comm
	p.limit, p.Fits = "budget", true
	if k.budget >= 0 {
		margin := k.budget - p.TotalBytes
		p.MarginBytes, p.Fits = &margin, margin >= 0
	}
	return p, nil
}

// point names batch as the plan takes it: sequences of a generation, or slots of a served batch.
func (k *kvPlanner) point(batch int64) string {
	if k.serve {
		return fmt.Sprintf("%d slot%s", batch, plural(int(min(batch, 2))))
	}
	return fmt.Sprintf("batch %d", batch)
}

func runKV(c *cli.Context, s Streams) error {
	if err := noArgs(c); err != nil {
		return err
	}
	form, err := format(c)
	if err != nil {
		return err
	}
	budget, hasBudget, err := budget(c)
	if err != nil {
		return err
	}
	if !hasBudget {
		budget = -1
	}
	if c.String("model") == "" && !c.IsSet("config") {
		return usagef("estimator kv needs --model: the .onnx file of a decoder with a KV cache (the bundled model has none)")
	}
	if !c.IsSet("context") {
		return usagef("estimator kv needs --context: N positions per sequence, or ? to find the longest that fits --budget")
	}
	batch, err := parseKVAxis("batch", c.String("batch"))
	if err != nil {
		return err
	}
	ctxAxis, err := parseKVAxis("context", c.String("context"))
	if err != nil {
		return err
	}
	switch {
	case batch.open && ctxAxis.open:
		return usagef("--batch ? and --context ?: search one at a time (give the other a value)")
	case (batch.open || ctxAxis.open) && !hasBudget:
		return usagef("a search (? in --batch or --context) needs --budget, e.g. --budget 141GiB")
	}
	prompt := c.Int64("prompt")
	if c.IsSet("prompt") && (prompt < 1 || prompt > engine.MaxDimValue) {
		return usagef("--prompt %d: want 1 to %d positions (the largest dim carve admits)", prompt, engine.MaxDimValue)
	}
	serve, chunk := c.Bool("serve"), c.Int64("prefill-chunk")
	switch {
	case serve && c.IsSet("prompt"):
		return usagef("--prompt does not apply to --serve: runner serve admits any prompt that leaves room for a new token, fed --prefill-chunk tokens a step")
	case !serve && c.IsSet("prefill-chunk"):
		return usagef("--prefill-chunk applies to --serve only")
	case chunk < 1 || chunk > engine.MaxDimValue:
		return usagef("--prefill-chunk %d: want 1 to %d tokens (the largest dim carve admits)", chunk, engine.MaxDimValue)
	}
	if !ctxAxis.open && (ctxAxis.value < 2 || prompt >= ctxAxis.value) {
		return usagef("--context %d: want at least 2 positions and more than --prompt (a prompt and a new token)", ctxAxis.value)
	}
	var names generate.Names
	for _, nf := range generate.NameFields {
		if !c.IsSet(nameFlag(nf)) {
			continue
		}
		v := c.String(nameFlag(nf))
		if !nf.Valid(v) {
			if nf.PerLayer() {
				return usagef("--%s %q: want a name with one %%d for the layer and no other %%, e.g. %s", nameFlag(nf), v, nf.Default)
			}
			return usagef("--%s %q: want a name (without %%)", nameFlag(nf), v)
		}
		*nf.Field(&names) = v
	}
	replicas, err := parseReplicas(c, batch)
	if err != nil {
		return err
	}
	ask := kvAsk{form: form, budget: budget, hasBudget: hasBudget, batch: batch, context: ctxAxis, prompt: prompt, names: names, replicas: replicas}
	if serve {
		ask.serveChunk = chunk
	}
	return kvPlan(c, s, ask)
}

// kvAsk is what kv (or fit --config) asks: the batch and the context, one of them open with a
// budget, the longest prompt and the cache's names.
type kvAsk struct {
	form           string
	budget         int64 // -1: none
	hasBudget      bool
	budgetFrom     string // "target" when the budget is the target's memory
	batch, context kvAxis
	prompt         int64
	names          generate.Names
	// replicas serve the batch, each ceil(batch/replicas) sequences (--replicas); 0 or 1: one.
	replicas int
	// serveChunk > 0 plans runner serve's batched session with prompts fed that many tokens a
	// step (--serve, --prefill-chunk); 0 plans one session of a generation.
	serveChunk int64
}

// kvPlan loads the model (or builds it from --config) and answers ask.
func kvPlan(c *cli.Context, s Streams, ask kvAsk) error {
	form, budget, hasBudget, batch, ctxAxis, prompt, names := ask.form, ask.budget, ask.hasBudget, ask.batch, ask.context, ask.prompt, ask.names
	replicas, load := int64(max(ask.replicas, 1)), batch.value
	if !batch.open {
		batch.value = ceilDiv(load, replicas) // what one replica holds
	}
	opts, err := options(c)
	if err != nil {
		return err
	}
	if !c.IsSet("config") {
		for _, f := range []string{"qkv", "positions", "replicas"} {
			if c.IsSet(f) {
				return usagef("--%s applies to --config only: an ONNX model's graph is its own", f)
			}
		}
	}
	var m *model
	var built *kvGraph
	if c.IsSet("config") {
		m, built, err = loadConfigKV(c)
	} else {
		m, err = loadModel(c)
	}
	if err != nil {
		return err
	}
	defer m.close()
	tied, cache, err := generate.Prepare(m.Model, names)
	var rce *generate.RecognitionError
	if errors.As(err, &rce) {
		var flags []string
		for _, nf := range generate.NameFields {
			flags = append(flags, "--"+nameFlag(nf))
		}
		return fmt.Errorf("--model %s has no recognisable KV cache: %s; if the model names its cache differently, give the names with %s "+
			"(per-layer names with %%d for the layer)", m.name, rce.Problem, strings.Join(flags, ", "))
	}
	if err != nil {
		return err
	}
	if ask.serveChunk > 0 && cache.Form != generate.SharedBuffer {
		return fmt.Errorf("--serve plans runner serve's batched session, which needs the shared-buffer (GenAI) form; %s's cache is the %s form, "+
			"which runner serve runs as a session per slot: each reserves what --batch 1 plans, beside one copy of the weights", m.name, cache.Form)
	}
	k := &kvPlanner{ctx: c.Context, m: tied, cache: cache, opts: opts, prompt: prompt, budget: budget, serve: ask.serveChunk > 0, chunk: ask.serveChunk}
	if built != nil {
		k.maxContext = built.RotaryPositions
	}
	k.comm = m.commReserve()
	r := &kvResult{Model: m.info(), Backend: opts.Target.Backend, Workers: opts.Target.Workers,
		Cache:         kvCache{Form: cache.Form.String(), Layers: len(cache.Layers), KVHeads: cache.KVHeads, HeadDim: cache.HeadDim, DType: cache.DType.String()},
		BytesPerToken: cache.BytesPerToken(), Graph: built, BudgetFrom: ask.budgetFrom}
	if hasBudget {
		r.BudgetBytes = &budget
	}
	if k.serve {
		chunk := k.chunk
		if !ctxAxis.open {
			chunk = min(chunk, ctxAxis.value) // as generate.BatchConfig takes it
		}
		r.Serve = &kvServe{PrefillChunk: chunk}
	}
	if c.IsSet("replicas") {
		ranks := 1
		if m.tp != nil {
			ranks = m.tp.Ranks
		}
		r.Serving = &kvServing{Replicas: int(replicas), RanksPerReplica: ranks, GPUs: int(replicas) * ranks}
		if !batch.open {
			r.Serving.Batch, r.Serving.BatchPerReplica = &load, &batch.value
		}
	}

	if !batch.open && !ctxAxis.open {
		p, err := k.plan(batch.value, ctxAxis.value)
		if err != nil {
			return err
		}
		if p.limit != "budget" {
			return fmt.Errorf("%s at context %d cannot be planned: %s", k.point(batch.value), ctxAxis.value, p.Problem)
		}
		r.At, r.Probes = p, 1
		if hasBudget {
			r.Fits = &p.Fits
		}
		if !k.serve { // generate.Workspaces plans a generation's extreme patterns, not a batch's
			ws, err := cache.Workspaces(c.Context, tied, generate.Config{Batch: p.Batch, Context: p.Context, Prompt: p.Prompt}, p.plan)
			if err != nil {
				return err
			}
			for _, w := range ws {
				r.Workspaces = append(r.Workspaces, kvWorkspace{Node: w.Node, Op: w.Op, BoundBytes: w.Bound, PrefillBytes: w.Prefill, DecodeBytes: w.Decode})
			}
		}
		if err := writeKV(s.Stdout, form, r); err != nil {
			return err
		}
		if hasBudget && !p.Fits {
			return &fitError{fmt.Sprintf("does not fit: %s at context %d needs %s but the budget is %s",
				k.point(p.Batch), p.Context, bytesize.Format(p.TotalBytes), bytesize.Format(budget))}
		}
		return nil
	}

	// The search: over the context at the batch, or over the batch at the context.
	r.Search = "context"
	lo, hi := max(prompt+1, 2), ctxAxis.max
	at := func(v int64) (int64, int64) { return batch.value, v }
	if batch.open {
		r.Search = "batch"
		lo, hi = 1, batch.max
		at = func(v int64) (int64, int64) { return v, ctxAxis.value }
	}
	if hi == 0 {
		hi = engine.MaxDimValue
	}
	if hi < lo {
		return usagef("--%s ?:%d: the search starts at %d", r.Search, hi, lo)
	}
	r.SearchLo, r.SearchHi = lo, hi
	probes := map[int64]*kvProbe{}
	probe := func(v int64) (*kvProbe, error) {
		if p, ok := probes[v]; ok {
			return p, nil
		}
		p, err := k.plan(at(v))
		if err != nil {
			return nil, err
		}
		if p.limit != "budget" && v == lo {
			b, n := at(v)
			return nil, fmt.Errorf("%s at context %d cannot be planned: %s", k.point(b), n, p.Problem)
		}
		p.plan = nil // a search keeps its probes' figures, not their plans
		probes[v] = p
		return p, nil
	}
	bar := newProgress(s, r.Search)
	v, found, err := engine.Largest(c.Context, lo, hi, func(v int64) (bool, error) {
		p, err := probe(v)
		if err != nil {
			return false, err
		}
		return p.Fits, nil
	}, bar.update)
	bar.done()
	if err != nil {
		return err
	}
	r.Fits = &found
	switch {
	case !found:
		r.Next, r.LimitedBy = probes[lo], "budget"
	case v == hi:
		r.Largest, r.At, r.LimitedBy = &v, probes[v], "search_max"
	default:
		next, err := probe(v + 1)
		if err != nil {
			return err
		}
		r.Largest, r.At, r.Next, r.LimitedBy = &v, probes[v], next, next.limit
	}
	r.Probes = len(probes)
	if r.Serving != nil && batch.open && found {
		total := replicas * v
		r.Serving.Batch, r.Serving.BatchPerReplica = &total, &v
	}
	if err := writeKV(s.Stdout, form, r); err != nil {
		return err
	}
	if !found {
		p := r.Next
		b, n := at(lo)
		return &fitError{fmt.Sprintf("does not fit: even %s at context %d needs %s but the budget is %s",
			k.point(b), n, bytesize.Format(p.TotalBytes), bytesize.Format(budget))}
	}
	return nil
}

func writeKV(w io.Writer, form string, r *kvResult) error {
	if form == "json" {
		return writeJSON(w, r)
	}
	tw := newTable(w)
	tw.row("model\t%s\n", describeInfo(r.Model))
	tw.row("backend\t%s, %d workers\n", r.Backend, r.Workers)
	ci := r.Cache
	if g := r.Graph; g != nil {
		tw.row("graph\t%s\n", g.describe())
	}
	tw.row("cache\t%s form, %d layers x %d KV heads x %d, %s\n", ci.Form, ci.Layers, ci.KVHeads, ci.HeadDim, ci.DType)
	if r.Serve != nil {
		tw.row("serve\trunner serve's batched session: slot rows, a prefill row and its move buffer; prompts fed %d tokens a step\n", r.Serve.PrefillChunk)
	}
	perRank := ""
	if c := r.Model.Config; c != nil && c.TP != nil {
		perRank = fmt.Sprintf(" on each rank (%d of the %d KV heads, %s)", c.TP.KVHeads, c.KVHeads, replicas(c.TP.KVReplicas))
	}
	tw.row("KV per token\t%s per sequence (every layer's keys and values)%s\n", size(r.BytesPerToken), perRank)
	if c := r.Model.Config; c != nil && c.TP != nil {
		commRow(tw, c.TP)
	}
	if r.BudgetBytes != nil {
		from := ""
		if r.BudgetFrom == "target" {
			from = "\tthe target's memory (--budget sets another)"
		}
		tw.row("budget\t%s%s\n", size(*r.BudgetBytes), from)
	}
	if sv := r.Serving; sv != nil {
		tw.row("replicas\t%s\n", servingLine(sv, r.Search == "batch"))
	}
	switch {
	case r.Search == "":
	case r.Largest != nil && r.Search == "context":
		tw.row("longest context\t%d at batch %d\t%s\n", *r.Largest, r.At.Batch, kvLimitedBy(r))
	case r.Largest != nil && r.Serve != nil:
		tw.row("most slots\t%d at context %d\t%s\n", *r.Largest, r.At.Context, kvLimitedBy(r))
	case r.Largest != nil:
		tw.row("most sequences\tbatch %d at context %d\t%s\n", *r.Largest, r.At.Context, kvLimitedBy(r))
	default:
		tw.row("largest\tnone\teven %s %d does not fit\n", r.Search, r.SearchLo)
	}
	for _, p := range []*kvProbe{r.At, r.Next} {
		if p == nil {
			continue
		}
		head := fmt.Sprintf("  batch %d, context %d", p.Batch, p.Context)
		if r.Serve != nil {
			head = fmt.Sprintf("  %d slots, context %d", p.Batch, p.Context)
		}
		if p.Problem != "" {
			tw.row("%s\tnot planned: %s\n", head, p.Problem)
			continue
		}
		weights := "device weights " + bytesize.Format(p.DeviceWeightBytes)
		if p.DeviceWeightBytes == 0 {
			weights = fmt.Sprintf("device weights 0 B (%s mapped from the file)", bytesize.Format(p.WeightBytes))
		}
		verdict := ""
		if p.MarginBytes != nil {
			verdict = fmt.Sprintf(": fits, %s to spare", bytesize.Format(*p.MarginBytes))
			if !p.Fits {
				verdict = fmt.Sprintf(": does not fit, %s over", bytesize.Format(-*p.MarginBytes))
			}
		}
		comm := ""
		if p.CommBytes > 0 {
			comm = " + all-reduce " + bytesize.Format(p.CommBytes)
		}
		tw.row("%s\ttotal %s = %s + arena %s + KV state %s%s%s\n", head, size(p.TotalBytes), weights,
			bytesize.Format(p.ArenaBytes), bytesize.Format(p.StateBytes), comm, verdict)
		tw.row("\tKV %s per sequence, prompts up to %d, envelope %s\n", bytesize.Format(p.KVBytesPerSequence), p.Prompt, p.Envelope)
	}
	if r.Search != "" {
		tw.row("probes\t%d plan%s\n", r.Probes, plural(r.Probes))
	}
	if err := tw.flush(); err != nil {
		return err
	}
	return writeKVWorkspaces(w, r)
}

// kvWorkspaceRows is how many kernels the table lists; JSON lists all.
const kvWorkspaceRows = 8

// writeKVWorkspaces prints the largest workspaces: W over the envelope, and C for the prompt's
// and the decode step's patterns, with the sums.
func writeKVWorkspaces(w io.Writer, r *kvResult) error {
	if len(r.Workspaces) == 0 || r.At == nil {
		return nil
	}
	var sw, sp, sd int64
	for _, k := range r.Workspaces {
		sw, sp, sd = sw+k.BoundBytes, sp+k.PrefillBytes, sd+k.DecodeBytes
	}
	fmt.Fprintf(w, "\nworkspaces (%d kernels): W over the envelope, C planned for the largest prompt (seq %d) and for the longest decode step\n",
		len(r.Workspaces), generate.Bucket(r.At.Prompt, r.At.Context))
	tw := newTable(w)
	tw.row("NODE\tOP\tW\tC PROMPT\tC DECODE\n")
	for i, k := range r.Workspaces {
		if i == kvWorkspaceRows {
			tw.row("... %d more\t\t\t\t(--format json lists all)\n", len(r.Workspaces)-i)
			break
		}
		tw.row("%s\t%s\t%s\t%s\t%s\n", k.Node, k.Op, bytesize.Format(k.BoundBytes), bytesize.Format(k.PrefillBytes), bytesize.Format(k.DecodeBytes))
	}
	tw.row("sum\t\t%s\t%s\t%s\n", bytesize.Format(sw), bytesize.Format(sp), bytesize.Format(sd))
	return tw.flush()
}

// servingLine says how the load is spread over the replicas.
func servingLine(sv *kvServing, searched bool) string {
	gpus := fmt.Sprintf("%d x %d rank%s = %d GPU%s", sv.Replicas, sv.RanksPerReplica, plural(sv.RanksPerReplica), sv.GPUs, plural(sv.GPUs))
	switch {
	case sv.Batch == nil:
		return fmt.Sprintf("%d, %s: not one sequence fits a replica", sv.Replicas, gpus)
	case searched:
		return fmt.Sprintf("%d, %s: %d sequences in all, the %d of one replica on each", sv.Replicas, gpus, *sv.Batch, *sv.BatchPerReplica)
	}
	return fmt.Sprintf("%d, %s: %d sequences, ceil(%d/%d) = %d on each replica (planned)", sv.Replicas, gpus, *sv.Batch, *sv.Batch, sv.Replicas, *sv.BatchPerReplica)
}

func kvLimitedBy(r *kvResult) string {
	switch r.LimitedBy {
	case "budget":
		return "limited by the budget"
	case "model":
		return fmt.Sprintf("limited by the model: %s %d is not admitted", r.Search, *r.Largest+1)
	case "overflow":
		return fmt.Sprintf("limited by size: at %s %d %s", r.Search, *r.Largest+1, r.Next.Problem)
	}
	return fmt.Sprintf("the whole search range fits (raise the maximum with --%s ?:MAX)", r.Search)
}

// kvConfigFlags are kv's flags for a graph built from --config.
func kvConfigFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "qkv", Value: "packed", Usage: "with --config: the q, k and v products as GenAI's builder writes them, `FORM` packed (one q|k|v product, for its CUDA and CPU providers) or separate (three, for DirectML)"},
		&cli.Int64Flag{Name: "positions", Usage: "with --config: the rotary caches' `ROWS`, GenAI's context_length and the longest context the graph admits", DefaultText: "the config's max_position_embeddings"},
		&cli.IntFlag{Name: "replicas", Value: 1, Usage: "with --config: the batch is served by `R` identical replicas of the model (each --tp ranks), each holding ceil(batch/R) sequences, which is what is planned; the GPUs are R x tp. A search of the batch answers R x the most of one replica (?:MAX bounds one replica's)"},
	}
}

// loadConfigKV builds the decode graph of --config in onnxruntime GenAI's form (arch.BuildKV) for
// the target's kernels, one rank of --tp.
func loadConfigKV(c *cli.Context) (*model, *kvGraph, error) {
	n, err := configRanks(c)
	if err != nil {
		return nil, nil, err
	}
	src, err := readConfigKV(c)
	if err != nil {
		return nil, nil, err
	}
	if err := src.split(n); err != nil {
		return nil, nil, err
	}
	return buildConfigKV(c, src)
}

// readConfigKV checks kv's --config flags and reads --config.
func readConfigKV(c *cli.Context) (*configSource, error) {
	for _, f := range []string{"last-logits", "ignore-window"} {
		if c.IsSet(f) {
			return nil, usagef("--%s does not apply to kv and fit with --config (report's): GenAI's decode graph computes every position's logits, and its GroupQueryAttention has the window", f)
		}
	}
	if qkv := c.String("qkv"); qkv != "packed" && qkv != "separate" {
		return nil, usagef("--qkv %q: want packed or separate", qkv)
	}
	if positions := c.Int64("positions"); c.IsSet("positions") && (positions < 2 || positions > engine.MaxDimValue) {
		return nil, usagef("--positions %d: want 2 to %d rows", positions, engine.MaxDimValue)
	}
	return readConfig(c)
}

// buildConfigKV builds the decode graph of src's rank.
func buildConfigKV(c *cli.Context, src *configSource) (*model, *kvGraph, error) {
	qkv, positions := c.String("qkv"), c.Int64("positions")
	g, err := src.rank.BuildKV(arch.KVOptions{DType: src.dtype, Skip: src.skip, SeparateQKV: qkv == "separate", RotaryPositions: positions, Int4Block: src.int4})
	if err != nil {
		return nil, nil, fmt.Errorf("--config %s: %w", src.path, err)
	}
	if positions == 0 {
		positions = src.cfg.Positions
	}
	return &model{Model: g, exported: g, name: src.path, config: src.cfg, tp: src.tp}, &kvGraph{Form: "genai", QKV: qkv, RotaryPositions: positions, Int4Block: src.int4}, nil
}
