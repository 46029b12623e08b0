package app

import (
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"

	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/arch"
	"carve.dev/libs/planner"
)

func fitCommand(s Streams) *cli.Command {
	return &cli.Command{
		Name:  "fit",
		Usage: "the largest value of one dim for which weights plus arena fit a budget",
		UsageText: "estimator fit [--model M.onnx] --budget 80GiB --dim batch=? --dim seq=4096\n" +
			"   [--target cpu|h200|sm_XY:SMS:SHARED] [--workers N] [--format table|json]\n" +
			"   estimator fit --config config.json --target h200 --tp ? --dim batch=16 --dim seq=32768 [--replicas R]",
		Description: "Marks one dim open with NAME=? (or NAME=?:MAX to search no further than MAX) and finds the\n" +
			"largest V such that the runner's reservation for the dim ranging over 1..V, the other dims as\n" +
			"given, plus the weights, fits the budget: doubling, then bisection. Exits 3 if even 1 does not fit.\n" +
			"With --config it plans generation as kv does, from the decode graph onnxruntime GenAI writes for the\n" +
			"config: --dim seq=N is the context (positions per sequence), batch the sequences; it finds the most\n" +
			"sequences at the context (batch=?, the default) or the longest context at the batch (seq=?), within\n" +
			"--budget or the target's memory. With --tp ? and both dims given (the load), it finds the fewest\n" +
			"tensor-parallel ranks that hold the load: the powers of two 1, 2, 4, ... up to 64 (or ?:MAX), as\n" +
			"Megatron splits are, each rank planned as --tp N plans it; a degree the config does not split\n" +
			"into (heads, MLP columns, vocabulary or KV heads) is skipped with the reason. --replicas R spreads\n" +
			"the batch over R identical replicas, each planned at ceil(batch/R) sequences; the GPUs are R x tp.",
		Flags: append(append(modelFlags(),
			&cli.StringFlag{Name: "budget", Usage: "device memory `SIZE` to fit in, e.g. 80GiB, 80GB, 1.5TiB or bytes (required, but with --config on a target of known memory)"},
			&cli.Int64Flag{Name: "prompt", Usage: "with --config: the longest prompt `N` the runtime admits", DefaultText: "the context less one"},
		), kvConfigFlags()...),
		Action: func(c *cli.Context) error { return runFit(c, s) },
	}
}

// fitResult is the JSON form of fit; README.md documents it.
type fitResult struct {
	Model       modelInfo            `json:"model"`
	Dim         string               `json:"dim"`
	SearchLo    int64                `json:"search_lo"`
	SearchHi    int64                `json:"search_hi"`
	Envelope    map[string]rangeInfo `json:"envelope"`
	DefaultDims []string             `json:"default_dims"`
	Backend     string               `json:"backend"`
	Workers     int                  `json:"workers"`
	BudgetBytes int64                `json:"budget_bytes"`
	Fits        bool                 `json:"fits"`
	Largest     *int64               `json:"largest"`
	// LimitedBy says what stops the dim at Largest: "budget", "model" (the model does not admit
	// the next value), "overflow" (sizes beyond int64 or beyond what the planner places) or
	// "search_max".
	LimitedBy string    `json:"limited_by"`
	At        *fitProbe `json:"at"`
	Next      *fitProbe `json:"next"`
	Probes    int       `json:"probes"`
}

// fitProbe is the plan of the envelope with the open dim ranging over [search_lo, value].
type fitProbe struct {
	Value        int64            `json:"value"`
	Fits         bool             `json:"fits"`
	WorstBinding map[string]int64 `json:"worst_binding"`
	WeightsBytes *int64           `json:"weights_bytes"`
	ArenaBytes   *int64           `json:"arena_bytes"`
	TotalBytes   *int64           `json:"total_bytes"`
	MarginBytes  *int64           `json:"margin_bytes"`
	Problem      string           `json:"problem,omitempty"` // why it was not planned
	limit        string
}

func runFit(c *cli.Context, s Streams) error {
	if err := noArgs(c); err != nil {
		return err
	}
	form, err := format(c)
	if err != nil {
		return err
	}
	if c.IsSet("config") {
		return runFitConfig(c, s, form)
	}
	for _, f := range []string{"prompt", "qkv", "positions", "replicas"} {
		if c.IsSet(f) {
			return usagef("--%s applies to --config only", f)
		}
	}
	limit, ok, err := budget(c)
	if err != nil {
		return err
	}
	if !ok {
		return usagef("estimator fit needs --budget, e.g. --budget 80GiB")
	}
	opts, err := options(c)
	if err != nil {
		return err
	}
	m, err := loadModel(c)
	if err != nil {
		return err
	}
	defer m.close()
	env, defaulted, err := envelope(c, m)
	if err != nil {
		return err
	}
	dim, open, err := env.Open()
	if err != nil {
		return err
	}
	lo, hi := open.Lo, open.Hi
	if hi == 0 {
		hi = engine.MaxDimValue
	}
	others := maps.Clone(env)
	delete(others, dim)

	probes := map[int64]*fitProbe{}
	probe := func(v int64) (*fitProbe, error) {
		if p, ok := probes[v]; ok {
			return p, nil
		}
		e := maps.Clone(others)
		e[dim] = engine.Range{Lo: lo, Hi: v}
		p := &fitProbe{Value: v}
		ep, err := engine.PlanEnvelope(c.Context, m.Model, e, opts)
		var oe *graph.OverflowError
		var be *graph.BindError
		var pe *engine.PlanError
		var pre *planner.ProblemError
		switch {
		case errors.As(err, &oe):
			p.limit, p.Problem = "overflow", "sizes overflow int64"
		case errors.As(err, &pre):
			p.limit, p.Problem = "overflow", fmt.Sprintf("the buffers are too large to plan (more than %d bytes)", planner.MaxTotalBytes)
		case errors.As(err, &be) && errors.As(err, &pe):
			p.limit, p.Problem = "model", planProblem(pe)
		case err != nil:
			return nil, err
		case ep.TotalBytes() < 0:
			p.limit, p.Problem = "overflow", "weights plus arena overflow int64"
		default:
			weights, arena, total, margin := ep.WeightBytes, ep.ArenaBytes, ep.TotalBytes(), limit-ep.TotalBytes()
			p.WeightsBytes, p.ArenaBytes, p.TotalBytes, p.MarginBytes = &weights, &arena, &total, &margin
			p.WorstBinding = ep.Worst.Binding.Dims
			p.Fits = total <= limit
			p.limit = "budget"
		}
		if p.limit != "budget" && v == lo {
			// Not even the smallest value can be planned: that is an error, not a verdict.
			if err == nil {
				err = fmt.Errorf("at %s=%d the %s", dim, v, p.Problem)
			}
			return nil, err
		}
		probes[v] = p
		return p, nil
	}
	bar := newProgress(s, dim)
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

	r := &fitResult{
		Model: m.info(), Dim: dim, SearchLo: lo, SearchHi: hi, Envelope: envelopeInfo(others),
		DefaultDims: append([]string{}, defaulted...), Backend: opts.Target.Backend, Workers: opts.Target.Workers,
		BudgetBytes: limit, Fits: found, Probes: len(probes),
	}
	switch {
	case !found:
		r.Next, r.LimitedBy = probes[lo], "budget"
	case v == hi:
		r.Largest, r.At, r.LimitedBy = &v, probes[v], "search_max"
	default:
		next, err := probe(v + 1) // bisection leaves v+1 probed; doubling may stop right after v
		if err != nil {
			return err
		}
		r.Largest, r.At, r.Next, r.LimitedBy = &v, probes[v], next, next.limit
	}
	if form == "json" {
		err = writeJSON(s.Stdout, r)
	} else {
		err = writeFitTable(s.Stdout, r)
	}
	if err != nil {
		return err
	}
	if !found {
		p := r.Next
		return &fitError{fmt.Sprintf("does not fit: even %s=%d needs %s (weights %s + arena %s at %s) but the budget is %s",
			dim, lo, bytesize.Format(*p.TotalBytes), bytesize.Format(*p.WeightsBytes), bytesize.Format(*p.ArenaBytes),
			engine.Binding(p.WorstBinding), bytesize.Format(limit))}
	}
	return nil
}

func writeFitTable(w io.Writer, r *fitResult) error {
	tw := newTable(w)
	env := engine.Envelope{}
	for n, x := range r.Envelope {
		env[n] = engine.Range{Lo: x.Lo, Hi: x.Hi}
	}
	with := ""
	if len(env) > 0 {
		with = ", with " + env.String()
	}
	tw.row("model\t%s\n", describeInfo(r.Model))
	tw.row("search\t%s in %d..%d%s\n", r.Dim, r.SearchLo, r.SearchHi, with)
	if len(r.DefaultDims) > 0 {
		tw.row("\t(%s from the bundled model's defaults; set with --dim)\n", joinNames(r.DefaultDims))
	}
	tw.row("backend\t%s, %d workers\n", r.Backend, r.Workers)
	tw.row("budget\t%s\n", size(r.BudgetBytes))
	if r.Largest != nil {
		tw.row("largest\t%s=%d\t%s\n", r.Dim, *r.Largest, limitedBy(r))
	} else {
		tw.row("largest\tnone\teven %s=%d does not fit\n", r.Dim, r.SearchLo)
	}
	for _, p := range []*fitProbe{r.At, r.Next} {
		if p == nil {
			continue
		}
		if p.TotalBytes == nil {
			tw.row("  %s=%d\tnot planned: %s\n", r.Dim, p.Value, p.Problem)
			continue
		}
		verdict := fmt.Sprintf("fits, %s to spare", bytesize.Format(*p.MarginBytes))
		if !p.Fits {
			verdict = fmt.Sprintf("does not fit, %s over", bytesize.Format(-*p.MarginBytes))
		}
		tw.row("  %s=%d\ttotal %s = weights %s + arena %s at %s: %s\n", r.Dim, p.Value,
			size(*p.TotalBytes), bytesize.Format(*p.WeightsBytes), bytesize.Format(*p.ArenaBytes),
			engine.Binding(p.WorstBinding), verdict)
	}
	tw.row("probes\t%d envelope%s planned\n", r.Probes, plural(r.Probes))
	return tw.flush()
}

func limitedBy(r *fitResult) string {
	switch r.LimitedBy {
	case "budget":
		return fmt.Sprintf("limited by the budget at %s", engine.Binding(r.Next.WorstBinding))
	case "model":
		return fmt.Sprintf("limited by the model: %s=%d is not admitted", r.Dim, *r.Largest+1)
	case "overflow":
		return fmt.Sprintf("limited by size: at %s=%d %s", r.Dim, *r.Largest+1, r.Next.Problem)
	}
	return fmt.Sprintf("the whole search range fits (raise the maximum with --dim %s=?:MAX)", r.Dim)
}

func joinNames(ns []string) string {
	switch len(ns) {
	case 0:
		return ""
	case 1:
		return ns[0]
	}
	out := ns[0]
	for _, n := range ns[1 : len(ns)-1] {
		out += ", " + n
	}
	return out + " and " + ns[len(ns)-1]
}

// progress draws a spinner with the search bracket on a terminal; elsewhere it does nothing.
type progress struct {
	bar *progressbar.ProgressBar
	dim string
}

func newProgress(s Streams, dim string) *progress {
	if !s.StderrTerminal {
		return &progress{}
	}
	return &progress{dim: dim, bar: progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(s.Stderr),
		progressbar.OptionSetDescription("searching "+dim),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("probes"),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
	)}
}

func (p *progress) update(good, bad int64) {
	if p.bar == nil {
		return
	}
	if bad > 0 {
		p.bar.Describe(fmt.Sprintf("searching %s: %d fits, %d does not", p.dim, good, bad))
	} else {
		p.bar.Describe(fmt.Sprintf("searching %s: %d fits", p.dim, good))
	}
	_ = p.bar.Add(1)
}

func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// runFitConfig answers fit --config: generation planned as kv plans it (kvPlan), the dims read as
// kv's axes: batch the sequences, seq the context.
func runFitConfig(c *cli.Context, s Streams, form string) error {
	env, err := engine.ParseEnvelope(c.StringSlice("dim"))
	if err != nil {
		return err
	}
	for _, name := range env.Names() {
		if name != arch.BatchDim && name != arch.SeqDim {
			return usagef("--dim %s: fit --config plans generation, whose dims are batch (the sequences) and seq (the context: positions per sequence, prompt and new tokens)", name)
		}
	}
	axis := func(name string) (kvAxis, bool, error) {
		r, ok := env[name]
		switch {
		case !ok:
			return kvAxis{}, false, nil
		case r.Open:
			return kvAxis{open: true, max: r.Hi}, true, nil
		case r.Lo == r.Hi:
			return kvAxis{value: r.Lo}, true, nil
		}
		return kvAxis{}, false, usagef("--dim %s=%s: fit --config takes a value or ? for each dim (report plans ranges)", name, r)
	}
	batch, hasBatch, err := axis(arch.BatchDim)
	if err != nil {
		return err
	}
	ctxAxis, hasCtx, err := axis(arch.SeqDim)
	if err != nil {
		return err
	}
	tp, err := parseTP(c)
	if err != nil {
		return err
	}
	switch {
	case tp.search && (!hasBatch || batch.open || !hasCtx || ctxAxis.open):
		return usagef("--tp %s finds the fewest ranks for a load: give it with --dim batch=B --dim seq=N, values, not ? (fit --tp N searches the batch or the context)", c.String("tp"))
	case tp.search:
	case !hasCtx:
		return usagef("fit --config needs --dim seq=N (the context: the most sequences that fit) or seq=? (the longest context at the batch)")
	case !hasBatch && ctxAxis.open:
		batch = kvAxis{value: 1}
	case !hasBatch:
		batch = kvAxis{open: true}
	case batch.open && ctxAxis.open:
		return usagef("--dim batch=? and --dim seq=?: search one at a time (give the other a value)")
	case !batch.open && !ctxAxis.open:
		return usagef("fit --config: nothing to search; mark batch=? or seq=? (kv --config plans one point)")
	}
	ask := kvAsk{form: form, batch: batch, context: ctxAxis, prompt: c.Int64("prompt")}
	if ask.replicas, err = parseReplicas(c, batch); err != nil {
		return err
	}
	if ask.budget, ask.hasBudget, err = budget(c); err != nil {
		return err
	}
	if !ask.hasBudget {
		t, err := target(c)
		if err != nil {
			return err
		}
		if t.Memory == 0 {
			return usagef("fit --config needs --budget: the target %s has no memory size (h200, h100, a100 and sm_XY:SMS:SHARED:MEMORY have)", c.String("target"))
		}
		ask.budget, ask.hasBudget, ask.budgetFrom = t.Memory, true, "target"
	}
	if c.IsSet("prompt") && (ask.prompt < 1 || ask.prompt > engine.MaxDimValue) {
		return usagef("--prompt %d: want 1 to %d positions (the largest dim carve admits)", ask.prompt, engine.MaxDimValue)
	}
	if !ctxAxis.open && (ctxAxis.value < 2 || ask.prompt >= ctxAxis.value) {
		return usagef("--dim seq=%d: want a context of at least 2 positions and more than --prompt (a prompt and a new token)", ctxAxis.value)
	}
	if tp.search {
		return fitRanks(c, s, ask, tp.most)
	}
	return kvPlan(c, s, ask)
}
