package planner

import (
	"cmp"
	"slices"
)

// Room is the largest range of plan's arena that buffer i of p could hold instead of its own
// placement: bytes no other buffer holds at any step of i's lifetime, below plan.Peak, starting
// at a multiple of i's alignment. It returns the range's offset and size; size is 0 when there
// is none, which cannot happen where i itself has a size (its own placement is such a range).
//
// Invariant: moving buffer i to offset and giving it any size up to size leaves the plan valid
// (Verify) with the same peak. This is how a kernel whose workspace is a choice (a cap it may
// use any part of, not a need) takes the bytes a plan leaves free at its step and no more: the
// engine plans it at its smallest and then grows it into its Room.
//
// Buffer i must be one that no other takes in place and that takes none, as a workspace is; for
// any other Room returns i's own placement.
func Room(p Problem, plan Plan, i int) (offset, size int64) {
	b := p.Buffers[i]
	if b.InPlace != "" {
		return plan.Offsets[i], b.Size
	}
	type span struct{ lo, hi int64 }
	var used []span
	for j, o := range p.Buffers {
		if j == i || o.Size == 0 || o.End <= b.Start || o.Start >= b.End {
			continue
		}
		if o.InPlace == b.ID {
			return plan.Offsets[i], b.Size
		}
		used = append(used, span{plan.Offsets[j], plan.Offsets[j] + o.Size})
	}
	slices.SortFunc(used, func(x, y span) int { return cmp.Compare(x.lo, y.lo) })
	align := b.Align
	if align == 0 {
		align = DefaultAlign
	}
	var at int64 // the lowest byte not yet known to be held
	consider := func(hi int64) {
		lo := alignUp(at, align)
		if hi-lo > size {
			offset, size = lo, hi-lo
		}
	}
	for _, u := range used {
		if u.lo > at {
			consider(u.lo)
		}
		at = max(at, u.hi)
	}
	if plan.Peak > at {
		consider(plan.Peak)
	}
	return offset, size
}
