package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/planner"
)

func solveCommand(s Streams) *cli.Command {
	algs := make([]string, 0, len(planner.Algorithms()))
	for _, a := range planner.Algorithms() {
		algs = append(algs, string(a))
	}
	return &cli.Command{
		Name:      "solve",
		Usage:     "place the buffers of a MiniMalloc CSV file in one arena",
		UsageText: "estimator solve FILE.csv [--capacity SIZE] [--time-limit 5s] [--algorithm exact] [--format table|json] [-o out.csv]",
		Description: "Reads buffers in MiniMalloc's CSV format (id,lower,upper,size: size bytes live over steps\n" +
			"[lower, upper); FILE - reads stdin), places them with carve's planner and writes the same rows with\n" +
			"an offset column to stdout or -o. The summary (peak, lower bound, proven optimal or not, algorithm,\n" +
			"time) goes to stderr, or to stdout as JSON with --format json (then -o is required).\n" +
			"Exits 3 when no placement within --capacity exists or none was found in time.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "capacity", Usage: "the arena `SIZE` to fit in, e.g. 1MiB or bytes (default: unbounded, minimise the peak)"},
			&cli.DurationFlag{Name: "time-limit", Value: planner.DefaultTimeLimit, Usage: "wall-clock `LIMIT` of the exact search"},
			&cli.StringFlag{Name: "algorithm", Value: string(planner.Exact), Usage: "`NAME` of the solver: " + strings.Join(algs, ", ")},
			&cli.StringFlag{Name: "format", Value: "table", Usage: "summary `FORMAT`: table (on stderr) or json (on stdout)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the placed rows to `FILE` instead of stdout"},
		},
		Action: func(c *cli.Context) error { return runSolve(c, s) },
	}
}

// solveSummary is the JSON form of solve's summary; README.md documents it.
type solveSummary struct {
	File            string  `json:"file"`
	Output          string  `json:"output"`
	Buffers         int     `json:"buffers"`
	PeakBytes       int64   `json:"peak_bytes"`
	LowerBoundBytes int64   `json:"lower_bound_bytes"`
	CapacityBytes   int64   `json:"capacity_bytes"` // 0: unbounded
	Optimal         bool    `json:"optimal"`
	Algorithm       string  `json:"algorithm"` // as asked with --algorithm
	PlacedBy        string  `json:"placed_by"` // the solver whose placement won (exact starts from the heuristics)
	Seconds         float64 `json:"seconds"`
}

func runSolve(c *cli.Context, s Streams) error {
	if c.NArg() != 1 {
		return usagef("estimator solve takes one CSV file (or - for stdin), got %d arguments", c.NArg())
	}
	file := c.Args().First()
	form, err := format(c)
	if err != nil {
		return err
	}
	out := c.String("output")
	if form == "json" && out == "" {
		return usagef("--format json writes the summary to stdout: give -o FILE for the placed rows")
	}
	alg := planner.Algorithm(c.String("algorithm"))
	known := false
	for _, a := range planner.Algorithms() {
		known = known || a == alg
	}
	if !known {
		return usagef("unknown --algorithm %q: want one of %s", alg, strings.Join(algNames(), ", "))
	}
	limit := c.Duration("time-limit")
	if limit <= 0 {
		return usagef("--time-limit %v: want a positive duration such as 5s", limit)
	}
	var capacity int64
	if c.IsSet("capacity") {
		if capacity, err = bytesize.Parse(c.String("capacity")); err != nil {
			return fmt.Errorf("--capacity: %w", err)
		}
		if capacity == 0 {
			return usagef("--capacity 0: nothing fits in 0 bytes; leave --capacity out to minimise the peak")
		}
	}

	if out != "" {
		if err := checkOutput(out); err != nil {
			return err
		}
	}
	prob, err := readProblem(file, s.Stdin)
	if err != nil {
		return err
	}
	prob.Capacity = capacity
	plan, err := planner.Solve(c.Context, prob, planner.Options{Algorithm: alg, TimeLimit: limit})
	if err != nil {
		return err
	}
	if err := planner.Verify(prob, plan); err != nil {
		return fmt.Errorf("the planner produced an invalid plan (a bug; please report it): %w", err)
	}

	var rows bytes.Buffer
	if err := planner.WriteCSV(&rows, prob, plan); err != nil {
		return err
	}
	if out == "" {
		if _, err := s.Stdout.Write(rows.Bytes()); err != nil {
			return err
		}
	} else if err := writeOutput(out, func(w io.Writer) error { _, err := w.Write(rows.Bytes()); return err }); err != nil {
		return err
	}

	sum := planner.NewSummary(prob, plan)
	if form == "json" {
		return writeJSON(s.Stdout, solveSummary{
			File: file, Output: out, Buffers: sum.Buffers, PeakBytes: sum.Peak, LowerBoundBytes: sum.LowerBound,
			CapacityBytes: sum.Capacity, Optimal: sum.Optimal, Algorithm: string(alg), PlacedBy: string(sum.Algorithm), Seconds: sum.Seconds,
		})
	}
	_, err = fmt.Fprintf(s.Stderr, "%s\n", solveLine(sum, alg))
	return err
}

// atPath reports a failed atomic write of path under path's name: renameio's errors name the
// temporary file beside it.
func atPath(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: "write", Path: path, Err: pe.Err}
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// maxCSVBytes bounds the CSV that solve reads: MiniMalloc's largest benchmarks are a few
// megabytes, and a stream that never ends (stdin from /dev/zero) must not exhaust memory.
var maxCSVBytes int64 = 256 << 20 // a variable for tests

// errNotRegular: solve was given a directory, device, FIFO or socket as its CSV file.
var errNotRegular = errors.New("not a regular file")

// readProblem reads the CSV file, or stdin for "-": a file must be regular, and at most
// maxCSVBytes are read from either.
func readProblem(file string, stdin io.Reader) (planner.Problem, error) {
	r := stdin
	if file != "-" {
		fi, err := os.Stat(file)
		if err != nil {
			return planner.Problem{}, err
		}
		if !fi.Mode().IsRegular() {
			return planner.Problem{}, &fs.PathError{Op: "read", Path: file, Err: errNotRegular}
		}
		f, err := os.Open(file)
		if err != nil {
			return planner.Problem{}, err
		}
		defer f.Close()
		r = f
	}
	lr := &io.LimitedReader{R: r, N: maxCSVBytes + 1}
	prob, err := planner.ReadCSV(lr)
	if lr.N == 0 {
		return planner.Problem{}, fmt.Errorf("%s holds more than %s of CSV: %w", file, bytesize.Format(maxCSVBytes), errCSVTooLarge)
	}
	if err != nil {
		return planner.Problem{}, fmt.Errorf("%s: %w", file, err)
	}
	return prob, nil
}

// errCSVTooLarge: the CSV given to solve is larger than maxCSVBytes.
var errCSVTooLarge = errors.New("too large")

// solveLine is the human summary on stderr.
func solveLine(s planner.Summary, asked planner.Algorithm) string {
	proven := "not proven optimal"
	if s.Optimal {
		proven = "proven optimal"
	}
	over := ""
	if s.LowerBound > 0 && s.Peak > s.LowerBound {
		over = fmt.Sprintf(", +%.2f%%", 100*float64(s.Peak-s.LowerBound)/float64(s.LowerBound))
	}
	alg := string(asked)
	if s.Algorithm != asked {
		alg = fmt.Sprintf("%s (placement by %s)", asked, s.Algorithm)
	}
	return fmt.Sprintf("peak %s (%d bytes), lower bound %d bytes%s, %s; %d buffers, %s, %v",
		bytesize.Format(s.Peak), s.Peak, s.LowerBound, over, proven, s.Buffers, alg,
		time.Duration(s.Seconds*float64(time.Second)).Round(time.Microsecond))
}

func algNames() []string {
	var out []string
	for _, a := range planner.Algorithms() {
		out = append(out, string(a))
	}
	return out
}
