package app

import "context"

// largest returns the largest v in [lo, hi] for which fits(v) holds, assuming fits is
// monotone: true up to some value, false beyond. It probes lo first (ok is false when even lo
// does not fit), then doubles until a value does not fit or hi is reached, then bisects the
// bracket: about 2*log2(answer) probes, whatever hi is. progress, if not nil, is told the
// bracket after every probe: good fits, and bad (0 until known) does not.
func largest(ctx context.Context, lo, hi int64, fits func(int64) (bool, error), progress func(good, bad int64)) (v int64, ok bool, err error) {
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
			next = max(2*good, good+1)
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
