// Package planview describes a planned binding for people: its buffers with the values and
// nodes they belong to, the bytes live at each step, and the step where most bytes are live.
// It reads sizes and offsets from the plan and never computes sizes of its own.
package planview

import (
	"fmt"
	"sort"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/planner"
)

// Buffer is one planned buffer of a binding: a plain value, safe to share once built.
type Buffer struct {
	Index        int // in the plan's problem
	ID           string
	Kind         planner.Kind
	Size, Offset int64
	Start, End   int         // live over steps [Start, End)
	Node         *graph.Node // the node defining the value, or owning the workspace
	NodeStep     int         // the step running Node; -1 without one
	Values       []string    // the value and the views sharing its bytes; nil for a workspace
	InPlace      string      // the ID of the buffer whose bytes it takes (planner.Buffer.InPlace), or ""
}

// owns reports whether b's bytes count at step s: it is live, and unless s is its first step
// while it takes another buffer's bytes in place (those bytes count as the other's there).
func (b Buffer) owns(s int) bool {
	return b.Start <= s && s < b.End && !(b.InPlace != "" && s == b.Start)
}

// Buffers lists p's buffers in the plan's order.
func Buffers(p *engine.Planned) []Buffer {
	prob := p.Lifetimes.Problem
	out := make([]Buffer, len(prob.Buffers))
	for i, b := range prob.Buffers {
		own := p.Lifetimes.Owners[i]
		vals := make([]string, 0, len(own.Values))
		for _, v := range own.Values {
			vals = append(vals, v.Name)
		}
		if len(vals) == 0 {
			vals = nil
		}
		out[i] = Buffer{
			Index: i, ID: b.ID, Kind: b.Kind, Size: b.Size, Offset: p.Plan.Offsets[i],
			Start: b.Start, End: b.End, Node: own.Node, NodeStep: -1, Values: vals, InPlace: b.InPlace,
		}
		if own.Node != nil {
			out[i].NodeStep = p.Lifetimes.Step(own.Node)
		}
	}
	return out
}

// LiveBytes returns, for each step of p, the bytes of the buffers live at that step; a buffer
// written over another's bytes in place counts from the step after its first.
func LiveBytes(p *engine.Planned) []int64 {
	live := make([]int64, len(p.Steps))
	for _, b := range p.Lifetimes.Problem.Buffers {
		start := b.Start
		if b.InPlace != "" {
			start++
		}
		for s := max(start, 0); s < b.End && s < len(live); s++ {
			live[s] += b.Size
		}
	}
	return live
}

// Peak is the step of a plan at which the most bytes are live, and what is live there: a
// plain value, safe to share once built.
type Peak struct {
	Step      int
	Node      *graph.Node
	LiveBytes int64
	// ByKind splits LiveBytes by buffer kind (activation, workspace, output, input).
	ByKind map[planner.Kind]int64
	// Buffers are the buffers live at Step, largest first (ties in plan order).
	Buffers []Buffer
}

// PeakStep finds the step with the most live bytes (the earliest on ties). A plan without
// steps gives Step -1.
func PeakStep(p *engine.Planned) Peak {
	live := LiveBytes(p)
	pk := Peak{Step: -1, ByKind: map[planner.Kind]int64{}}
	for s, n := range live {
		if pk.Step < 0 || n > pk.LiveBytes {
			pk.Step, pk.LiveBytes = s, n
		}
	}
	if pk.Step < 0 {
		return pk
	}
	pk.Node = p.Lifetimes.Steps[pk.Step]
	for _, b := range Buffers(p) {
		if b.owns(pk.Step) && b.Size > 0 {
			pk.Buffers = append(pk.Buffers, b)
			pk.ByKind[b.Kind] += b.Size
		}
	}
	sort.SliceStable(pk.Buffers, func(i, j int) bool { return pk.Buffers[i].Size > pk.Buffers[j].Size })
	return pk
}

// NodeLabel names a node for people: its name, or "#INDEX" (its place in the model) for an
// unnamed node.
func NodeLabel(n *graph.Node) string {
	if n == nil {
		return ""
	}
	if n.Name != "" {
		return n.Name
	}
	return fmt.Sprintf("#%d", n.Index)
}
