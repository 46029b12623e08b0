package planner

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Algorithm names a solver.
type Algorithm string

// The solvers. All are deterministic: the same problem and options give the same plan, except
// that a search cut short by its time limit (not its node limit) stops where the clock says.
const (
	// Exact runs the heuristics, then an anytime search in the style of Google's MiniMalloc
	// (canonical solutions, dominance and section inference, dynamic decomposition) that looks
	// for a plan within the capacity, or, without a capacity, tightens the peak towards the
	// lower bound. It is the default.
	Exact Algorithm = "exact"
	// Best runs every heuristic below and keeps the plan with the lowest peak.
	Best Algorithm = "best"
	// GreedyBySize is TensorFlow Lite's greedy planner: largest buffer first, lowest gap that fits.
	GreedyBySize Algorithm = "greedy-by-size"
	// ExecOrderBestFit is onnxruntime's MemPatternPlanner: buffers in execution order, each in
	// the tightest gap among the live blocks and the room below the arena's current size.
	ExecOrderBestFit Algorithm = "exec-order-best-fit"
	// BestFitBySize, BestFitByArea and BestFitByLifetime are XLA's global decreasing best fit
	// with buffers ordered by size, by size x lifetime, or by lifetime (largest first).
	BestFitBySize     Algorithm = "best-fit-size"
	BestFitByArea     Algorithm = "best-fit-area"
	BestFitByLifetime Algorithm = "best-fit-lifetime"
)

// Algorithms lists every solver Solve accepts, the default first.
func Algorithms() []Algorithm {
	out := []Algorithm{Exact, Best}
	for _, h := range heuristics {
		out = append(out, h.name)
	}
	return out
}

// DefaultTimeLimit bounds the exact search when Options.TimeLimit is zero.
const DefaultTimeLimit = 5 * time.Second

// Options tune Solve. The zero value runs the exact search for up to DefaultTimeLimit.
// Options is a plain value.
type Options struct {
	Algorithm Algorithm     // "" means Exact
	TimeLimit time.Duration // wall-clock budget of the exact search; 0 means DefaultTimeLimit
	// StepLimit bounds the exact search by work instead of time: the number of steps (search nodes
	// visited plus placements tried, each of the order of a microsecond) it may take in all. 0 means
	// no limit. Unlike TimeLimit, it gives the same answer on every machine.
	StepLimit int64
}

// Plan places every buffer of a Problem. Offsets[i] belongs to Problem.Buffers[i]. A Plan is a
// plain value; Solve returns a fresh Offsets slice each time, so callers may keep or modify it.
type Plan struct {
	Offsets    []int64
	Peak       int64 // the arena size the plan needs: max over buffers of offset + size
	LowerBound int64 // LowerBound of the problem: no plan needs less
	// Optimal reports that no plan with a smaller peak exists: the peak meets the lower bound, or
	// the exact search proved every smaller peak infeasible.
	Optimal   bool
	Algorithm Algorithm     // the solver whose placement this is
	Elapsed   time.Duration // wall time Solve took
	Steps     int64         // work the exact search did (see Options.StepLimit); 0 for heuristics
}

// ErrInfeasible is matched (errors.Is) by a NoFitError when no plan can fit the capacity.
var ErrInfeasible = errors.New("planner: no plan fits the capacity")

// ErrNoPlanFound is matched by a NoFitError when the solver gave up before finding a plan that
// fits or proving that none does.
var ErrNoPlanFound = errors.New("planner: no plan within the capacity found within the limits")

// NoFitError says that Solve returned no plan within Problem.Capacity.
type NoFitError struct {
	Capacity   int64
	LowerBound int64
	Proven     bool // true: no plan fits (the lower bound or an exhaustive search says so)
	Best       Plan // the best plan found, whose peak exceeds Capacity; Offsets is nil if none
	// Cause is the caller's context error when the search stopped because ctx was done.
	Cause error
}

// Unwrap returns Cause, so that errors.Is(err, context.Canceled) tells a cancelled search.
func (e *NoFitError) Unwrap() error { return e.Cause }

func (e *NoFitError) Error() string {
	if e.Proven {
		return fmt.Sprintf("planner: no plan fits in %d bytes: it needs at least %d (lower bound %d); raise the capacity",
			e.Capacity, max(e.LowerBound, e.Capacity+1), e.LowerBound)
	}
	return fmt.Sprintf("planner: no plan within %d bytes found in the time allowed (best peak %d, lower bound %d); "+
		"raise the capacity or the time limit", e.Capacity, e.Best.Peak, e.LowerBound)
}

// Is matches ErrInfeasible when the error is proven and ErrNoPlanFound otherwise.
func (e *NoFitError) Is(target error) bool {
	return (target == ErrInfeasible && e.Proven) || (target == ErrNoPlanFound && !e.Proven)
}

// Solve places the buffers of p with the chosen algorithm.
//
// With p.Capacity > 0 it returns a plan whose peak is at most the capacity, or a *NoFitError
// that says whether no such plan exists (proven) or none was found within the limits. With
// p.Capacity == 0 it returns the plan with the lowest peak it finds; the exact algorithm keeps
// tightening the peak towards the lower bound until it proves optimality or runs out of time.
// Cancelling ctx stops the search as its limits would. Invalid problems give a *ProblemError.
// Buffers that take another's bytes in place (Buffer.InPlace) get its offset.
func Solve(ctx context.Context, p Problem, opts Options) (Plan, error) {
	start := time.Now()
	if err := p.Validate(); err != nil {
		return Plan{}, err
	}
	if p.hasInPlace() {
		q, of := mergeInPlace(p)
		plan, err := Solve(ctx, q, opts)
		plan.Offsets = expandOffsets(plan.Offsets, of)
		var nf *NoFitError
		if errors.As(err, &nf) {
			nf.Best.Offsets = expandOffsets(nf.Best.Offsets, of)
		}
		plan.Elapsed = time.Since(start)
		return plan, err
	}
	alg := opts.Algorithm
	if alg == "" {
		alg = Exact
	}
	_, isHeuristic := heuristicByName(alg)
	if !isHeuristic && alg != Best && alg != Exact {
		return Plan{}, fmt.Errorf("planner: unknown algorithm %q (want one of %v)", alg, Algorithms())
	}
	sec := sweepSections(p.Buffers, func(i int) bool { return p.Buffers[i].Size > 0 }, false)
	lb := lowerBound(p, sec)
	var plan Plan
	if isHeuristic {
		plan = runHeuristic(p, sec, alg)
	} else {
		plan = bestHeuristic(p, sec, lb)
	}
	plan.LowerBound = lb
	plan.Optimal = plan.Peak == lb
	var err error
	if alg == Exact && !plan.Optimal && (p.Capacity == 0 || plan.Peak > p.Capacity) {
		limit := opts.TimeLimit
		if limit <= 0 {
			limit = DefaultTimeLimit
		}
		ctx, cancel := context.WithDeadline(ctx, start.Add(limit))
		defer cancel()
		plan, err = exactSolve(ctx, p, plan, opts.StepLimit)
	}
	plan.Elapsed = time.Since(start)
	if err == nil && p.Capacity > 0 && plan.Peak > p.Capacity {
		err = &NoFitError{Capacity: p.Capacity, LowerBound: lb, Proven: p.Capacity < lb, Best: plan}
	}
	var nf *NoFitError
	if errors.As(err, &nf) {
		nf.Best.Elapsed = plan.Elapsed
		if !nf.Proven {
			nf.Cause = ctx.Err()
		}
		return Plan{}, err
	}
	return plan, err
}

func runHeuristic(p Problem, sec sections, alg Algorithm) Plan {
	h, _ := heuristicByName(alg)
	off, peak := h.run(p, sec)
	return Plan{Offsets: off, Peak: peak, Algorithm: alg}
}

// bestHeuristic runs the heuristics and keeps the lowest peak; ties go to the earlier one. It
// stops at the first that meets the lower bound lb, as none can do better.
func bestHeuristic(p Problem, sec sections, lb int64) Plan {
	var best Plan
	for i, h := range heuristics {
		off, peak := h.run(p, sec)
		if i == 0 || peak < best.Peak {
			best = Plan{Offsets: off, Peak: peak, Algorithm: h.name}
		}
		if peak <= lb {
			break
		}
	}
	return best
}
