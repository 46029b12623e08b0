package planner

// LowerBound returns a peak that no plan for p can beat: the largest number of bytes live at any
// one step, with alignment accounted for. Within one step, all offsets are multiples of g, the
// smallest alignment among the live buffers, so every live buffer but the topmost one takes its
// size rounded up to g; the bound charges each buffer its rounded size and forgives the largest
// rounding once (the topmost buffer's). Zero-size buffers take no space, and a buffer that takes
// another's bytes in place takes none of its own. p should be valid.
func LowerBound(p Problem) int64 {
	if p.hasInPlace() {
		p, _ = mergeInPlace(p)
	}
	return lowerBound(p, sweepSections(p.Buffers, func(i int) bool { return p.Buffers[i].Size > 0 }, false))
}

// lowerBound is LowerBound with the problem's coarse sections at hand.
func lowerBound(p Problem, sec sections) int64 {
	var best int64
	for _, m := range sec.members {
		best = max(best, sectionBound(p.Buffers, m))
	}
	return best
}

// sectionBound is the alignment-aware bound for buffers that are all live at one step.
func sectionBound(bufs []Buffer, live []int32) int64 {
	if len(live) == 0 {
		return 0
	}
	g := bufs[live[0]].Alignment()
	for _, i := range live {
		g = min(g, bufs[i].Alignment())
	}
	var sum, slack int64
	for _, i := range live {
		s := bufs[i].Size
		r := alignUp(s, g)
		sum += r
		slack = max(slack, r-s)
	}
	return sum - slack
}
