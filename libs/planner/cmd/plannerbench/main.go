// Command plannerbench prints how the planner's solvers do on the MiniMalloc benchmark
// instances, as a Markdown table: per instance and solver, the peak reached, its distance from
// the lower bound, whether it is proven optimal, and the time taken next to MiniMalloc's.
//
// Run it from libs/planner on a quiet machine:
//
//	go run ./cmd/plannerbench
//	go run ./cmd/plannerbench -only D,J -minimise 30s
//
// Rows: every heuristic (no capacity); "exact@best": the exact search asked for the best known
// peak as capacity (the time to reach it); "exact": the exact search minimising the peak within
// MiniMalloc's time for the instance (or -minimise).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"carve.dev/libs/planner"
	"carve.dev/libs/planner/internal/benchset"
)

func main() {
	dir := flag.String("dir", filepath.Join("testdata", "minimalloc"), "folder with the instances' CSV files")
	only := flag.String("only", "", "comma-separated instance names (default: all)")
	minimise := flag.Duration("minimise", 0, "time limit of the minimising exact search (default: MiniMalloc's time per instance)")
	capLimit := flag.Duration("limit", time.Minute, "time limit of the exact search at the best known capacity")
	heur := flag.Bool("heuristics", true, "include a row per heuristic")
	flag.Parse()
	if err := run(os.Stdout, *dir, *only, *minimise, *capLimit, *heur); err != nil {
		fmt.Fprintln(os.Stderr, "plannerbench:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, dir, only string, minimise, capLimit time.Duration, heur bool) error {
	names := map[string]bool{}
	for n := range strings.SplitSeq(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names[strings.ToUpper(n)] = true
		}
	}
	fmt.Fprintln(w, "| instance | buffers | lower bound | best known | solver | peak | % over LB | proven | seconds | MiniMalloc s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, in := range benchset.Instances {
		if len(names) > 0 && !names[in.Name] {
			continue
		}
		p, err := read(filepath.Join(dir, in.File))
		if err != nil {
			return err
		}
		row := func(solver string, plan planner.Plan, err error) {
			peak, over, proven := "-", "-", "no"
			var nf *planner.NoFitError
			switch {
			case errors.As(err, &nf):
				peak = "not found"
				if nf.Proven {
					peak = "infeasible"
				}
			case err != nil:
				peak = "error: " + err.Error()
			default:
				peak = fmt.Sprint(plan.Peak)
				over = fmt.Sprintf("%+.2f%%", 100*float64(plan.Peak-plan.LowerBound)/float64(plan.LowerBound))
				if plan.Optimal {
					proven = "yes"
				}
			}
			fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s | %s | %.3f | %.2f |\n",
				in.Name, len(p.Buffers), in.LowerBound, in.BestKnown, solver, peak, over, proven,
				plan.Elapsed.Seconds(), in.MiniMalloc)
		}
		ctx := context.Background()
		if heur {
			for _, alg := range slices.Concat(planner.Algorithms()[2:], []planner.Algorithm{planner.Best}) {
				plan, err := planner.Solve(ctx, p, planner.Options{Algorithm: alg})
				row(string(alg), plan, check(p, plan, err))
			}
		}
		q := p
		q.Capacity = in.BestKnown
		start := time.Now()
		plan, err := planner.Solve(ctx, q, planner.Options{TimeLimit: capLimit})
		plan.Elapsed = time.Since(start)
		row("exact@best", plan, check(q, plan, err))

		limit := minimise
		if limit == 0 {
			limit = time.Duration(in.MiniMalloc * float64(time.Second))
		}
		plan, err = planner.Solve(ctx, p, planner.Options{TimeLimit: limit})
		row(fmt.Sprintf("exact (%.2fs)", limit.Seconds()), plan, check(p, plan, err))
	}
	return nil
}

// check verifies every plan before it is reported.
func check(p planner.Problem, plan planner.Plan, err error) error {
	if err != nil {
		return err
	}
	return planner.Verify(p, plan)
}

func read(path string) (planner.Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return planner.Problem{}, err
	}
	defer f.Close()
	p, err := planner.ReadCSV(f)
	if err != nil {
		return planner.Problem{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
