// Package app is the runner's command line: flags, rendering and exit codes around package
// run, testable with arguments, captured output and the returned exit code.
package app

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/planner"
	"github.com/urfave/cli/v2"
)

// Exit codes, the same rule as the estimator's (README.md, "Exit codes"); see also
// ExitInterrupted.
const (
	ExitOK    = 0 // success
	ExitError = 1 // the work failed: a file named (model, input, prompt) missing, unreadable or unusable; a failed run; an output not written
	ExitUsage = 2 // the command line is wrong: a flag's syntax or value, flags that conflict, names the model does not have
	// ExitNoFits: the reservation does not fit the device or the limit.
	ExitNoFits = 3
	// ExitInternal: the runner failed on a bug of its own (a panic), with the stack on stderr.
	ExitInternal = 70
)

// Env is what a command sees of its process.
type Env struct {
	Stdout, Stderr io.Writer
	// StderrIsTerminal turns on progress bars.
	StderrIsTerminal bool
	// DeviceMemory sizes the CPU device; 0 means the host's available memory. For tests.
	DeviceMemory int64
	// Observe sees the allocator's statistics when the runner closes (run.Config.Observe).
	Observe func(stage string, st alloc.Stats)
	// ServeReady, if set, is called with `runner serve`'s address once it is ready. For tests.
	ServeReady func(addr string)
}

// Main runs the runner with args (args[0] is the program name) and returns the exit code.
// Errors are printed to env.Stderr as one line: "runner: MESSAGE", and for mistakes in the
// command line " (see runner COMMAND --help)" after it.
func Main(ctx context.Context, args []string, env Env) (code int) {
	defer func() {
		// A panic is a bug, not a mistake in the command line: Go's own exit code for it, 2,
		// is ExitUsage's. Deferred functions on the way (closing the runner) have run.
		if p := recover(); p != nil {
			fmt.Fprintf(env.Stderr, "runner: internal error: %v (a bug: please report it with the stack below)\n%s", p, debug.Stack())
			code = ExitInternal
		}
	}()
	app := newApp(env)
	err := app.RunContext(ctx, args)
	if err == nil {
		return ExitOK
	}
	msg, code := explain(err)
	msg = strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
	if code == ExitUsage {
		help := "runner --help"
		if len(args) > 1 && (args[1] == "run" || args[1] == "bench" || args[1] == "generate" || args[1] == "serve" || args[1] == "loadtest") {
			help = "runner " + args[1] + " --help"
		}
		msg += " (see " + help + ")"
	}
	fmt.Fprintf(env.Stderr, "runner: %s\n", msg)
	return code
}

// ExitCode classifies an error: 3 when the reservation does not fit, 2 for mistakes in the
// command line, 130 after Ctrl-C, 1 for everything else (bad files the user named included).
func ExitCode(err error) int {
	_, code := explain(err)
	return code
}

func newApp(env Env) *cli.App {
	return &cli.App{
		Name:  "runner",
		Usage: "run ONNX models on carve's planned arenas",
		UsageText: "runner run [flags]       run a model once or more and write its outputs\n" +
			"runner bench [flags]     measure latency, throughput and allocations\n" +
			"runner generate [flags]  generate tokens with a decoder's KV cache and time them\n" +
			"runner serve [flags]     serve a model over HTTP (v2 inference protocol, OpenAI completions)\n" +
			"runner loadtest [flags]  load a completions server on this machine and measure it",
		Description: "Loads a model, plans the --dim envelope and reserves each session's arena before any\n" +
			"inference (Level-2 reservation); runs then allocate nothing. Without --model it uses a small\n" +
			"GPT-2 built into the binary. Exit codes: 0 ok, 1 error (a bad file, a failed run), 2 usage (the\n" +
			"command line), 3 the reservation does not fit, 70 internal error (a bug), 130 interrupted (Ctrl-C\n" +
			"stops between runs; a second Ctrl-C quits at once).",
		Writer:                    env.Stdout,
		ErrWriter:                 env.Stderr,
		DisableSliceFlagSeparator: true,
		ExitErrHandler:            func(*cli.Context, error) {}, // Main prints errors and picks the code
		OnUsageError:              onUsageError,
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usagef("unknown command %q: the commands are run, bench, generate, serve and loadtest", c.Args().First())
			}
			cli.ShowAppHelp(c)
			return usagef("no command given")
		},
		Commands: []*cli.Command{runCommand(env), benchCommand(env), generateCommand(env), serveCommand(env), loadtestCommand(env)},
	}
}

// Upper bounds of the integer flags, checked where each flag is read, so that every count and
// size that reaches the libraries is one they can add and multiply without overflowing, and
// none asks for what cannot work. The messages give the bound and why.
const (
	// maxDim bounds the flags that become dims or positions: --batch, --context, --prompt-len,
	// --max-new-tokens (engine.MaxDimValue, what --dim admits).
	maxDim = engine.MaxDimValue
	// maxRuns bounds --repeat, --warmup, --runs and --profile: each run's latency is kept.
	maxRuns = 10_000_000
	// maxWorkers bounds --workers: the CPU kernels plan a workspace slot per worker.
	maxWorkers = 4096
)

// atMost refuses --name v above most, saying why.
func atMost[T int | int64](name string, v T, most int64, why string) error {
	if int64(v) > most {
		return usagef("--%s %d: want at most %d (%s)", name, v, most, why)
	}
	return nil
}

// whyDim is why maxDim bounds a flag.
const whyDim = "the largest dim carve admits"

func onUsageError(_ *cli.Context, err error, _ bool) error {
	return &usageError{err.Error()}
}

// noArgs rejects positional arguments, which no command takes.
func noArgs(c *cli.Context) error {
	if c.Args().Present() {
		return usagef("unexpected argument %q: every option is a flag (e.g. --model %s)", c.Args().First(), c.Args().First())
	}
	return nil
}

// Shared flags.
func modelFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "ONNX `FILE` (default: the bundled tiny GPT-2, dims batch and seq)"},
		&cli.StringSliceFlag{Name: "dim", Usage: "envelope dim `name=N|lo:hi`, one per flag; dims not given come from the " +
			"--input shapes (bundled model: batch=2 seq=16)"},
		&cli.StringFlag{Name: "device", Value: "cpu", Usage: "`DEVICE`: cpu, sim (a simulated discrete GPU: device memory reached only by copies) or cuda[:N] (a build with -tags cuda)"},
		&cli.StringFlag{Name: "policy", Value: "strict", Usage: "`POLICY` when a kernel needs more workspace than planned: strict (fail) or fallback (allocate)"},
		&cli.StringFlag{Name: "limit", Usage: "cap the allocator at `BYTES`, a number of bytes or one with a unit: KiB, MiB, GiB, TiB " +
			"(powers of 1024) or kB, MB, GB, TB (powers of 1000), e.g. 512MiB, 1.5GiB, 4GB; the arenas must fit under it"},
		&cli.IntFlag{Name: "workers", Usage: "CPU kernel workers `N` (0: GOMAXPROCS)"},
		&cli.IntFlag{Name: "concurrency", Value: 1, Usage: "`K` sessions (streams, arenas) run concurrently, sharing the weights"},
		&cli.BoolFlag{Name: "tight", Usage: "reserve the tight plan: kernels whose workspace holds a cap (cuBLASLt's, in GEMMs and in fused kernels with products of their own) get what the device " +
			"says they need at the envelope's extremes, measured at load (--stats shows W, C, R and the bytes saved)"},
		&cli.StringFlag{Name: "workspace-cap", Usage: "the most workspace one kernel whose workspace is a choice may declare, `BYTES` (e.g. 0, 8MiB; a CUDA convolution then admits only the cuDNN algorithms that fit, 0 those that need none); " +
			"default: no cap beyond each kernel's own bound. The estimator plans the same with its --workspace-cap"},
		&cli.BoolFlag{Name: "full-workspace", Usage: "reserve for every kernel whose workspace is a choice (a CUDA convolution's algorithm, a cuBLASLt product's) its whole bound, up to --workspace-cap, " +
			"the arena growing for it; by default it gets what the plan leaves free at its step, so that it never raises the arena. The estimator plans the same with its --full-workspace"},
		&cli.BoolFlag{Name: "graph", Usage: "capture each shape pattern's kernels into a graph at its first run and replay it after (a CUDA graph on a GPU)"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "`SEED` of the random inputs made without --input"},
		&cli.StringFlag{Name: "format", Value: "table", Usage: "`FORMAT` of stdout: table (people) or json (machines)"},
		&cli.BoolFlag{Name: "no-fuse", Usage: "run the graph as exported, without fusing attention, norms, SiLU and rotary embeddings into fused ops"},
		&cli.BoolFlag{Name: "no-inplace", Usage: "give every output bytes of its own; by default an output takes an input's bytes where its kernel allows it and nothing reads the input later. " +
			"The estimator plans the same with its --no-inplace"},
	}
}

// loadConfig builds run.Config from the shared flags; inputs are read by the caller.
func loadConfig(c *cli.Context, env Env) (run.Config, error) {
	cfg, err := deviceConfig(c, env)
	if err != nil {
		return cfg, err
	}
	cfg.Sessions = c.Int("concurrency")
	if cfg.Envelope, err = engine.ParseEnvelope(c.StringSlice("dim")); err != nil {
		return cfg, err
	}
	if cfg.Sessions < 1 {
		return cfg, usagef("--concurrency %d: want at least 1 session", cfg.Sessions)
	}
	if err := atMost("concurrency", cfg.Sessions, run.MaxSessions, "each session holds a stream, and on the cpu and sim devices up to two OS "+
		"threads; Go ends a process that holds more than 10000"); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// deviceConfig reads the flags every command shares: the model, the device and how it runs,
// --limit and --format.
func deviceConfig(c *cli.Context, env Env) (run.Config, error) {
	cfg := run.Config{ModelPath: c.String("model"), Device: c.String("device"), Workers: c.Int("workers"),
		Graphs: c.Bool("graph"), Seed: c.Uint64("seed"), DeviceMemory: env.DeviceMemory, Observe: env.Observe,
		NoFuse: c.Bool("no-fuse"), Tight: c.Bool("tight"), NoInPlace: c.Bool("no-inplace"),
		FullWorkspace: c.Bool("full-workspace")}
	var err error
	switch p := c.String("policy"); p {
	case "strict":
	case "fallback":
		cfg.Policy = planner.Fallback
	default:
		return cfg, usagef("--policy %q: want strict or fallback", p)
	}
	if c.IsSet("limit") {
		if cfg.Limit, err = bytesize.Parse(c.String("limit")); err != nil {
			return cfg, &usageError{"--limit: " + err.Error()}
		}
		if cfg.Limit == 0 {
			return cfg, usagef("--limit 0: no arena fits in 0 bytes; leave --limit out to use the device's free memory")
		}
	}
	if c.IsSet("workspace-cap") {
		n, err := bytesize.Parse(c.String("workspace-cap"))
		if err != nil {
			return cfg, &usageError{"--workspace-cap: " + err.Error()}
		}
		cfg.WorkspaceCap = &n
	}
	if cfg.Workers < 0 {
		return cfg, usagef("--workers %d: want 0 (GOMAXPROCS) or more", cfg.Workers)
	}
	if err := atMost("workers", cfg.Workers, maxWorkers, "the CPU kernels plan a workspace for each worker"); err != nil {
		return cfg, err
	}
	if f := c.String("format"); hasFlag(c, "format") && f != "table" && f != "json" {
		return cfg, usagef("--format %q: want table or json", f)
	}
	return cfg, nil
}

// hasFlag says whether c's command defines the flag name (serve has no --format).
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		if f.Names()[0] == name {
			return true
		}
	}
	return false
}
