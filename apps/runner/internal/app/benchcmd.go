package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
)

func benchCommand(env Env) *cli.Command {
	flags := append(modelFlags(),
		&cli.IntFlag{Name: "warmup", Value: 3, Usage: "untimed runs `N` per session first (the first plans the pattern)"},
		&cli.IntFlag{Name: "runs", Value: 100, Usage: "timed runs `N` in all, spread over the --concurrency sessions"},
		&cli.DurationFlag{Name: "duration", Usage: "time runs for `D` (e.g. 10m) instead of counting --runs: a soak test (each session times at least one run)"},
		&cli.StringFlag{Name: "samples", Usage: "write memory samples to `FILE.csv` during the timed runs, every --sample-every: " +
			"the allocator's segment, allocated and arena bytes, the device's mallocs and free memory, the Go heap"},
		&cli.DurationFlag{Name: "sample-every", Value: 5 * time.Second, Usage: "`D` between --samples rows"},
		&cli.StringFlag{Name: "outputs", Value: "host", Usage: "`WHERE` each run leaves its outputs: host (copied back, as runner run does) or " +
			"device (left in device memory, as a framework's forward pass leaves its tensors on the GPU; nothing is copied back)"},
		&cli.IntFlag{Name: "profile", Usage: "then run `N` more times on one session with each kernel timed on the device (CUDA) and print a run's device time by op category"},
	)
	return &cli.Command{
		Name:  "bench",
		Usage: "measure latency percentiles, runs per second and allocations per run",
		UsageText: "runner bench [--model M.onnx] [--dim batch=1 --dim seq=128] [--warmup N] [--runs N | --duration D] [--concurrency K]\n" +
			"             [--policy strict|fallback] [--limit BYTES] [--samples FILE.csv [--sample-every D]] [--outputs host|device]\n" +
			"             [--profile N] [--format table|json]",
		Description: "Loads like `runner run` (random inputs at the envelope's largest binding), warms every session\n" +
			"up, then times --runs runs, the sessions concurrently. Reports latency (min, p50, p90, p99, max,\n" +
			"mean), runs per second, Go heap allocations, device mallocs and allocator allocations per run,\n" +
			"and the allocator's statistics. A progress bar is drawn on stderr when it is a terminal.\n" +
			"For a soak test, --duration times runs for a while instead, and --samples writes memory figures\n" +
			"every --sample-every to a CSV file (tools/gpu/soak.sh adds the GPU's own and checks them).",
		Flags:        flags,
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return doBench(c, env) },
	}
}

// benchReport is `runner bench --format json`'s document.
type benchReport struct {
	Model       string          `json:"model"`
	Device      string          `json:"device"`
	Workers     int             `json:"workers"`
	Policy      string          `json:"policy"`
	Graph       bool            `json:"graph"`   // --graph: kernels replayed as captured graphs
	Outputs     string          `json:"outputs"` // --outputs: host (copied back each run) or device (left there)
	Reservation run.Reservation `json:"reservation"`
	Binding     engine.Binding  `json:"binding"`
	Warmup      int             `json:"warmup"`
	duration    time.Duration   // --duration
	*run.BenchResult
	Profile *profileReport `json:"profile,omitempty"` // --profile: one run, by kernel category and op type
}

func doBench(c *cli.Context, env Env) (err error) {
	if err := noArgs(c); err != nil {
		return err
	}
	cfg, err := loadConfig(c, env)
	if err != nil {
		return err
	}
	bc := run.BenchConfig{Warmup: c.Int("warmup"), Runs: c.Int("runs")}
	if bc.Warmup < 1 {
		return usagef("--warmup %d: warm up at least once (the first run of a pattern plans it)", bc.Warmup)
	}
	bc.Duration = c.Duration("duration")
	if c.IsSet("duration") && bc.Duration <= 0 {
		return usagef("--duration %s: give a positive duration, e.g. 10m", bc.Duration)
	}
	if c.IsSet("duration") && c.IsSet("runs") {
		return usagef("--runs and --duration both given: time a count of runs or a duration, not both")
	}
	if bc.Runs < 1 && bc.Duration <= 0 {
		return usagef("--runs %d: time at least one run", bc.Runs)
	}
	if err := atMost("warmup", bc.Warmup, maxRuns, "every run's latency is kept"); err != nil {
		return err
	}
	if err := atMost("runs", bc.Runs, maxRuns, "every run's latency is kept; --duration times longer soaks in fixed-size histograms"); err != nil {
		return err
	}
	if bc.SampleEvery = c.Duration("sample-every"); bc.SampleEvery <= 0 {
		return usagef("--sample-every %s: give a positive duration, e.g. 5s", bc.SampleEvery)
	}
	switch o := c.String("outputs"); o {
	case "host":
	case "device":
		cfg.OutputsOnDevice = true
	default:
		return usagef("--outputs %q: give host (copy each run's outputs back) or device (leave them in device memory)", o)
	}
	profileRuns := c.Int("profile")
	if c.IsSet("profile") && profileRuns < 1 {
		return usagef("--profile %d: profile at least one run", profileRuns)
	}
	if err := atMost("profile", profileRuns, maxRuns, "as --runs"); err != nil {
		return err
	}
	if profileRuns > 0 && !strings.HasPrefix(cfg.Device, "cuda") {
		return usagef("--profile times kernels with the device's timing events: it needs --device cuda (the %s device has none)", cfg.Device)
	}
	r, err := run.Load(c.Context, cfg)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	if path := c.String("samples"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("--samples: %w", err)
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		samples := newSampler(f, r)
		bc.Sample = samples.sample
		defer func() { err = errors.Join(err, samples.err) }()
	}
	format := c.String("format")
	if format == "table" {
		printLoad(env.Stdout, r, nil)
	}
	if env.StderrIsTerminal && bc.Duration <= 0 {
		bar := progressbar.NewOptions(bc.Runs, progressbar.OptionSetWriter(env.Stderr),
			progressbar.OptionSetDescription("bench"), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionClearOnFinish())
		bc.Progress = func(done int) { bar.Set(done) }
		defer bar.Finish()
	}
	res, err := r.Bench(c.Context, bc)
	if err != nil {
		return err
	}
	rep := benchReport{Model: r.ModelName, Device: r.Backend.Name(), Workers: workers(cfg), Policy: c.String("policy"), Graph: cfg.Graphs,
		Outputs: c.String("outputs"), Reservation: r.Reservation, Binding: r.Binding, Warmup: bc.Warmup, duration: bc.Duration, BenchResult: res}
	if profileRuns > 0 {
		p, err := r.Profile(c.Context, profileRuns)
		if err != nil {
			return err
		}
		rep.Profile = newProfileReport(p, res.Latency.P50)
	}
	if format == "json" {
		return writeJSON(env.Stdout, rep)
	}
	printBench(env.Stdout, &rep)
	if rep.Profile != nil {
		printProfile(env.Stdout, "a run", rep.Profile)
	}
	return nil
}

func printBench(w io.Writer, rep *benchReport) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	l := rep.Latency
	fmt.Fprintf(tw, "runs\t%d timed on %d session(s) after %d warmup run(s) each, %.3f s\n", rep.Runs, rep.Sessions, rep.Warmup, rep.WallSeconds)
	if rep.DurationShort {
		fmt.Fprintf(tw, "\t--duration %s passed before a session's first run ended: each session timed at least one\n", rep.duration)
	}
	fmt.Fprintf(tw, "latency ms\tmin %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f  mean %.3f\n", l.Min, l.P50, l.P90, l.P99, l.Max, l.Mean)
	fmt.Fprintf(tw, "throughput\t%.1f runs/s\n", rep.RunsPerSec)
	if rep.Outputs == "device" {
		fmt.Fprintf(tw, "outputs\tleft in device memory (--outputs device): runs copy nothing back\n")
	}
	fmt.Fprintf(tw, "per run\t%.1f Go heap allocations, %.2f device mallocs, %.2f allocator allocations\n",
		rep.GoAllocsPerRun, rep.DeviceMallocsPerRun, rep.AllocatorAllocsPerRun)
	tw.Flush()
	printStats(w, rep.Stats)
}
