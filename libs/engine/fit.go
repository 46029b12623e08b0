package engine

import (
	"context"
	"maps"

	"carve.dev/libs/graph"
)

// Largest returns the largest v in [lo, hi] for which fits(v) holds, assuming fits is
// monotone: true up to some value, false beyond. It probes lo first (ok is false when even lo
// does not fit), then doubles until a value does not fit or hi is reached, then bisects the
// bracket: about 2*log2(answer) probes, whatever hi is. It stops at the first error of fits
// and, before each probe, when ctx is done. progress, if not nil, is told the bracket after
// every probe: good fits, and bad (0 until known) does not. lo must be at least 0.
func Largest(ctx context.Context, lo, hi int64, fits func(int64) (bool, error), progress func(good, bad int64)) (v int64, ok bool, err error) {
	probe := func(x int64) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		return fits(x)
	}
	if ok, err := probe(lo); err != nil || !ok {
		return 0, false, err
	}
	good, bad := lo, int64(0) // invariant: fits(good); bad == 0 or !fits(bad), good < bad
	report := func() {
		if progress != nil {
			progress(good, bad)
		}
	}
	report()
	for bad == 0 {
		if good == hi {
			return good, true, nil
		}
		next := hi
		if good <= hi/2 {
			next = max(2*good, good+1) // no overflow: good <= hi/2
		}
		f, err := probe(next)
		if err != nil {
			return 0, false, err
		}
		if f {
			good = next
		} else {
			bad = next
		}
		report()
	}
	for bad-good > 1 {
		mid := good + (bad-good)/2
		f, err := probe(mid)
		if err != nil {
			return 0, false, err
		}
		if f {
			good = mid
		} else {
			bad = mid
		}
		report()
	}
	return good, true, nil
}

// LargestFitting finds the largest value v of dim such that the envelope env, with dim ranging
// over [lo, v], fits: fits(PlanEnvelope(...)) holds. lo is env[dim].Lo; v is searched up to
// env[dim].Hi, or, for an open dim without a maximum, up to MaxDimValue, with Largest. It
// returns -1 when even v = lo does not fit, and on errors. The search assumes that widening the
// range never shrinks the plan, which holds because the envelope's arena is a maximum over its
// bindings. progress, if not nil, is called after each probe with the bracket [good, bad) so
// far; bad is -1 until a value that does not fit is known.
func LargestFitting(ctx context.Context, m *graph.Model, env Envelope, dim string, fits func(*EnvelopePlan) bool,
	opts Options, progress func(good, bad int64)) (int64, error) {
	r, ok := env[dim]
	if !ok {
		return 0, &EnvelopeError{Problem: UnknownDim, Dims: []string{dim}, Known: env.Names()}
	}
	lo, hi := r.Lo, r.Hi
	if r.Open {
		lo = 1
		if hi == 0 {
			hi = MaxDimValue
		}
	}
	probe := func(v int64) (bool, error) {
		e := maps.Clone(env)
		e[dim] = Range{Lo: lo, Hi: v}
		p, err := PlanEnvelope(ctx, m, e, opts)
		if err != nil {
			return false, err
		}
		return fits(p), nil
	}
	var report func(good, bad int64)
	if progress != nil {
		report = func(good, bad int64) {
			if bad == 0 { // Largest's "not known yet": a known bad is above good >= lo >= 0
				bad = -1
			}
			progress(good, bad)
		}
	}
	v, ok, err := Largest(ctx, lo, hi, probe, report)
	if err != nil || !ok {
		return -1, err
	}
	return v, nil
}
