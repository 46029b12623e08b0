package app

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/engine/generate"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"github.com/urfave/cli/v2"
)

// nameFlag is the flag that overrides a name of the model's cache (generate.NameFields), as
// `runner generate` and `estimator kv` both take it.
func nameFlag(f generate.NameField) string { return f.Key + "-name" }

// defaultPromptLen is --prompt-len when neither it nor --prompt is given.
const defaultPromptLen = 16

func generateCommand(env Env) *cli.Command {
	var flags []cli.Flag
	for _, f := range modelFlags() {
		switch f.Names()[0] {
		case "model", "dim", "concurrency":
			continue // generation needs a model file, sets its own envelope and runs one session
		case "seed":
			f = &cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED` of the random prompt (--prompt-len) and of --top-k sampling"}
		}
		flags = append(flags, f)
	}
	flags = append([]cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "ONNX `FILE` of a decoder with a KV cache (required)"},
		&cli.StringFlag{Name: "prompt", Usage: "token ids from `FILE.npy`, int64 [batch, length]"},
		&cli.Int64Flag{Name: "prompt-len", Usage: "random prompts of `N` token ids below the vocabulary, from --seed", DefaultText: fmt.Sprintf("%d without --prompt", defaultPromptLen)},
		&cli.IntFlag{Name: "max-new-tokens", Value: 32, Usage: "generate `N` tokens per sequence"},
		&cli.Int64Flag{Name: "batch", Value: 1, Usage: "`B` sequences generated together (with --prompt: the file's rows)"},
		&cli.Int64Flag{Name: "context", Usage: "positions `N` reserved per sequence, prompt and new tokens", DefaultText: "their sum rounded up to a power of two, at least 16"},
		&cli.IntFlag{Name: "top-k", Usage: "sample among the `K` most likely tokens", DefaultText: "greedy"},
		&cli.Float64Flag{Name: "temperature", Usage: "sample at temperature `T` (with --top-k, or alone over every token)", DefaultText: "greedy"},
		&cli.StringFlag{Name: "out", Usage: "write the new tokens to `FILE.npy`, int64 [batch, new] (atomically)"},
		&cli.BoolFlag{Name: "profile", Usage: "then generate once more with each kernel timed on the device (CUDA) and print the decode step's device time by op category"},
	}, flags...)
	for _, nf := range generate.NameFields {
		flags = append(flags, &cli.StringFlag{Name: nameFlag(nf), Usage: fmt.Sprintf("the model's `NAME` for %s", nf.Default)})
	}
	return &cli.Command{
		Name:  "generate",
		Usage: "generate tokens with a decoder's KV cache and time them: first token, ms/token, tokens/s, memory",
		UsageText: "runner generate --model M.onnx [--prompt ids.npy | --prompt-len N] [--max-new-tokens N] [--batch B]\n" +
			"                [--context N] [--top-k K] [--temperature T] [--seed S] [--device cpu|sim|cuda[:N]] [--graph]\n" +
			"                [--limit BYTES] [--out new.npy] [--format table|json] [--past-key-name past.%d.key ...]",
		Description: "Recognises the model's KV cache (the transformers/optimum concat form, or onnxruntime GenAI's\n" +
			"GroupQueryAttention with one shared buffer), reserves the weights, one arena planned for the prompt\n" +
			"and decode shapes up to --context, and the cache's state buffers for --batch sequences of --context\n" +
			"positions, before any inference: exit code 3 if they do not fit. Then it generates twice: once\n" +
			"untimed (warm-up: every length bucket the generation meets is planned and compiled), then timed.\n" +
			"It prints the time to the first token, ms per token (p50, p99), tokens per second, the memory\n" +
			"(weights, arena, KV state), and what the timed generation planned, compiled and allocated.\n" +
			"Greedy by default; --top-k and --temperature sample, seeded by --seed. Models whose names differ\n" +
			"from the conventions take the --*-name flags (per-layer names with one %d for the layer).",
		Flags:        flags,
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return doGenerate(c, env) },
	}
}

// generateReport is `runner generate --format json`'s document.
type generateReport struct {
	Model   string         `json:"model"`
	Device  string         `json:"device"`
	Workers int            `json:"workers"`
	Policy  string         `json:"policy"`
	Graph   bool           `json:"graph"`
	Fused   map[string]int `json:"fused,omitempty"`
	Cache   cacheInfo      `json:"cache"`
	Prompt  string         `json:"prompt"` // the file, or "random (seed N)"
	Context int64          `json:"context"`
	Sampler string         `json:"sampler"`
	Memory  run.GenMemory  `json:"memory"`
	*run.GenResult
	Tokens [][]int64 `json:"tokens"`        // the new tokens, by sequence
	Out    string    `json:"out,omitempty"` // the --out file written
	Stats  run.Stats `json:"stats"`
	// Profile is --profile's decode step, by kernel category and op type.
	Profile *profileReport `json:"profile,omitempty"`
}

type cacheInfo struct {
	Form    string `json:"form"`
	Layers  int    `json:"layers"`
	KVHeads int64  `json:"kv_heads"`
	HeadDim int64  `json:"head_dim"`
	DType   string `json:"dtype"`
	Vocab   int64  `json:"vocab"`
}

func doGenerate(c *cli.Context, env Env) (err error) {
	if err := noArgs(c); err != nil {
		return err
	}
	base, err := deviceConfig(c, env)
	if err != nil {
		return err
	}
	if base.ModelPath == "" {
		return usagef("--model is required: give the .onnx file of a decoder with a KV cache (the bundled model has none)")
	}
	gc := run.GenerateConfig{Config: base, Batch: c.Int64("batch"), MaxNew: c.Int("max-new-tokens"), Context: c.Int64("context"),
		TopK: c.Int("top-k"), Temperature: c.Float64("temperature")}
	for _, nf := range generate.NameFields {
		if !c.IsSet(nameFlag(nf)) {
			continue
		}
		v := c.String(nameFlag(nf))
		if !nf.Valid(v) {
			want := "a name (without %)"
			if nf.PerLayer() {
				want = "a name with one %d for the layer and no other %, e.g. " + nf.Default
			}
			return usagef("--%s %q: want %s", nameFlag(nf), v, want)
		}
		*nf.Field(&gc.Names) = v
	}
	switch {
	case gc.MaxNew < 1:
		return usagef("--max-new-tokens %d: generate at least 1", gc.MaxNew)
	case gc.Batch < 1:
		return usagef("--batch %d: want at least 1 sequence", gc.Batch)
	case c.IsSet("context") && gc.Context < 2:
		return usagef("--context %d: want at least 2 positions (a prompt and a new token)", gc.Context)
	case gc.TopK < 0:
		return usagef("--top-k %d: want at least 1 (leave it out for greedy choice)", gc.TopK)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"max-new-tokens", int64(gc.MaxNew)}, {"batch", gc.Batch}, {"context", gc.Context}, {"prompt-len", c.Int64("prompt-len")}} {
		if err := atMost(f.name, f.v, maxDim, whyDim); err != nil {
			return err
		}
	}
	if err := atMost("top-k", gc.TopK, maxDim, "more than the vocabulary samples among every token"); err != nil {
		return err
	}
	switch t := gc.Temperature; {
	case t < 0 || c.IsSet("temperature") && t == 0:
		return usagef("--temperature %g: want more than 0 (leave it out for greedy choice)", t)
	case math.IsNaN(t) || math.IsInf(t, 0):
		return usagef("--temperature %g: want a finite number more than 0 (leave it out for greedy choice)", t)
	}
	promptSrc := ""
	switch file := c.String("prompt"); {
	case file != "" && c.IsSet("prompt-len"):
		return usagef("--prompt and --prompt-len: give one (the file's shape gives the length)")
	case file != "":
		if gc.Prompt, gc.PromptLen, err = readPrompt(file, c.IsSet("batch"), &gc.Batch); err != nil {
			return err
		}
		promptSrc = file
	default:
		gc.PromptLen = defaultPromptLen
		if c.IsSet("prompt-len") {
			gc.PromptLen = c.Int64("prompt-len")
		}
		if gc.PromptLen < 1 {
			return usagef("--prompt-len %d: want at least 1 token", gc.PromptLen)
		}
		promptSrc = fmt.Sprintf("random (seed %d)", gc.Seed)
	}
	if c.Bool("profile") && !strings.HasPrefix(base.Device, "cuda") {
		return usagef("--profile times kernels with the device's timing events: it needs --device cuda (the %s device has none)", base.Device)
	}
	out := c.String("out")
	if c.IsSet("out") {
		if err := checkOutFile(out); err != nil {
			return err
		}
	}

	g, err := run.LoadGenerator(c.Context, gc)
	if err != nil {
		return explainGenerate(err, gc, c.String("prompt"))
	}
	defer func() { err = errors.Join(err, g.Close()) }()
	format := c.String("format")
	rep := generateReport{Model: g.ModelName, Device: g.Replica.Backend.Name(), Workers: workers(base), Policy: c.String("policy"),
		Graph: base.Graphs, Cache: describeCache(g.Cache), Prompt: promptSrc, Context: g.Generate.Context,
		Sampler: samplerName(gc), Memory: g.Memory}
	if g.Fusion != nil {
		rep.Fused = map[string]int{}
		for _, f := range g.Fusion.Fused {
			rep.Fused[string(f.Kind)]++
		}
	}
	if format == "table" {
		printGenerateLoad(env.Stdout, &rep, g)
	}
	res, err := g.Run(c.Context)
	if err != nil {
		return explainGenerate(err, gc, c.String("prompt"))
	}
	rep.GenResult, rep.Stats = res, g.Stats()
	for b := range res.Batch {
		rep.Tokens = append(rep.Tokens, res.Tokens[b*int64(res.New):(b+1)*int64(res.New)])
	}
	if c.Bool("profile") {
		p, err := g.Profile(c.Context)
		if err != nil {
			return explainGenerate(err, gc, c.String("prompt"))
		}
		rep.Profile = newProfileReport(p, res.PerToken.P50)
	}
	if out != "" {
		t := kernels.MustTensor(graph.Int64, res.Batch, int64(res.New))
		copy(t.Int64s(), res.Tokens)
		if err := npyfile.WriteFile(out, t); err != nil {
			return fmt.Errorf("--out %s: %w", out, unwrapPath(err))
		}
		rep.Out = out
	}
	if format == "json" {
		return writeJSON(env.Stdout, rep)
	}
	printGenerate(env.Stdout, &rep)
	if rep.Profile != nil {
		printProfile(env.Stdout, "the decode step", rep.Profile)
	}
	return nil
}

// readPrompt reads --prompt: int64 token ids [batch, length]. batch is the file's rows; if
// --batch was given too, it must agree.
func readPrompt(file string, batchSet bool, batch *int64) ([]int64, int64, error) {
	t, err := npyfile.ReadFile(file)
	if err != nil {
		return nil, 0, &inputReadError{name: "--prompt", file: file, err: err}
	}
	if len(t.Shape) != 2 || t.Shape[0] < 1 || t.Shape[1] < 1 {
		return nil, 0, &badFileError{fmt.Sprintf("--prompt %s: shape %v; want token ids [batch, length] with both at least 1", file, t.Shape)}
	}
	var ids []int64
	switch t.DType {
	case graph.Int64:
		ids = t.Int64s()
	case graph.Int32:
		for _, v := range t.Int32s() {
			ids = append(ids, int64(v))
		}
	default:
		return nil, 0, &badFileError{fmt.Sprintf("--prompt %s: dtype %s; want int64 (or int32) token ids", file, t.DType)}
	}
	if batchSet && *batch != t.Shape[0] {
		return nil, 0, usagef("--batch %d, but --prompt %s has %d rows: leave --batch out, or give a file of %d rows", *batch, file, t.Shape[0], *batch)
	}
	*batch = t.Shape[0]
	return ids, t.Shape[1], nil
}

// checkOutFile makes sure --out names a file that can be written, before any work: not a
// directory, a block device or a socket; a character device or FIFO is written through.
func checkOutFile(path string) error {
	if path == "" || strings.HasSuffix(path, "/") {
		return usagef("--out %q: want a file name, e.g. new_tokens.npy", path)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("--out %s is a directory: give a file name, e.g. %s", path, filepath.Join(path, "new_tokens.npy"))
	} else if err == nil && !fi.Mode().IsRegular() {
		if err := checkOutTarget(path); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		return nil // written through: no file is made beside it
	}
	dir := "."
	if i := strings.LastIndex(path, "/"); i > 0 {
		dir = path[:i]
	}
	if err := checkOutDir(dir); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	return nil
}

// explainGenerate words generation's own errors in the runner's terms (prompt is --prompt's
// file, if any); others pass to explain.
func explainGenerate(err error, gc run.GenerateConfig, prompt string) error {
	var (
		pe  *run.PromptError
		ce  *generate.ContextError
		cfe *generate.ConfigError
		rce *generate.RecognitionError
		re  *engine.ReservationError
		sfe *run.SlotFitError
	)
	what, lower := fmt.Sprintf("batch %d", gc.Batch), "--batch"
	switch { // runner serve
	case gc.MostSlots:
		what, lower = "the most slots that fit", "--slots"
	case gc.Slots > 0:
		what, lower = fmt.Sprintf("%d slots", gc.Slots), "--slots"
	}
	switch {
	case errors.As(err, &pe):
		return &badFileError{fmt.Sprintf("--prompt %s: token %d (row %d, position %d) is outside the model's vocabulary [0, %d)",
			prompt, pe.Token, pe.Row, pe.Position, pe.Vocab)}
	case errors.As(err, &ce):
		// The last new token's keys and values are never needed; the prompt needs room for one.
		// Prompt and New are at most maxDim each (the flags' bounds): their sum fits.
		need := max(ce.Prompt+ce.New-1, ce.Prompt+1)
		if need > maxDim {
			return usagef("a prompt of %d tokens and %d new tokens need a context of %d positions, more than the %d carve admits: "+
				"shorten the prompt or --max-new-tokens", ce.Prompt, ce.New, need, maxDim)
		}
		return usagef("a prompt of %d tokens and %d new tokens need a context of at least %d positions, but --context is %d: "+
			"raise --context to %d, or shorten the prompt or --max-new-tokens", ce.Prompt, ce.New, need, ce.Context, need)
	case errors.As(err, &cfe):
		return &generateError{fmt.Sprintf("%s at context %d cannot be planned: %s (lower %s or --context)", what, contextOf(gc), cfe.Problem, lower)}
	case errors.As(err, &rce):
		var flags []string
		for _, nf := range generate.NameFields {
			flags = append(flags, "--"+nameFlag(nf))
		}
		return &generateError{fmt.Sprintf("--model %s has no recognisable KV cache: %s; if the model names its cache differently, give the names with %s "+
			"(per-layer names with %%d for the layer)", gc.ModelPath, rce.Problem, strings.Join(flags, ", "))}
	case errors.As(err, &sfe):
		parts := []string{}
		if sfe.Weights > 0 {
			parts = append(parts, "weights "+bytesize.Format(sfe.Weights))
		}
		parts = append(parts, "arena "+bytesize.Format(sfe.Arena), "KV state "+bytesize.Format(sfe.State))
		msg := fmt.Sprintf("does not fit: not even one slot at context %d: it needs %s (%s) but only %s is available",
			sfe.Context, bytesize.Format(sfe.Needed), strings.Join(parts, " + "), bytesize.Format(sfe.Available))
		if sfe.LimitBytes > 0 && sfe.LimitBytes == sfe.Available {
			msg += " under --limit; lower --context or raise --limit"
		} else {
			msg += " on the device; lower --context"
		}
		return &noFitError{msg: msg, err: err}
	case errors.As(err, &re):
		msg := fmt.Sprintf("does not fit: %s at context %d needs %s", what, contextOf(gc), bytesize.Format(max(re.Needed, 0)))
		parts := []string{}
		if re.Weights > 0 {
			parts = append(parts, "weights "+bytesize.Format(re.Weights))
		}
		parts = append(parts, "arena "+bytesize.Format(re.Arena), "KV state "+bytesize.Format(re.State))
		msg += " (" + strings.Join(parts, " + ") + ")"
		msg += fmt.Sprintf(" but only %s is available", bytesize.Format(re.Available))
		if re.Limit > 0 && re.Limit == re.Available {
			msg += " under --limit"
		}
		if re.State > 0 && re.Needed > 0 {
			msg += fmt.Sprintf("; the KV state is %d%% of it: lower --context or %s (estimator kv finds what fits)", re.State*100/re.Needed, lower)
		}
		return &noFitError{msg: msg, err: err}
	}
	return err
}

func contextOf(gc run.GenerateConfig) int64 {
	if gc.Context > 0 {
		return gc.Context
	}
	return run.DefaultContext(gc.PromptLen, gc.MaxNew)
}

func samplerName(gc run.GenerateConfig) string {
	if gc.TopK > 0 || gc.Temperature > 0 {
		k := "all"
		if gc.TopK > 0 {
			k = fmt.Sprint(gc.TopK)
		}
		t := gc.Temperature
		if t == 0 {
			t = 1
		}
		return fmt.Sprintf("top-k %s, temperature %g, seed %d", k, t, gc.Seed)
	}
	return "greedy"
}

func describeCache(c *generate.Cache) cacheInfo {
	return cacheInfo{Form: c.Form.String(), Layers: len(c.Layers), KVHeads: c.KVHeads, HeadDim: c.HeadDim, DType: c.DType.String(), Vocab: c.Vocab}
}

// printGenerateLoad prints the model, its cache and what was reserved, before any generation.
func printGenerateLoad(w io.Writer, rep *generateReport, g *run.Generation) {
	m := rep.Memory
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "model\t%s\n", rep.Model)
	ci := rep.Cache
	fmt.Fprintf(tw, "cache\t%s form, %d layers x %d KV heads x %d, %s: %s per token per sequence\n",
		ci.Form, ci.Layers, ci.KVHeads, ci.HeadDim, ci.DType, bytesize.Format(m.KVBytesPerToken))
	fmt.Fprintf(tw, "device\t%s, %d workers, policy %s\n", rep.Device, rep.Workers, rep.Policy)
	fmt.Fprintf(tw, "envelope\t%s\n", m.Envelope)
	if m.DeviceWeightBytes > 0 {
		fmt.Fprintf(tw, "reserved\t%s = weights %s on the device + arena %s + KV state %s, before any run (%s available)\n",
			bytesize.Format(m.ReservedBytes), bytesize.Format(m.DeviceWeightBytes), bytesize.Format(m.ArenaBytes), bytesize.Format(m.StateBytes),
			bytesize.Format(m.AvailableBytes))
	} else {
		fmt.Fprintf(tw, "reserved\t%s = arena %s + KV state %s, before any run (%s available); weights %s mapped from the model\n",
			bytesize.Format(m.ReservedBytes), bytesize.Format(m.ArenaBytes), bytesize.Format(m.StateBytes), bytesize.Format(m.AvailableBytes),
			bytesize.Format(m.WeightBytes))
	}
	fmt.Fprintf(tw, "prompt\t%d x %d tokens, %s; context %d, %d new tokens, %s\n",
		g.Generate.Batch, g.Config.PromptLen, rep.Prompt, rep.Context, g.Config.MaxNew, rep.Sampler)
	tw.Flush()
}

// printGenerate prints the timed generation.
func printGenerate(w io.Writer, rep *generateReport) {
	r := rep.GenResult
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "warm-up\tone untimed generation, %.1f ms: it planned and compiled every bucket the timed one meets\n", r.WarmupMs)
	fmt.Fprintf(tw, "first token\t%.3f ms (the prompt's run)\n", r.FirstTokenMs)
	fmt.Fprintf(tw, "ms/token\tp50 %.3f  p99 %.3f  mean %.3f over %d decode steps\n", r.PerToken.P50, r.PerToken.P99, r.PerToken.Mean, r.Timed.DecodeSteps)
	fmt.Fprintf(tw, "tokens/s\t%.1f decoding (batch %d), %.1f with the first token\n", r.TokensPerSec, r.Batch, r.TotalTokensPerSec)
	m := rep.Memory
	fmt.Fprintf(tw, "memory\tweights %s (%s on the device), arena %s, KV state %s for batch %d x context %d (%s per token per sequence)\n",
		bytesize.Format(m.WeightBytes), bytesize.Format(m.DeviceWeightBytes), bytesize.Format(m.ArenaBytes), bytesize.Format(m.StateBytes),
		r.Batch, rep.Context, bytesize.Format(m.KVBytesPerToken))
	t := r.Timed
	fmt.Fprintf(tw, "timed run\t%d plans, %d program compiles, %d device mallocs, %d allocator allocations, %.1f Go allocations per token\n",
		t.Plans, t.Compiles, t.DeviceMallocs, t.AllocatorAllocs, t.GoAllocsPerToken)
	row := rep.Tokens[0]
	shown := row[:min(len(row), 16)]
	more := ""
	if len(row) > len(shown) {
		more = " ..."
	}
	fmt.Fprintf(tw, "tokens\t%s%s (sequence 0 of %d)\n", strings.Trim(fmt.Sprint(slices.Clone(shown)), "[]"), more, r.Batch)
	if rep.Out != "" {
		fmt.Fprintf(tw, "out\t%s: int64 [%d, %d]\n", rep.Out, r.Batch, r.New)
	}
	tw.Flush()
}
