package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"carve.dev/apps/runner/internal/npyfile"
	"carve.dev/apps/runner/internal/run"
	"carve.dev/libs/engine"
	"carve.dev/libs/kernels"
	"github.com/urfave/cli/v2"
)

func runCommand(env Env) *cli.Command {
	flags := append(modelFlags(),
		&cli.StringSliceFlag{Name: "input", Usage: "input `name=FILE.npy`, one per flag: all inputs or none " +
			"(none: seeded random inputs at the envelope's largest binding)"},
		&cli.StringFlag{Name: "out", Usage: "write each output to `DIR`/<output name>.npy (created)"},
		&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run `N` times on every session"},
		&cli.IntFlag{Name: "tp", Value: 1, Usage: "split the model over `N` devices by tensor parallelism (attention heads, MLP columns and the vocabulary per rank, " +
			"all-reduces between; a decoder of the Llama lineage): --device sim --tp 2, or one device per rank (--device sim,sim:1 --tp 2); simulated devices only until NCCL is built"},
		&cli.StringFlag{Name: "stats", Usage: "print allocator, engine and device statistics as `FORMAT` table or json " +
			"(json: alone on stdout, the tables move to stderr)"},
	)
	return &cli.Command{
		Name:  "run",
		Usage: "run a model on .npy inputs (or random ones) and write its outputs as .npy",
		UsageText: "runner run [--model M.onnx] [--dim batch=3 --dim seq=33] [--input name=file.npy ...] [--out DIR]\n" +
			"           [--repeat N] [--concurrency K] [--tp N] [--policy strict|fallback] [--limit BYTES] [--stats json|table] [--format table|json]",
		Description: "Plans the --dim envelope (ranges allowed: the reservation covers the whole range) and reserves\n" +
			"one arena per session before any inference, failing with exit code 3 if they do not fit. Inputs\n" +
			"must have the dtypes the model declares and shapes inside the envelope; without --input, random\n" +
			"inputs are made at each dim's largest value. Outputs are written atomically (temporary file, rename).",
		Flags:        flags,
		OnUsageError: onUsageError,
		Action:       func(c *cli.Context) error { return doRun(c, env) },
	}
}

// runReport is `runner run --format json`'s document.
type runReport struct {
	Model       string          `json:"model"`
	Device      string          `json:"device"`
	Workers     int             `json:"workers"`
	Policy      string          `json:"policy"`
	Graph       bool            `json:"graph"` // --graph: kernels replayed as captured graphs
	Reservation run.Reservation `json:"reservation"`
	Binding     engine.Binding  `json:"binding"`
	Inputs      []tensorInfo    `json:"inputs"`
	Outputs     []tensorInfo    `json:"outputs"`
	Runs        runSummary      `json:"runs"`
	Steady      run.Counters    `json:"steady_state"`
	Stats       run.Stats       `json:"stats"`
}

type runSummary struct {
	Sessions int     `json:"sessions"`
	Repeat   int     `json:"repeat"`
	FirstMs  float64 `json:"first_ms"`          // the slowest session's first run (it compiles the pattern)
	MeanMs   float64 `json:"mean_ms,omitempty"` // mean of the later runs
	MaxMs    float64 `json:"max_ms,omitempty"`  // slowest of the later runs
}

func doRun(c *cli.Context, env Env) (err error) {
	if err := noArgs(c); err != nil {
		return err
	}
	cfg, err := loadConfig(c, env)
	if err != nil {
		return err
	}
	if cfg.TP = c.Int("tp"); cfg.TP < 1 {
		return usagef("--tp %d: want 1 (the whole model on each device) or more ranks", cfg.TP)
	}
	if err := atMost("tp", cfg.TP, run.MaxTP, "each rank holds a device"); err != nil {
		return err
	}
	repeat := c.Int("repeat")
	if repeat < 1 {
		return usagef("--repeat %d: run at least once", repeat)
	}
	if err := atMost("repeat", repeat, maxRuns, "every run's latency is kept"); err != nil {
		return err
	}
	stats := c.String("stats")
	if stats != "" && stats != "table" && stats != "json" {
		return usagef("--stats %q: want table or json", stats)
	}
	format := c.String("format")
	files, err := parseInputs(c.StringSlice("input"))
	if err != nil {
		return err
	}
	outDir := c.String("out")
	if c.IsSet("out") {
		if err := checkOutDir(outDir); err != nil {
			return err
		}
	}
	if len(files) > 0 {
		cfg.Inputs = map[string]kernels.Tensor{}
		for _, name := range sortedKeys(files) {
			if err := c.Context.Err(); err != nil {
				return err
			}
			t, err := npyfile.ReadFile(files[name])
			if err != nil {
				return &inputReadError{name: name, file: files[name], err: err}
			}
			cfg.Inputs[name] = t
		}
	}

	r, err := run.Load(c.Context, cfg)
	if err != nil {
		var ie *engine.InputError
		if errors.As(err, &ie) && files[ie.Input] != "" {
			return &inputFileError{file: files[ie.Input], err: err}
		}
		return err
	}
	defer func() { err = errors.Join(err, r.Close()) }()
	if outDir != "" {
		if err := checkOutFiles(outDir, run.Names(r.Model.Outputs)); err != nil {
			return err
		}
	}

	// Tables go to stdout, unless stdout carries the statistics' JSON.
	tables := env.Stdout
	if format == "table" && stats == "json" {
		tables = env.Stderr
	}
	if format == "table" {
		printLoad(tables, r, files)
	}

	res, err := r.Run(c.Context, repeat)
	if err != nil {
		return err
	}
	outFiles := map[string]string{}
	if outDir != "" {
		if outFiles, err = writeOutputs(outDir, res); err != nil {
			return err
		}
	}

	rep := runReport{Model: r.ModelName, Device: r.Backend.Name(), Workers: workers(cfg), Policy: c.String("policy"), Graph: cfg.Graphs,
		Reservation: r.Reservation, Binding: r.Binding, Steady: res.Steady, Stats: r.Stats(),
		Runs: summarize(res, repeat)}
	for _, v := range r.Model.Inputs {
		src := files[v.Name]
		if src == "" {
			src = fmt.Sprintf("random (seed %d)", cfg.Seed)
		}
		rep.Inputs = append(rep.Inputs, describe(v.Name, r.Inputs[v.Name], src))
	}
	for i, name := range res.Names {
		rep.Outputs = append(rep.Outputs, describe(name, res.Outputs[i], outFiles[name]))
	}
	switch {
	case format == "json":
		return writeJSON(env.Stdout, rep)
	case stats == "json":
		printRun(tables, &rep)
		return writeJSON(env.Stdout, rep.Stats)
	}
	printRun(tables, &rep)
	if stats == "table" {
		printStats(tables, rep.Stats)
	}
	return nil
}

// parseInputs splits name=FILE arguments.
func parseInputs(args []string) (map[string]string, error) {
	files := map[string]string{}
	for _, a := range args {
		name, file, ok := strings.Cut(a, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || file == "" {
			return nil, usagef("--input %q: want name=FILE.npy", a)
		}
		if _, dup := files[name]; dup {
			return nil, usagef("--input: input %q is given twice", name)
		}
		files[name] = file
	}
	return files, nil
}

// checkOutDir makes sure --out names a directory the outputs can be written to, before any
// work: it is created if missing, and a file is created and removed in it.
func checkOutDir(dir string) error {
	if dir == "" {
		return usagef("--out: empty directory name")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: cannot create the directory: %w", dir, unwrapPath(err))
	}
	f, err := os.CreateTemp(dir, ".runner-check-*")
	if err != nil {
		return fmt.Errorf("--out %s: cannot write there: %w", dir, unwrapPath(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// unwrapPath is the error inside an *fs.PathError (whose path the message already gives).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// outputFiles names each output's file in dir: its name made safe (fileName), with a number
// after it where two names would give one file (letter case aside).
func outputFiles(dir string, names []string) []string {
	files := make([]string, len(names))
	used := map[string]bool{}
	for i, name := range names {
		base := fileName(name)
		for n := 2; used[strings.ToLower(base)]; n++ {
			base = fmt.Sprintf("%s_%d", fileName(name), n)
		}
		used[strings.ToLower(base)] = true
		files[i] = filepath.Join(dir, base+".npy")
	}
	return files
}

// checkOutFiles makes sure, before any run, that the outputs' files in dir can be written:
// none is a directory, a block device or a socket, which would fail only after the runs.
func checkOutFiles(dir string, names []string) error {
	for i, p := range outputFiles(dir, names) {
		if err := checkOutTarget(p); err != nil {
			return fmt.Errorf("--out %s: output %q: %w", dir, names[i], err)
		}
	}
	return nil
}

// checkOutTarget refuses an output file that WriteFile cannot write: a directory, a block
// device or a socket (it writes through character devices and FIFOs, and replaces the rest).
func checkOutTarget(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	err := npyfile.CheckWritable(path)
	if errors.Is(err, npyfile.ErrNotRegularFile) {
		return fmt.Errorf("%s is a block device or a socket; give a file, a character device (e.g. /dev/null) or a FIFO", path)
	}
	return unwrapPath(err)
}

// writeOutputs writes every output to dir as a .npy file (outputFiles), each atomically, or
// through a character device or FIFO that is there.
func writeOutputs(dir string, res *run.Result) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	files := map[string]string{}
	for i, p := range outputFiles(dir, res.Names) {
		name := res.Names[i]
		if err := npyfile.WriteFile(p, res.Outputs[i]); err != nil {
			return nil, fmt.Errorf("output %q: %w", name, err)
		}
		files[name] = p
	}
	return files, nil
}

// fileName makes an output name safe as a file name: letters, digits, '.', '-' and '_' stay,
// anything else becomes '_'; a name that would be hidden or empty gets an "output" prefix.
func fileName(name string) string {
	b := []byte(name)
	for i, ch := range b {
		ok := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-' || ch == '_'
		if !ok {
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || s[0] == '.' {
		s = "output" + s
	}
	return s
}

func summarize(res *run.Result, repeat int) runSummary {
	s := runSummary{Sessions: len(res.Latencies), Repeat: repeat}
	var later []time.Duration
	for _, l := range res.Latencies {
		if len(l) > 0 {
			s.FirstMs = max(s.FirstMs, ms(l[0]))
			later = append(later, l[1:]...)
		}
	}
	var sum time.Duration
	for _, d := range later {
		sum += d
		s.MaxMs = max(s.MaxMs, ms(d))
	}
	if len(later) > 0 {
		s.MeanMs = ms(sum) / float64(len(later))
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
