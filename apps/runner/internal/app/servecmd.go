package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/apps/runner/internal/serve"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/engine/generate"
	"github.com/urfave/cli/v2"
)

func serveCommand(env Env) *cli.Command {
	var flags []cli.Flag
	for _, f := range modelFlags() {
		switch f.Names()[0] {
		case "concurrency", "format":
			continue // --slots is the sessions; the server answers in JSON
		case "dim":
			f = &cli.StringSliceFlag{Name: "dim", Usage: "envelope dim `name=N|lo:hi` of a model without a KV cache, one per flag (a decoder's comes from --slots and --context)"}
		}
		flags = append(flags, f)
	}
	flags = append([]cli.Flag{
		&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8000", Usage: "listen on `HOST:PORT` (loopback unless told otherwise; TLS is the ingress's)"},
		&cli.StringFlag{Name: "name", Usage: "the model's `NAME` in the API", DefaultText: "the model file's name without .onnx"},
		&cli.IntFlag{Name: "slots", Usage: "`N` sequence slots reserved at load: the requests (sequences) that run at once; a GenAI-form decoder's are rows of one session's KV state (continuous batching), otherwise sessions with an arena each",
			DefaultText: fmt.Sprintf("a decoder's most that fit the device's free memory or --limit, at most %d; %d for a model without a KV cache", run.MaxFitSlots, defaultSessions)},
		&cli.Int64Flag{Name: "context", Value: 1024, Usage: "positions `N` reserved per slot of a KV-cache decoder, prompt and new tokens"},
		&cli.Int64Flag{Name: "prefill-chunk", Value: generate.DefaultChunk, Usage: "continuous batching feeds a joining prompt at most `N` tokens a step, beside the sequences that decode"},
		&cli.IntFlag{Name: "queue", Value: 64, Usage: "requests (sequences) `N` that may wait for a slot; beyond them a request gets 429 with Retry-After"},
		&cli.StringFlag{Name: "api-key", EnvVars: []string{"CARVE_API_KEY"}, Usage: "require `KEY` as Authorization: Bearer on every route but the health probes (the variable keeps it out of process listings)"},
		&cli.StringFlag{Name: "max-body", Value: "16MiB", Usage: "refuse request bodies larger than `BYTES` with 413"},
		&cli.DurationFlag{Name: "shutdown-timeout", Value: 30 * time.Second, Usage: "after SIGTERM (or Ctrl-C), wait `D` for the requests in flight, then cancel them"},
	}, flags...)
	for _, nf := range generate.NameFields {
		flags = append(flags, &cli.StringFlag{Name: nameFlag(nf), Usage: fmt.Sprintf("the model's `NAME` for %s", nf.Default)})
	}
	return &cli.Command{
		Name:  "serve",
		Usage: "serve a model over HTTP: the v2 inference protocol, and OpenAI's /v1/completions for KV-cache decoders",
		UsageText: "runner serve --model M.onnx [--addr 127.0.0.1:8000] [--slots N] [--context N] [--prefill-chunk N] [--queue N]\n" +
			"             [--api-key KEY | CARVE_API_KEY=KEY] [--device cpu|sim|cuda[:N]] [--graph] [--dim name=N ...]",
		Description: "Listens at once (GET /v2/health/live answers while the model loads), loads the model and reserves\n" +
			"--slots sessions, each with its arena and, for a decoder with a KV cache, its KV state for --context\n" +
			"positions (exit code 3 if they do not fit; without --slots a decoder gets the most that fit the device's\n" +
			fmt.Sprintf("free memory or --limit, at most %d, as estimator kv --serve plans them), runs each once (warm-up),\n", run.MaxFitSlots) +
			"and only then is ready\n" +
			"(a GenAI-form decoder's slots are rows of one session, continuously batched: a sequence joins the\n" +
			"running batch between steps, its prompt fed --prefill-chunk tokens a step, and the warm-up meets\n" +
			"every batch, chunk and mask bucket; a concat-form decoder has a session per slot, generating alone)\n" +
			"(GET /v2/health/ready). Routes: GET /v2, /v2/models/NAME, /v2/models/NAME/ready, POST\n" +
			"/v2/models/NAME/infer (JSON tensors) for a model without a KV cache; POST /v1/completions (token-id\n" +
			"prompts, streaming) and GET /v1/models for a decoder; GET /metrics (Prometheus). A request waits for a\n" +
			"free slot in a queue of --queue; beyond it, 429. SIGTERM or Ctrl-C stops admitting, waits up to\n" +
			"--shutdown-timeout for the requests in flight, and exits 0.",
		Flags:        flags,
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return doServe(c, env) },
	}
}

// defaultSessions is serve's sessions for a model without a KV cache when --slots is not given:
// each serves one request at a time with an arena planned for the whole --dim envelope, so what
// fits says little about what a load needs.
const defaultSessions = 4

// slotsText says how many slots g holds and, when they were the most that fit, in what and what
// one more would need.
func slotsText(g *run.Generation) string {
	f := g.SlotFit
	if f == nil {
		return fmt.Sprintf("%d slots", g.Config.Slots)
	}
	in := bytesize.Format(f.AvailableBytes)
	if f.LimitBytes > 0 && f.LimitBytes == f.AvailableBytes {
		in += " under --limit"
	}
	if f.NextBytes == 0 {
		return fmt.Sprintf("%d slots (the most taken without --slots, and they fit in %s; --slots N asks for more)", f.Slots, in)
	}
	return fmt.Sprintf("%d slots (the most that fit in %s; %d would need %s)", f.Slots, in, f.Slots+1, bytesize.Format(f.NextBytes))
}

func doServe(c *cli.Context, env Env) (err error) {
	if err := noArgs(c); err != nil {
		return err
	}
	base, err := deviceConfig(c, env)
	if err != nil {
		return err
	}
	if base.Envelope, err = engine.ParseEnvelope(c.StringSlice("dim")); err != nil {
		return err
	}
	slots, queue, ctxLen, chunk := c.Int("slots"), c.Int("queue"), c.Int64("context"), c.Int64("prefill-chunk")
	mostSlots := !c.IsSet("slots")
	switch {
	case !mostSlots && slots < 1:
		return usagef("--slots %d: want at least 1 session", slots)
	case chunk < 1:
		return usagef("--prefill-chunk %d: want at least 1 token", chunk)
	case queue < 0:
		return usagef("--queue %d: want 0 (no waiting) or more", queue)
	case ctxLen < 2:
		return usagef("--context %d: want at least 2 positions (a prompt and a new token)", ctxLen)
	case c.Duration("shutdown-timeout") < 0:
		return usagef("--shutdown-timeout %s: want 0 or more", c.Duration("shutdown-timeout"))
	}
	if err := atMost("slots", slots, run.MaxSessions, "each session holds a stream, and on the cpu and sim devices up to two OS threads"); err != nil {
		return err
	}
	if err := atMost("queue", queue, 1_000_000, "a queue longer than that waits longer than any client"); err != nil {
		return err
	}
	if err := atMost("context", ctxLen, maxDim, whyDim); err != nil {
		return err
	}
	maxBody, err := bytesize.Parse(c.String("max-body"))
	if err != nil {
		return &usageError{"--max-body: " + err.Error()}
	}
	if maxBody < 1 {
		return usagef("--max-body %s: want at least 1 byte", c.String("max-body"))
	}
	names := generate.Names{}
	for _, nf := range generate.NameFields {
		if c.IsSet(nameFlag(nf)) {
			v := c.String(nameFlag(nf))
			if !nf.Valid(v) {
				return usagef("--%s %q: want a name (per-layer names with one %%d for the layer)", nameFlag(nf), v)
			}
			*nf.Field(&names) = v
		}
	}
	name := c.String("name")
	if name == "" {
		name = "gpt2-bundled"
		if base.ModelPath != "" {
			name = strings.TrimSuffix(filepath.Base(base.ModelPath), ".onnx")
		}
	}

	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return fmt.Errorf("--addr %s: %w", c.String("addr"), err)
	}
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM)
	defer stop()
	srv := serve.New(serve.Options{APIKey: c.String("api-key"), MaxBodyBytes: maxBody, Queue: queue,
		ShutdownTimeout: c.Duration("shutdown-timeout"), Log: env.Stderr, OnReady: env.ServeReady})

	var closers []func() error
	defer func() {
		for _, f := range closers {
			err = errors.Join(err, f())
		}
	}()
	setup := func(ctx context.Context) error {
		var g *run.Generation
		var err error
		if base.ModelPath != "" {
			cfg := base
			// Any prompt that leaves room for a new token: the longest is ctxLen-1.
			gc := run.GenerateConfig{Config: cfg, Names: names, Batch: 1, PromptLen: ctxLen - 1, MaxNew: 1, Context: ctxLen,
				Slots: slots, PrefillChunk: chunk, MostSlots: mostSlots}
			g, err = run.LoadGenerator(ctx, gc)
			var rce *generate.RecognitionError
			if err != nil && !errors.As(err, &rce) {
				return explainGenerate(err, gc, "")
			}
		}
		if g != nil {
			closers = append(closers, g.Close)
			if len(base.Envelope) > 0 {
				return usagef("--dim: %s is a KV-cache decoder, whose envelope comes from --slots and --context", name)
			}
			srv.AttachGeneration(name, g)
			m, slots := g.Memory, g.Config.Slots
			if g.Batch != nil {
				fmt.Fprintf(env.Stderr, "runner serve: %s: KV-cache decoder (%s form), %s x context %d, continuously batched in one session; reserved %s = weights %s on the device + arena %s + KV state %s (%d slot rows, a prefill row and its copy)\n",
					name, g.Cache.Form, slotsText(g), ctxLen, bytesize.Format(m.ReservedBytes), bytesize.Format(m.DeviceWeightBytes),
					bytesize.Format(m.ArenaBytes), bytesize.Format(m.StateBytes), slots)
			} else {
				fmt.Fprintf(env.Stderr, "runner serve: %s: KV-cache decoder (%s form), %s x context %d, a session each; reserved %s = weights %s on the device + %d x (arena %s + KV state %s)\n",
					name, g.Cache.Form, slotsText(g), ctxLen, bytesize.Format(m.ReservedBytes), bytesize.Format(m.DeviceWeightBytes), slots,
					bytesize.Format(m.ArenaBytes), bytesize.Format(m.StateBytes))
			}
		} else {
			cfg := base
			if mostSlots {
				slots = defaultSessions
			}
			cfg.Sessions = slots
			r, err := run.Load(ctx, cfg)
			if err != nil {
				return err
			}
			closers = append(closers, r.Close)
			srv.AttachRunner(name, r)
			res := r.Reservation
			fmt.Fprintf(env.Stderr, "runner serve: %s: envelope %s, %d sessions; reserved %s = weights %s on the device + %d x arena %s\n",
				name, res.Envelope, slots, bytesize.Format(res.DeviceWeightBytes+res.TotalArenaBytes), bytesize.Format(res.DeviceWeightBytes),
				slots, bytesize.Format(res.ArenaBytes))
		}
		if err := srv.Warmup(ctx); err != nil {
			if g != nil && ctx.Err() == nil {
				return fmt.Errorf("%w (the warm-up runs every slot to the end of --context %d: a model whose position tables are shorter fails here; lower --context)", err, ctxLen)
			}
			return err
		}
		return nil
	}
	err = srv.Run(ctx, ln, setup)
	if err == nil && c.Context.Err() != nil && ctx.Err() != nil {
		// Ctrl-C drained like SIGTERM: a clean stop, not an interrupted run.
		return nil
	}
	return err
}
