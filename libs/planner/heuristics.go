package planner

import (
	"cmp"
	"math/bits"
	"slices"
)

// The heuristics below place buffers one at a time, in an order of their own, each at a position
// chosen among the free gaps left by the already-placed buffers whose lifetimes overlap its own.
// They differ in the order and in which gap they choose; none of them moves a buffer once placed.

// fitRule picks a position for a buffer among the gaps between occupied byte ranges.
type fitRule uint8

const (
	firstFit fitRule = iota // the lowest gap that fits (TFLite's greedy planner)
	bestFit                 // the tightest gap that fits, lowest on ties (XLA, onnxruntime)
)

// span is an occupied byte range [lo, hi).
type span struct{ lo, hi int64 }

// placer keeps the already-placed buffers of one heuristic run and finds gaps among them.
// The per-buffer work is proportional to the buffers live alongside it, found through the
// sections, so a run costs about sum(k log k) for k overlapping buffers, not n^2.
type placer struct {
	bufs   []Buffer
	sec    sections
	off    []int64 // -1 until placed
	seen   []int32 // stamp per buffer, to collect each overlapping buffer once
	stamp  int32
	spans  []span
	peak   int64 // the largest end of any placed buffer
	rule   fitRule
	toPeak bool // also count the room between the overlapping buffers and the peak as a gap (onnxruntime)
}

func newPlacer(p Problem, sec sections, rule fitRule, toPeak bool) *placer {
	pl := &placer{bufs: p.Buffers, sec: sec, rule: rule, toPeak: toPeak,
		off: make([]int64, len(p.Buffers)), seen: make([]int32, len(p.Buffers))}
	for i := range pl.off {
		pl.off[i] = -1
	}
	return pl
}

// place puts buffer i at the position its rule picks and returns that offset.
func (pl *placer) place(i int) int64 {
	b := pl.bufs[i]
	if b.Size == 0 {
		pl.off[i] = 0
		return 0
	}
	pl.stamp++
	pl.spans = pl.spans[:0]
	for s := pl.sec.lo[i]; s < pl.sec.hi[i]; s++ {
		for _, j := range pl.sec.members[s] {
			if pl.seen[j] != pl.stamp && pl.off[j] >= 0 {
				pl.seen[j] = pl.stamp
				pl.spans = append(pl.spans, span{pl.off[j], pl.off[j] + pl.bufs[j].Size})
			}
		}
	}
	slices.SortFunc(pl.spans, func(x, y span) int { return cmp.Compare(x.lo, y.lo) })
	a := b.Alignment()
	at, waste := int64(-1), int64(-1)
	cur := int64(0) // the lowest aligned position above every span seen so far
	for _, sp := range pl.spans {
		if gap := sp.lo - cur; gap >= b.Size {
			if pl.rule == firstFit {
				at = cur
				break
			}
			if w := gap - b.Size; at < 0 || w < waste {
				at, waste = cur, w
			}
		}
		cur = max(cur, alignUp(sp.hi, a))
	}
	if pl.rule == bestFit && pl.toPeak && pl.peak-cur >= b.Size {
		// onnxruntime also counts the room between the overlapping buffers and the arena's
		// current size as a gap, competing with the others on waste.
		if w := pl.peak - cur - b.Size; at < 0 || w < waste {
			at = cur
		}
	}
	if at < 0 { // no gap fits: go above every overlapping buffer
		at = cur
	}
	pl.off[i] = at
	pl.peak = max(pl.peak, at+b.Size)
	return at
}

// heuristic is one ordering plus one fit rule.
type heuristic struct {
	name   Algorithm
	rule   fitRule
	toPeak bool
	less   func(a, b Buffer) int // placement order; ties go to the lower index
}

var heuristics = []heuristic{
	// TensorFlow Lite's greedy memory planner: largest first, each in the lowest gap that fits.
	{GreedyBySize, firstFit, false, func(a, b Buffer) int { return cmp.Compare(b.Size, a.Size) }},
	// onnxruntime's MemPatternPlanner: execution order, best fit among the gaps between live
	// blocks and the room up to the arena's current size.
	{ExecOrderBestFit, bestFit, true, func(a, b Buffer) int { return cmp.Compare(a.Start, b.Start) }},
	// XLA's GlobalDecreasingSizeBestFitHeap, with three orders.
	{BestFitBySize, bestFit, false, func(a, b Buffer) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(b.End-b.Start, a.End-a.Start))
	}},
	{BestFitByArea, bestFit, false, func(a, b Buffer) int {
		return cmp.Or(compareArea(b, a), cmp.Compare(b.Size, a.Size))
	}},
	{BestFitByLifetime, bestFit, false, func(a, b Buffer) int {
		return cmp.Or(cmp.Compare(b.End-b.Start, a.End-a.Start), cmp.Compare(b.Size, a.Size))
	}},
}

// run applies the heuristic to a valid problem and returns the offsets and peak.
func (h heuristic) run(p Problem, sec sections) ([]int64, int64) {
	order := make([]int, len(p.Buffers))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return h.less(p.Buffers[a], p.Buffers[b]) })
	pl := newPlacer(p, sec, h.rule, h.toPeak)
	for _, i := range order {
		pl.place(i)
	}
	return pl.off, pl.peak
}

func heuristicByName(a Algorithm) (heuristic, bool) {
	for _, h := range heuristics {
		if h.name == a {
			return h, true
		}
	}
	return heuristic{}, false
}

// compareArea compares size x lifetime of two buffers without overflow.
func compareArea(a, b Buffer) int {
	ah, al := bits.Mul64(uint64(a.Size), uint64(a.End-a.Start))
	bh, bl := bits.Mul64(uint64(b.Size), uint64(b.End-b.Start))
	return cmp.Or(cmp.Compare(ah, bh), cmp.Compare(al, bl))
}
