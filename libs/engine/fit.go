package engine

import (
	"context"
	"fmt"

	"carve.dev/libs/graph"
)

// LargestFitting finds the largest value v of dim such that the envelope env, with dim ranging
// over [lo, v], fits: fits(PlanEnvelope(...)) holds. lo is env[dim].Lo; v is searched up to
// env[dim].Hi, or, for an open dim without a maximum, up to MaxDimValue by doubling. It returns
// -1 when even v = lo does not fit. The search assumes that widening the range never shrinks
// the plan, which holds because the envelope's arena is a maximum over its bindings.
// progress, if not nil, is called after each probe with the bracket [good, bad) so far.
func LargestFitting(ctx context.Context, m *graph.Model, env Envelope, dim string, fits func(*EnvelopePlan) bool,
	opts Options, progress func(good, bad int64)) (int64, error) {
	r, ok := env[dim]
	if !ok {
		return 0, &EnvelopeError{fmt.Sprintf("unknown dim %q", dim)}
	}
	lo := r.Lo
	if r.Open {
		lo = 1
	}
	probe := func(v int64) (bool, error) {
		e := Envelope{}
		for k, x := range env {
			e[k] = x
		}
		e[dim] = Range{Lo: lo, Hi: v}
		p, err := PlanEnvelope(ctx, m, e, opts)
		if err != nil {
			return false, err
		}
		return fits(p), nil
	}
	ok, err := probe(lo)
	if err != nil || !ok {
		return -1, err
	}
	good, bad := lo, int64(-1) // good fits; bad (when >= 0) does not
	limit := r.Hi
	if r.Open && limit == 0 {
		limit = MaxDimValue
	}
	if !r.Open {
		limit = r.Hi
	}
	// Doubling until a value does not fit or the limit is reached.
	for bad < 0 {
		next := min(max(good*2, good+1), limit)
		if next == good {
			return good, nil
		}
		ok, err := probe(next)
		if err != nil {
			return -1, err
		}
		if ok {
			good = next
		} else {
			bad = next
		}
		if progress != nil {
			progress(good, bad)
		}
	}
	for bad-good > 1 {
		mid := good + (bad-good)/2
		ok, err := probe(mid)
		if err != nil {
			return -1, err
		}
		if ok {
			good = mid
		} else {
			bad = mid
		}
		if progress != nil {
			progress(good, bad)
		}
	}
	return good, nil
}
