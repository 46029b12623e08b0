package planner

import (
	"cmp"
	"context"
	"iter"
	"math"
	"math/bits"
	"slices"
	"time"
)

// The exact search follows the design of Google's MiniMalloc (Moffitt, ASPLOS 2023); the code is
// our own. It decides whether the buffers fit under a capacity by a depth-first search over
// canonical solutions:
//
//   - Canonical order: buffers are placed in non-decreasing (offset, preorder rank) order, each at
//     its lowest offset above the already-placed buffers it overlaps in time (minOff). Any plan
//     can be turned into one of these by letting every buffer fall as low as it goes, so the
//     search misses no plan, yet tries each shape once.
//   - Dominance: a buffer may not be placed at or above the top that another unplaced buffer
//     would have at its minOff. Every later placement would sit above that gap, so the other
//     buffer could always be dropped into it: such branches only repeat others.
//   - Section inference: within each section (a set of buffers all live at one step), the unplaced
//     buffers must stack above the lowest minOff among them; if that plus their total size
//     passes the capacity, the branch is dead. Sections are MiniMalloc's: the live set before
//     every step where some buffer ends, so a gap left where a buffer below has ended is seen.
//   - Monotonic floor: offsets never decrease along the sequence, so every section's unplaced
//     bytes must also fit above the offset being placed. Most candidates fail this; it is
//     checked before any state changes.
//   - Hatless pruning: when the buffer just tried overlaps no unplaced buffer and its subtree
//     failed, no later candidate at this node can succeed.
//   - Dynamic decomposition: once every buffer that crosses a boundary between two sections is
//     placed, the two sides no longer interact, and each side is solved on its own, its buffers
//     ranked afresh by the preorder keys; a side that fails fails the branch at once, instead of
//     backtracking through the other side's choices.
//
// Three static preorders (MiniMalloc's WAT, TAW and TWA) run round robin as coroutines that
// resume where they paused (see portfolio), so one unlucky order cannot stall the search.
//
// The search state is updated incrementally and undone from a trail on backtracking; the inner
// loop allocates nothing. Sets of buffers are bitsets, so a node costs a few words per 64
// buffers plus work proportional to the neighbours of the buffer it places and the members of
// the sections whose lowest minOff it changes.

// searchStatus is the outcome of one (sub)search.
type searchStatus uint8

const (
	exhausted searchStatus = iota // every canonical placement was tried: no plan fits
	found                         // a plan that fits; its offsets are in searcher.sol
	aborted                       // the deadline or the context stopped it, or it was cancelled
	paused                        // the step limit was reached; the search can resume
)

// model is the search's view of a problem: the buffers of positive size and their sections.
type model struct {
	n       int
	words   int       // length of a bitset over the buffers
	size    []int64   // bytes
	align   []int64   // effective alignment
	width   []int64   // lifetime in steps
	area    []uint128 // size x width
	lo, hi  []int32   // section range [lo, hi)
	orig    []int32   // index into Problem.Buffers
	members [][]int32 // per section, buffers live in it
	nbrs    [][]int32 // per buffer, the buffers it overlaps in time
}

type uint128 struct{ hi, lo uint64 }

func (a uint128) cmp(b uint128) int { return cmp.Or(cmp.Compare(a.hi, b.hi), cmp.Compare(a.lo, b.lo)) }

// Preorder keys, as MiniMalloc names them: W = lifetime width, A = area (size x width),
// T = the largest total among the buffer's sections (bytes of unplaced buffers live together),
// taken afresh for every part the search decomposes into. Larger values go first.
type preorderKey uint8

const (
	keyWidth preorderKey = iota
	keyArea
	keyTotal
)

// preorders are MiniMalloc's default three: WAT, TAW and TWA.
var preorders = [][]preorderKey{
	{keyWidth, keyArea, keyTotal},
	{keyTotal, keyArea, keyWidth},
	{keyTotal, keyWidth, keyArea},
}

// newModel builds the search model for the positive-size buffers of p; sec are its sections,
// computed over those buffers.
func newModel(p Problem, sec sections) *model {
	var idx []int32
	for i, b := range p.Buffers {
		if b.Size > 0 {
			idx = append(idx, int32(i))
		}
	}
	n := len(idx)
	m := &model{
		n: n, words: (n + 63) / 64, orig: idx,
		size: make([]int64, n), align: make([]int64, n), width: make([]int64, n), area: make([]uint128, n),
		lo: make([]int32, n), hi: make([]int32, n),
		members: make([][]int32, len(sec.members)), nbrs: make([][]int32, n),
	}
	rank := make([]int32, len(p.Buffers))
	for r, i := range idx {
		rank[i] = int32(r)
		b := p.Buffers[i]
		m.size[r], m.align[r], m.lo[r], m.hi[r] = b.Size, b.Alignment(), sec.lo[i], sec.hi[i]
		m.width[r] = int64(b.End - b.Start)
		hi, lo := bits.Mul64(uint64(b.Size), uint64(m.width[r]))
		m.area[r] = uint128{hi, lo}
	}
	for s, mem := range sec.members {
		ms := make([]int32, len(mem))
		for k, i := range mem {
			ms[k] = rank[i]
		}
		m.members[s] = ms
	}
	seen := make([]int32, n)
	for i := range seen {
		seen[i] = -1
	}
	pairs := 0
	for i := 0; i < n; i++ {
		for s := m.lo[i]; s < m.hi[i]; s++ {
			for _, j := range m.members[s] {
				if int(j) != i && seen[j] != int32(i) {
					seen[j] = int32(i)
					m.nbrs[i] = append(m.nbrs[i], j)
				}
			}
		}
		if pairs += len(m.nbrs[i]); pairs > maxNeighbours {
			return nil
		}
	}
	return m
}

// maxNeighbours bounds the overlapping pairs the exact search takes on (4 bytes each); past it,
// Solve keeps the heuristics' plan. Real runs have far fewer: a 2000-buffer LLM graph about 100k.
const maxNeighbours = 1 << 24

// change is a trail entry: the old value of one slot of one of the state arrays.
type change struct {
	what int32 // which array: trailMinOff or trailSecMin
	idx  int32
	old  int64
}

const (
	trailMinOff int32 = iota
	trailSecMin
)

// part is a set of buffers that the search solves on its own: the buffers of the sections
// [lo, hi), as a bitset (placed ones included; the search masks them out).
type part struct {
	lo, hi int32
	mask   []uint64
}

type cand struct {
	off  int64
	rank int32
	i    int32
}

// searcher holds the state of one decision search: can the model fit under cap?
// It is not safe for concurrent use.
type searcher struct {
	m    *model
	keys []preorderKey
	cap  int64

	placed []uint64 // bitset of placed buffers
	off    []int64  // offset of each placed buffer
	sol    []int64  // offsets of the last plan found
	minOff []int64  // per buffer: lowest offset above the placed buffers it overlaps, aligned; MaxInt64 once placed
	total  []int64  // per section: bytes of its unplaced buffers
	secMin []int64  // per section: lowest minOff among its unplaced buffers; MaxInt64 if none
	cuts   []int32  // per boundary s|s+1: unplaced buffers live on both sides

	trail  []change
	cands  []cand   // a stack of per-node candidate lists
	masks  []uint64 // a stack of sub-partition bitsets
	dirty  []int32
	mark   []uint32 // per section: == stamp when already in dirty
	stamp  uint32
	splits []int32
	rank   []int32 // per unplaced buffer: its place in its part's preorder
	saved  []int32 // a stack of ranks overwritten by sub-parts
	tkey   []int64 // per buffer: the T key of the part being ordered
	order  []int32 // scratch for ranking a part

	// steps counts the work done: search nodes visited plus placements tried, each about a
	// microsecond; the search aborts past limit steps.
	steps, limit int64
	ctx          context.Context
	deadline     time.Time
	hasDeadline  bool
	// yield hands control back to the portfolio when the step limit is reached; it returns
	// true once the limit has been raised, false when the search is to be abandoned.
	yield func(searchStatus) bool
}

func newSearcher(m *model, keys []preorderKey) *searcher {
	nsec := len(m.members)
	s := &searcher{
		m:      m,
		keys:   keys,
		rank:   make([]int32, m.n),
		tkey:   make([]int64, m.n),
		placed: make([]uint64, m.words),
		off:    make([]int64, m.n),
		sol:    make([]int64, m.n),
		minOff: make([]int64, m.n),
		total:  make([]int64, nsec),
		secMin: make([]int64, nsec),
		cuts:   make([]int32, max(nsec-1, 0)),
		mark:   make([]uint32, nsec),
		// Room for typical depths, so that a fresh searcher does not spend its first steps
		// growing stacks.
		trail: make([]change, 0, 8*m.n),
		cands: make([]cand, 0, 4*m.n),
		masks: make([]uint64, 0, 8*m.words),
		dirty: make([]int32, 0, nsec),
		saved: make([]int32, 0, 2*m.n),
		order: make([]int32, 0, m.n),
	}
	for i := 0; i < m.n; i++ {
		for b := m.lo[i]; b+1 < m.hi[i]; b++ {
			s.cuts[b]++
		}
		for sc := m.lo[i]; sc < m.hi[i]; sc++ {
			s.total[sc] += m.size[i]
		}
	}
	return s
}

// run decides whether the model fits under capacity. Each time it has taken s.limit steps it
// pauses through s.yield (see task).
func (s *searcher) run(ctx context.Context, capacity int64) searchStatus {
	s.cap, s.steps, s.ctx = capacity, 0, ctx
	s.deadline, s.hasDeadline = ctx.Deadline()
	for sc := range s.total {
		if s.total[sc] > capacity {
			return exhausted
		}
	}
	// The sections split into independent parts wherever no buffer crosses a boundary.
	full := make([]uint64, s.m.words)
	for i := 0; i < s.m.n; i++ {
		full[i/64] |= 1 << (i % 64)
	}
	nsec := int32(len(s.m.members))
	start := int32(0)
	for b := int32(0); b < nsec; b++ {
		if b+1 < nsec && s.cuts[b] > 0 {
			continue
		}
		st := s.solvePart(start, b+1, full)
		if st != found {
			return st
		}
		start = b + 1
	}
	return found
}

// solvePart searches the unplaced buffers of within whose sections lie in [lo, hi), ranked
// afresh by the searcher's preorder keys.
func (s *searcher) solvePart(lo, hi int32, within []uint64) searchStatus {
	m := s.m
	base := len(s.masks)
	for w := 0; w < m.words; w++ {
		s.masks = append(s.masks, 0)
	}
	mask := s.masks[base : base+m.words]
	savedBase := len(s.saved)
	for w, word := range within {
		x := word &^ s.placed[w]
		for x != 0 {
			i := int32(w*64 + bits.TrailingZeros64(x))
			x &= x - 1
			if m.lo[i] >= lo && m.lo[i] < hi {
				mask[w] |= 1 << (i % 64)
				s.saved = append(s.saved, i, s.rank[i])
				var t int64
				for sc := m.lo[i]; sc < m.hi[i]; sc++ {
					t = max(t, s.total[sc])
				}
				s.tkey[i] = t
			}
		}
	}
	st := found
	if len(s.saved) > savedBase {
		// Rank the part's buffers: sort their indices (every other entry of saved) in a
		// scratch copy, then hand out ranks.
		order := s.order[:0]
		for k := savedBase; k < len(s.saved); k += 2 {
			order = append(order, s.saved[k])
		}
		slices.SortFunc(order, s.preorder)
		for r, i := range order {
			s.rank[i] = int32(r)
		}
		s.order = order[:0]
		st = s.search(part{lo, hi, mask}, 0, -1)
		for k := len(s.saved) - 2; k >= savedBase; k -= 2 {
			s.rank[s.saved[k]] = s.saved[k+1]
		}
		s.saved = s.saved[:savedBase]
	}
	s.masks = s.masks[:base]
	return st
}

// preorder compares two buffers by the searcher's keys, larger first; ties go to the buffer
// that comes first in the problem.
func (s *searcher) preorder(a, b int32) int {
	m := s.m
	for _, k := range s.keys {
		var c int
		switch k {
		case keyWidth:
			c = cmp.Compare(m.width[b], m.width[a])
		case keyArea:
			c = m.area[b].cmp(m.area[a])
		case keyTotal:
			c = cmp.Compare(s.tkey[b], s.tkey[a])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(a, b)
}

// search extends the canonical sequence in p whose last placement had offset lastOff and rank
// lastRank.
func (s *searcher) search(p part, lastOff int64, lastRank int32) searchStatus {
	s.steps++
	if s.steps > s.limit && !s.yield(paused) || s.steps&255 == 0 && s.checkStop() {
		return aborted
	}
	m := s.m
	// The dominance threshold: the lowest top any unplaced buffer could reach.
	minHeight := int64(math.MaxInt64)
	empty := true
	for w, word := range p.mask {
		x := word &^ s.placed[w]
		for x != 0 {
			i := w*64 + bits.TrailingZeros64(x)
			x &= x - 1
			empty = false
			minHeight = min(minHeight, s.minOff[i]+m.size[i])
		}
	}
	if empty {
		return found
	}
	// The monotonic floor: every later placement in p sits at the candidate's offset o or
	// above, so each section's unplaced bytes, less the candidate's own in its sections, must
	// fit above o. This rejects most candidates, so it is checked before anything changes:
	// first against the fullest section alone (free), then exactly (fitsAbove).
	peak, peakAt := int64(-1), int32(0)
	for sc := p.lo; sc < p.hi; sc++ {
		if s.total[sc] > peak {
			peak, peakAt = s.total[sc], sc
		}
	}
	// The candidates, in (offset, rank) order: canonical successors of the last placement
	// below the dominance threshold that may pass the monotonic floor.
	base := len(s.cands)
	for w, word := range p.mask {
		x := word &^ s.placed[w]
		for x != 0 {
			i := int32(w*64 + bits.TrailingZeros64(x))
			x &= x - 1
			o, r := s.minOff[i], s.rank[i]
			if o >= minHeight || o < lastOff || o == lastOff && r <= lastRank {
				continue
			}
			if need := peak; o > lastOff {
				if m.lo[i] <= peakAt && peakAt < m.hi[i] {
					need -= m.size[i]
				}
				if need > s.cap-o {
					continue
				}
			}
			s.cands = append(s.cands, cand{o, r, i})
			for k := len(s.cands) - 1; k > base && (s.cands[k-1].off > o || s.cands[k-1].off == o && s.cands[k-1].rank > r); k-- {
				s.cands[k], s.cands[k-1] = s.cands[k-1], s.cands[k]
			}
		}
	}
	st := exhausted
	for k := base; k < len(s.cands) && st == exhausted; k++ {
		c := s.cands[k]
		if room := s.cap - c.off; c.off > lastOff && peak > room && !s.fitsAbove(p, c.i, room) {
			continue
		}
		var hatless bool
		st, hatless = s.try(p, c.i, c.off)
		if hatless {
			// Nothing unplaced overlaps c.i, so nothing can change its offset or be changed
			// by it: if the search fails with c.i placed now, every later candidate would
			// fail too, for it would leave c.i stranded below the canonical order
			// (MiniMalloc's "hatless pruning").
			break
		}
	}
	s.cands = s.cands[:base]
	return st
}

// fitsAbove reports whether, with buffer i placed, every section of p has at most room bytes
// unplaced.
func (s *searcher) fitsAbove(p part, i int32, room int64) bool {
	m := s.m
	for sc := p.lo; sc < m.lo[i]; sc++ {
		if s.total[sc] > room {
			return false
		}
	}
	for sc := m.lo[i]; sc < m.hi[i]; sc++ {
		if s.total[sc]-m.size[i] > room {
			return false
		}
	}
	for sc := m.hi[i]; sc < p.hi; sc++ {
		if s.total[sc] > room {
			return false
		}
	}
	return true
}

// try places buffer i at offset o, searches on, and undoes the placement. hatless reports that
// no unplaced buffer overlaps i.
func (s *searcher) try(p part, i int32, o int64) (st searchStatus, hatless bool) {
	s.steps++
	m := s.m
	mark := len(s.trail)
	size := m.size[i]
	top := o + size
	s.placed[i/64] |= 1 << (i % 64)
	s.off[i], s.sol[i] = o, o
	s.stamp++
	s.dirty = s.dirty[:0]
	// A section's secMin can change only where a buffer that held it leaves the unplaced set or
	// rises: those sections go on the dirty list, to be recomputed and checked. A placed buffer's
	// minOff reads MaxInt64, so that a section's minimum is a plain scan of its members.
	s.minOff[i] = math.MaxInt64
	for sc := m.lo[i]; sc < m.hi[i]; sc++ {
		s.total[sc] -= size
		if o == s.secMin[sc] {
			s.mark[sc] = s.stamp
			s.dirty = append(s.dirty, sc)
		}
	}
	hatless = true
	for _, j := range m.nbrs[i] {
		old := s.minOff[j]
		if old == math.MaxInt64 { // placed
			continue
		}
		hatless = false
		v := alignUp(top, m.align[j])
		if v <= old {
			continue
		}
		s.trail = append(s.trail, change{trailMinOff, j, old})
		s.minOff[j] = v
		for sc := m.lo[j]; sc < m.hi[j]; sc++ {
			if old == s.secMin[sc] && s.mark[sc] != s.stamp {
				s.mark[sc] = s.stamp
				s.dirty = append(s.dirty, sc)
			}
		}
	}
	ok := true
	for _, sc := range s.dirty {
		lowest := int64(math.MaxInt64)
		for _, j := range m.members[sc] {
			lowest = min(lowest, s.minOff[j])
		}
		if lowest != s.secMin[sc] {
			s.trail = append(s.trail, change{trailSecMin, sc, s.secMin[sc]})
			s.secMin[sc] = lowest
		}
		if s.total[sc] > 0 && max(o, lowest) > s.cap-s.total[sc] {
			ok = false
			break
		}
	}
	st = exhausted
	if ok {
		// Placing i may leave no unplaced buffer across some boundaries: split there.
		splitBase := len(s.splits)
		for b := m.lo[i]; b+1 < m.hi[i]; b++ {
			s.cuts[b]--
			if s.cuts[b] == 0 { // i lies within p, so b is inside p too
				s.splits = append(s.splits, b)
			}
		}
		if len(s.splits) == splitBase {
			st = s.search(p, o, s.rank[i])
		} else {
			st = found
			lo := p.lo
			for k := splitBase; k <= len(s.splits) && st == found; k++ {
				hi := p.hi
				if k < len(s.splits) {
					hi = s.splits[k] + 1
				}
				st = s.solvePart(lo, hi, p.mask)
				lo = hi
			}
			s.splits = s.splits[:splitBase]
		}
		for b := m.lo[i]; b+1 < m.hi[i]; b++ {
			s.cuts[b]++
		}
	}
	// Undo, newest first.
	for k := len(s.trail) - 1; k >= mark; k-- {
		c := s.trail[k]
		if c.what == trailSecMin {
			s.secMin[c.idx] = c.old
		} else {
			s.minOff[c.idx] = c.old
		}
	}
	s.trail = s.trail[:mark]
	for sc := m.lo[i]; sc < m.hi[i]; sc++ {
		s.total[sc] += size
	}
	s.minOff[i] = o
	s.placed[i/64] &^= 1 << (i % 64)
	return st, hatless
}

// checkStop reports whether the deadline has passed or the context is done.
func (s *searcher) checkStop() bool {
	if s.hasDeadline && !time.Now().Before(s.deadline) {
		return true
	}
	return s.ctx.Err() != nil
}

// A portfolio runs the decision search over the preorders, round robin. MiniMalloc restarts
// each preorder's search from scratch with a step limit that doubles each round, so that one
// unlucky order cannot stall it. Here each search is a coroutine that pauses when it has used
// its quota and later resumes where it stopped: a depth-first search is deterministic, so a
// restart would only retrace its path, which was most of MiniMalloc's work. Resuming being free,
// the quota grows by a fixed slice per round rather than doubling, so that the searches share
// the work evenly and the first to succeed costs the others no more than its own steps.
// Capacities probed again pick up where they stopped too, while at most live of them are kept.
type portfolio struct {
	model  *model
	steps  int64 // total steps, all searches
	sched  map[int64]*schedule
	free   [][]*searcher // per preorder, idle searchers
	clock  int64
	result []int64 // offsets of the last plan found, by model index
	live   int     // how many capacities may keep paused searches
}

// schedule is the state of one capacity's round robin.
type schedule struct {
	tasks   []*task // per preorder, nil until started
	quota   int64   // steps each search may have taken by the end of this round
	next    int     // the preorder whose turn it is
	credit  int64   // budget granted but not yet spent
	lastUse int64
}

// task is one preorder's search at one capacity, run as a coroutine.
type task struct {
	s    *searcher
	next func() (searchStatus, bool)
	stop func()
}

// newPortfolio prepares the search, or returns nil if the problem is too large for it.
func newPortfolio(p Problem, sec sections) *portfolio {
	m := newModel(p, sec)
	if m == nil {
		return nil
	}
	// Each paused search holds a searcher and a goroutine stack as deep as its recursion, both
	// proportional to the buffers: keep about 200k buffer-searches paused at most.
	live := min(max(200_000/(len(preorders)*max(m.n, 1)), 2), 24)
	return &portfolio{model: m, sched: map[int64]*schedule{}, free: make([][]*searcher, len(preorders)), live: live}
}

func (pf *portfolio) start(ctx context.Context, capacity int64, h int) *task {
	var s *searcher
	if k := len(pf.free[h]); k > 0 {
		s, pf.free[h] = pf.free[h][k-1], pf.free[h][:k-1]
	} else {
		s = newSearcher(pf.model, preorders[h])
	}
	s.steps = 0 // run starts counting afresh; the portfolio sets the first limit from this
	t := &task{s: s}
	t.next, t.stop = iter.Pull(func(yield func(searchStatus) bool) {
		s.yield = yield
		st := s.run(ctx, capacity)
		s.yield = nil
		yield(st)
	})
	return t
}

// slice is the steps each search gets per round: enough for a few dives through the buffers,
// so that coroutine switches stay rare.
func (pf *portfolio) slice() int64 { return max(2*int64(pf.model.n), 64) }

// finish stops a task (unwinding a paused search, which leaves its searcher clean) and keeps
// its searcher for reuse.
func (pf *portfolio) finish(h int, t *task) {
	t.stop()
	pf.free[h] = append(pf.free[h], t.s)
}

// drop ends the searches of capacity c.
func (pf *portfolio) drop(c int64) {
	if sc := pf.sched[c]; sc != nil {
		for h, t := range sc.tasks {
			if t != nil {
				pf.finish(h, t)
			}
		}
		delete(pf.sched, c)
	}
}

// close ends every search.
func (pf *portfolio) close() {
	for c := range pf.sched {
		pf.drop(c)
	}
}

// decide grants capacity's round robin budget more steps and runs it as far as its credit
// goes. It returns found (the plan in pf.result), exhausted when no plan fits, aborted at the
// deadline, or paused when the credit ran out first.
func (pf *portfolio) decide(ctx context.Context, capacity, budget int64) searchStatus {
	sc := pf.sched[capacity]
	if sc == nil {
		if len(pf.sched) >= pf.live {
			lru := capacity
			for c, o := range pf.sched {
				if lru == capacity || o.lastUse < pf.sched[lru].lastUse {
					lru = c
				}
			}
			pf.drop(lru)
		}
		sc = &schedule{tasks: make([]*task, len(preorders)), quota: pf.slice()}
		pf.sched[capacity] = sc
	}
	pf.clock++
	sc.lastUse = pf.clock
	sc.credit += budget
	for sc.credit > 0 {
		t := sc.tasks[sc.next]
		if t == nil {
			t = pf.start(ctx, capacity, sc.next)
			sc.tasks[sc.next] = t
		}
		before := t.s.steps
		t.s.limit = before + min(sc.quota-before, sc.credit)
		st, _ := t.next()
		pf.steps += t.s.steps - before
		sc.credit -= t.s.steps - before
		switch st {
		case paused:
			if t.s.steps >= sc.quota {
				if sc.next++; sc.next == len(preorders) {
					sc.next, sc.quota = 0, sc.quota+pf.slice()
				}
			}
			continue
		case found:
			pf.result = append(pf.result[:0], t.s.sol...)
		}
		pf.drop(capacity) // found, exhausted, or the deadline passed
		return st
	}
	return paused
}

// offsets returns the last plan found, as offsets into p.Buffers, and its peak.
func (pf *portfolio) offsets(p Problem) ([]int64, int64) {
	off := make([]int64, len(p.Buffers))
	var peak int64
	for r, i := range pf.model.orig {
		off[i] = pf.result[r]
		peak = max(peak, pf.result[r]+pf.model.size[r])
	}
	return off, peak
}

// exactSolve improves on the heuristic plan ub by probing capacities with the decision search.
//
// How hard a probe is depends on its capacity in no simple way: a tight capacity prunes hard and
// is often settled at once, a slightly looser one can take a thousand times longer, and a lower
// one again be quick (on MiniMalloc's instance J, 1041408 bytes takes 0.5 s, 1040384 more than
// 5 s, 1039360 0.1 s). So instead of a binary search that can stall on one hard probe, the search
// runs in passes with a step budget that doubles each pass. A pass probes the target (the
// capacity asked, or without one the lowest peak not yet ruled out), then a grid of capacities
// just below the best plan found so far. Any plan found lowers the best; a probe that exhausts
// its search rules out its capacity and all below. Probes resume where they stopped (portfolio).
//
// With a capacity, the first plan within it ends the search; only the probe at the capacity itself
// can prove that none exists. Without one, the search ends when the best peak meets the lowest
// peak not ruled out (optimal), or at the deadline or step limit.
func exactSolve(ctx context.Context, p Problem, ub Plan, stepLimit int64) (Plan, error) {
	lb := ub.LowerBound
	sec := sweepSections(p.Buffers, func(i int) bool { return p.Buffers[i].Size > 0 }, true)
	pf := newPortfolio(p, sec)
	if pf == nil {
		if p.Capacity > 0 {
			return ub, &NoFitError{Capacity: p.Capacity, LowerBound: lb, Proven: p.Capacity < lb, Best: ub}
		}
		return ub, nil
	}
	defer pf.close()
	// Every offset and so every peak is a multiple of g: tops are sums of sizes, and an offset
	// is a top rounded up to an alignment, which changes it only if the alignment does not
	// divide the sizes' gcd.
	var g int64
	for _, b := range p.Buffers {
		g = gcd(g, b.Size)
	}
	for _, b := range p.Buffers {
		if a := b.Alignment(); b.Size > 0 && g%a != 0 {
			g = gcd(g, a)
		}
	}
	g = max(g, 1)
	plan := ub
	best := ub.Peak                // the lowest peak found
	proven := (lb + g - 1) / g * g // no plan peaks below proven
	if p.Capacity > 0 && p.Capacity < lb {
		return ub, &NoFitError{Capacity: p.Capacity, LowerBound: lb, Proven: true, Best: ub}
	}
	stopped := false
	// probe runs the decision search at capacity c with a node budget.
	probe := func(c, budget int64) searchStatus {
		if stepLimit > 0 {
			budget = min(budget, stepLimit-pf.steps)
		}
		if budget <= 0 || ctx.Err() != nil {
			stopped = true
			return aborted
		}
		st := pf.decide(ctx, c, budget)
		switch st {
		case found:
			off, peak := pf.offsets(p)
			plan = Plan{Offsets: off, Peak: peak, LowerBound: lb, Algorithm: Exact}
			best = peak
		case exhausted:
			proven = max(proven, c+g)
		}
		for c := range pf.sched { // capacities that can no longer help
			if c >= best || c < proven {
				pf.drop(c)
			}
		}
		return st
	}
	done := func() bool {
		if p.Capacity > 0 {
			return best <= p.Capacity || p.Capacity < proven || stopped
		}
		return best <= proven || stopped
	}
	// Each pass probes the target with the pass's budget, then gridProbes capacities below the
	// best peak, spaced to cover the top quarter of the gap to the lowest peak not ruled out:
	// improvements are most often found just below the best. When minimising, each grid probe
	// gets a quarter of the target's budget (the target, the lower bound, is often infeasible
	// and hard to prove so); with a capacity, a sixty-fourth (the target is what was asked).
	const gridProbes = 16
	gridShare := int64(4)
	if p.Capacity > 0 {
		gridShare = 64
	}
	n := int64(len(p.Buffers))
	budget := 64 * n
	for pass := int64(0); !done(); pass, budget = pass+1, budget*2 {
		target, top, bottom := proven, best-g, proven+g
		if p.Capacity > 0 {
			target = p.Capacity / g * g
			top, bottom = min(top, target-g), proven
		}
		if probe(target, budget); done() {
			break
		}
		stride := max((top-bottom)/g/(4*gridProbes)+1, 1) * g
		c := top
		for k := 0; k < gridProbes && c >= bottom && !done(); k++ {
			switch probe(c, max(budget/gridShare, 4*n)) {
			case found:
				c = min(c, best) - stride
			case exhausted:
				c = -1
			default:
				c -= stride
			}
		}
	}
	plan.Optimal = plan.Peak <= proven
	plan.Steps = pf.steps
	if p.Capacity > 0 && plan.Peak > p.Capacity {
		return ub, &NoFitError{Capacity: p.Capacity, LowerBound: lb, Proven: p.Capacity < proven, Best: plan}
	}
	return plan, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
