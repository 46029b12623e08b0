package graph

import (
	"slices"

	"carve.dev/libs/planner"
)

// Sinking. A node holds the arena bytes it defines from the step it runs at on. Run just before
// the first node that reads them, it holds them over none of the steps between, while the
// inputs that nothing else reads that late live on to it: where what it defines outweighs those
// inputs, every step between gets lighter. An exporter writes nodes in the order of the source
// program, which may compute a product early and read it much later (DeBERTa's attention
// scores, before the relative-position terms added to them). The moves are a heuristic; their
// order is taken only where it lowers the peak of live bytes, so it never plans worse.
//
// The order is sound: a node only moves later, never past a reader of its outputs, so every
// node still runs after its inputs exist, and kernels are functions of their inputs. The one
// exception is an external input whose owner places an external output at its bytes (a KV
// cache's past and present, written in place): its readers must run before the writer, as
// they do in the model's order. A node reading an external value, or a view of one, does not
// move, and every other move keeps the order of the nodes it passes, so those readers stay
// before it.

// LifetimesSunk is LifetimesFor in the order sinking gives the model's (one pass from the last
// node to the first: each node moved to just before its first reader where what it defines
// outweighs what it would hold longer, or where that is free, as for views), when that order's
// peak of live bytes (planner.LowerBound) is lower; otherwise LifetimesFor's. With inPlace
// (nil: none), the outputs that may take an input's bytes do (see Lifetimes.inPlace) in either
// order before the two are compared, and then, up to maxPeakMoves times, the node whose move to
// just before its first reader lowers the peak most, among those whose outputs are live over the
// peak step, moves (peakMove): with outputs written over their inputs, which order holds the
// fewest bytes at the peak is no longer what the byte heuristic weighs (a ResNet block's
// downsampling convolution, run after the main path, writes its result where the residual sum
// will be; run before, it holds it over the main path's first convolution beside the block's
// input).
func (b *Binding) LifetimesSunk(r Residency, workspace WorkspaceFunc, inPlace InPlaceFunc, external ...*Value) (*Lifetimes, error) {
	l, err := b.lifetimesSunk(r, workspace, inPlace, external)
	if err != nil || inPlace == nil {
		return l, err
	}
	for range maxPeakMoves {
		m, err := b.peakMove(l, r, workspace, inPlace, external)
		if err != nil {
			return nil, err
		}
		if m == nil {
			break
		}
		l = m
	}
	return l, nil
}

// maxPeakMoves bounds LifetimesSunk's peak moves: each plans the lifetimes again for every
// candidate move.
const maxPeakMoves = 16

// peakMove returns l with the one node moved to just before its first reader that lowers
// planner.LowerBound most, among the nodes that run at or before the step with the most live
// bytes and whose outputs are first read after it, none of whose inputs is external or a view
// of one (sinking's rule); nil when no such move lowers the bound.
func (b *Binding) peakMove(l *Lifetimes, r Residency, workspace WorkspaceFunc, inPlace InPlaceFunc, external []*Value) (*Lifetimes, error) {
	steps := len(l.Steps)
	peak := liveArgmax(l.Problem, steps)
	if peak < 0 {
		return nil, nil
	}
	pinned := pinnedValues(l.Steps, external)
	best, bound := (*Lifetimes)(nil), planner.LowerBound(l.Problem)
	for p := 0; p <= peak; p++ {
		n := l.Steps[p]
		if slices.ContainsFunc(n.Inputs, func(v *Value) bool { return v != nil && pinned[v] }) {
			continue
		}
		q := steps
		for _, o := range n.Outputs {
			if o != nil {
				for _, c := range o.Consumers {
					q = min(q, l.step[c.Index])
				}
			}
		}
		if q == steps || q <= peak || q == p+1 {
			continue
		}
		order := slices.Clone(l.Steps)
		copy(order[p:q-1], order[p+1:q])
		order[q-1] = n
		c, err := b.LifetimesIn(order, r, workspace, external...)
		if err != nil {
			return nil, err
		}
		if c.InPlace, err = c.inPlace(b, inPlace); err != nil {
			return nil, err
		}
		if lb := planner.LowerBound(c.Problem); lb < bound {
			best, bound = c, lb
		}
	}
	return best, nil
}

// liveArgmax is the earliest step with the most live bytes in p (an in-place buffer counted
// from the step after its first, where its bytes are still the buffer's it takes); -1 without
// steps.
func liveArgmax(p planner.Problem, steps int) int {
	live := make([]int64, steps)
	for _, b := range p.Buffers {
		start := b.Start
		if b.InPlace != "" {
			start++
		}
		for s := max(start, 0); s < min(b.End, steps); s++ {
			live[s] += b.Size
		}
	}
	best := -1
	for s, v := range live {
		if best < 0 || v > live[best] {
			best = s
		}
	}
	return best
}

// lifetimesSunk is LifetimesSunk without its peak moves.
func (b *Binding) lifetimesSunk(r Residency, workspace WorkspaceFunc, inPlace InPlaceFunc, external []*Value) (*Lifetimes, error) {
	l, err := b.LifetimesFor(r, workspace, external...)
	if err != nil {
		return nil, err
	}
	order := l.sunk(external)
	if inPlace != nil {
		if l.InPlace, err = l.inPlace(b, inPlace); err != nil {
			return nil, err
		}
	}
	if order == nil {
		return l, nil
	}
	s, err := b.LifetimesIn(order, r, workspace, external...)
	if err != nil {
		return nil, err
	}
	if inPlace != nil {
		if s.InPlace, err = s.inPlace(b, inPlace); err != nil {
			return nil, err
		}
	}
	if planner.LowerBound(s.Problem) < planner.LowerBound(l.Problem) {
		return s, nil
	}
	return l, nil
}

// pinnedValues are the external values and the views of them, in order.
func pinnedValues(order []*Node, external []*Value) map[*Value]bool {
	pinned := make(map[*Value]bool, len(external))
	for _, v := range external {
		pinned[v] = true
	}
	for _, n := range order {
		if n.IsView() && pinned[n.Input(0)] {
			for _, o := range n.Outputs {
				pinned[o] = true
			}
		}
	}
	return pinned
}

// sunk returns l's order with its nodes sunk, or nil when none moves.
func (l *Lifetimes) sunk(external []*Value) []*Node {
	steps := len(l.Steps)
	order := slices.Clone(l.Steps)
	pos := slices.Clone(l.step) // by Node.Index
	bufs := l.Problem.Buffers

	// users[i] are the nodes reading buffer i, whose last one ends it unless it is fixed (lives
	// to the end of the run: a graph output, a resident host value); defines is by Node.Index.
	users := make([][]*Node, len(bufs))
	fixed := make([]bool, len(bufs))
	defines := make([]int64, len(pos))
	for i, o := range l.Owners {
		if bufs[i].Kind == planner.Workspace {
			continue
		}
		for _, v := range o.Values {
			users[i] = append(users[i], v.Consumers...)
		}
		host := o.Values[0].Host
		fixed[i] = bufs[i].Kind == planner.Output || host
		if o.Node != nil && !host && o.Values[0].Producer == o.Node {
			defines[o.Node.Index] += bufs[i].Size // from its step on: moved later, it holds them less
		}
	}
	pinned := pinnedValues(l.Steps, external)
	// extends is what n's inputs hold that would live longer with n moved to just before q:
	// the buffers no node but n reads at q or later.
	extends := func(n *Node, q int) int64 {
		var sum int64
		var seen []int
		for _, v := range n.Inputs {
			if v == nil {
				continue
			}
			i, ok := l.Buffer(v)
			if !ok || fixed[i] || slices.Contains(seen, i) {
				continue
			}
			seen = append(seen, i)
			last := -1
			for _, u := range users[i] {
				if u != n {
					last = max(last, pos[u.Index])
				}
			}
			if last < q {
				sum += bufs[i].Size
			}
		}
		return sum
	}
	moved := false
	for k := steps - 1; k >= 0; k-- {
		n := l.Steps[k]
		if slices.ContainsFunc(n.Inputs, func(v *Value) bool { return v != nil && pinned[v] }) {
			continue
		}
		p, q := pos[n.Index], steps
		for _, o := range n.Outputs {
			if o != nil {
				for _, c := range o.Consumers {
					q = min(q, pos[c.Index])
				}
			}
		}
		if q == steps || q == p+1 {
			continue // read by no node, or by the next
		}
		// Move where the activations it defines outweigh what it would hold longer, or where it
		// moves for free (and may unblock its producers).
		d, e := defines[n.Index], extends(n, q)
		if d <= e && (d > 0 || e > 0) {
			continue
		}
		copy(order[p:q-1], order[p+1:q])
		order[q-1] = n
		for j := p; j < q; j++ {
			pos[order[j].Index] = j
		}
		moved = true
	}
	if !moved {
		return nil
	}
	return order
}
