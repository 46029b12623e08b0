package planner

import (
	"cmp"
	"math/bits"
	"slices"
)

// sections splits the lifetimes of a set of buffers into runs of steps, which MiniMalloc calls
// sections, each with the set of buffers live throughout it. Two buffers overlap in time exactly
// when they share a section, and every buffer spans a contiguous run of sections, so per-step
// questions ("how full is the arena at this step") need only be asked once per section.
//
// Coarse sections are the maximal cliques: the live sets just before some buffer ends, where a
// buffer has started since the last such set. Every live set is a subset of one of them, which
// is all a lower bound or a neighbour search needs. Fine sections add every live set just before
// some buffer ends, as MiniMalloc does: a live set that is a subset of another can still be the
// one that shows a wasted gap (a buffer below that has ended, those above unable to come down).
type sections struct {
	lo, hi  []int32   // per buffer: its sections are [lo, hi); lo == hi == -1 when left out
	members [][]int32 // per section: the buffers live in it, in increasing index order
}

// sweepSections computes the sections of the buffers for which keep returns true.
func sweepSections(bufs []Buffer, keep func(i int) bool, fine bool) sections {
	type event struct {
		t   int
		end bool
		i   int32
	}
	events := make([]event, 0, 2*len(bufs))
	sec := sections{lo: make([]int32, len(bufs)), hi: make([]int32, len(bufs))}
	for i, b := range bufs {
		sec.lo[i], sec.hi[i] = -1, -1
		if keep(i) {
			events = append(events, event{b.Start, false, int32(i)}, event{b.End, true, int32(i)})
		}
	}
	// Ends sort before starts at the same step: lifetimes are half-open.
	slices.SortFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.t, b.t); c != 0 {
			return c
		}
		if a.end != b.end {
			if a.end {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.i, b.i)
	})
	live := make([]uint64, (len(bufs)+63)/64) // a bitset, so that live sets come out in index order
	grown := false                            // a buffer started since the last section was recorded
	for k, e := range events {
		if !e.end {
			live[e.i/64] |= 1 << (e.i % 64)
			sec.lo[e.i] = int32(len(sec.members))
			grown = true
			continue
		}
		// Record the live set before it shrinks. (An end is never the first event.)
		if grown || fine && !(events[k-1].end && events[k-1].t == e.t) {
			var m []int32
			for w, x := range live {
				for ; x != 0; x &= x - 1 {
					m = append(m, int32(w*64+bits.TrailingZeros64(x)))
				}
			}
			sec.members = append(sec.members, m)
			grown = false
		}
		live[e.i/64] &^= 1 << (e.i % 64)
		sec.hi[e.i] = int32(len(sec.members))
	}
	return sec
}
