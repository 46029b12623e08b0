package engine

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The tight plan: Level 2 on a device that knows more than the kernels declare.
//
// In the planner's words (libs/planner/doc.go), W is a kernel's declared workspace bound over the
// envelope, C what a plan holds for it and R what one call needs. The default reservation plans
// every kernel at its Recipe, and for some kernels the Recipe is a cap rather than a need: a
// cuBLASLt GEMM asks for 32 MiB on Hopper so that the algorithm heuristic may choose among all
// algorithms, and the algorithm it chooses often needs far less, or nothing. Only the device can
// tell, so the default reservation, which the estimator predicts to the byte without one, holds
// C = W for such kernels.
//
// The tight plan measures, at load, what each such kernel (a WorkspaceMeasurer) needs on the
// device at every candidate binding of the envelope (its corners and both sides of every tactic
// switch: the bindings PlanEnvelope plans), takes the most as the kernel's capacity, and plans the
// envelope again with that capacity in place of the cap. A kernel's cap may be one part of its
// Recipe beside parts that are needs (GatedMatMul carves a chunk of its up product beside
// cuBLASLt's cap): only the measured part changes size.
//
// Invariant: with the tight plan reserved, no binding inside the envelope needs more arena than
// reserved, and everything that can fail is decided at load.
//  1. A tightened kernel's measured part has one size, its tight capacity, at every binding where
//     it has that part, just as its cap has one size in the default plan; its other parts, and its Recipe at bindings where its tactic has no measured
//     part, are the default plan's. Every binding's plan differs from the default one only in
//     these constant sizes, so the envelope's candidates bound every binding's arena exactly as
//     they do for the default reservation.
//  2. At every candidate the kernel's measured need is at most its capacity (the capacity is
//     their maximum) and at most its cap; a need above the cap is a kernel bug, and load fails
//     with a *TightError, as it does when a measurement fails.
//  3. Between the candidates a kernel may prefer an algorithm that needs more than its capacity.
//     A WorkspaceMeasurer runs within the workspace it is carved (cuBLASLt is asked for the best
//     algorithm within that size), so such a binding costs no memory, at worst a slower
//     algorithm.
//
// TestTightInvariant checks 1 and 3 with a kernel whose need at some shapes exceeds every
// candidate's, and 2 with one that needs more than its cap; TestTightPart checks 1 for a kernel
// whose measured part sits beside a part that grows with the dims.

// WorkspaceMeasurer is implemented by kernel instances one part of whose Recipe is a cap rather
// than a need (libs/kernels/cuda's cuBLASLt products). MeasuredPart is that part's index in the
// Recipe, or -1 when this instance (its tactic at this binding) has none; MeasureWorkspace
// reports what the part needs on b's device, at most its size. An instance that implements it
// promises that Run, given that part at any size down to alloc.DefaultPartAlign, runs within it,
// which the tight plan relies on. The part's declared size may grow with the dims (a cuDNN
// convolution declares its im2col size): the tight plan carves the measured capacity at every
// binding all the same (invariant 1), which is safe by this promise.
type WorkspaceMeasurer interface {
	MeasuredPart() int
	MeasureWorkspace(b kernels.Backend) (int64, error)
}

// TightKernel is one kernel whose workspace the tight plan lowers. C, R and Capacity are of its
// measured part (the whole workspace of a kernel with one part).
type TightKernel struct {
	Node *graph.Node
	// W is the kernel's declared bound over the envelope, all its parts.
	W int64
	// C is what the default plan holds for the measured part: its cap, the most over the
	// candidates; within the plan (Options.FullWorkspace unset), what the worst binding's plan
	// carves for it.
	C int64
	// R is what it needs on the device: the most measured over the candidates, at At.
	R  int64
	At Binding
	// Capacity is what the tight plan holds for the part: R, but at least alloc.DefaultPartAlign
	// (a part of 0 bytes would be no workspace, and the kernel wants one to choose within).
	Capacity int64
	// Part is the measured part's name in the kernel's Recipe.
	Part string
}

// TightPlan is an envelope planned with every measured kernel at its need instead of its cap.
type TightPlan struct {
	// Kernels are the kernels whose Capacity is below their C, largest difference first.
	Kernels []TightKernel
	// Measured counts the kernels (nodes) whose need the device was asked for.
	Measured int
	// Default is the envelope's default plan, every kernel at its Recipe: what the estimator
	// predicts. Plan is the tight plan: the envelope planned again with each of Kernels at its
	// Capacity. Plan is Default when no kernel is lowered, or when the plan with them lowered
	// happens to need no less arena.
	Default, Plan *EnvelopePlan

	options Options // the options that plan patterns as Plan does
}

// Saved is the arena bytes one session's reservation saves with the tight plan (reserved sizes,
// as the allocator reserves them); 0 when Plan is Default.
func (t *TightPlan) Saved() int64 {
	if t.Plan == t.Default {
		return 0
	}
	return alloc.ReservedSize(max(t.Default.ArenaBytes, 1)) - alloc.ReservedSize(max(t.Plan.ArenaBytes, 1))
}

// TightError reports, at load, a kernel whose need cannot be used for a tight plan: the
// measurement failed (Err), or it exceeds the kernel's own Recipe (Need > Recipe, a kernel bug).
type TightError struct {
	Node    *graph.Node
	Binding Binding
	Need    int64
	Recipe  int64
	Err     error
}

func (e *TightError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("tight plan: measuring the workspace of %s at %s: %v", e.Node, e.Binding, e.Err)
	}
	return fmt.Sprintf("tight plan: %s at %s needs %s of workspace, more than its recipe's %s (a kernel bug)",
		e.Node, e.Binding, bytesize.Format(e.Need), bytesize.Format(e.Recipe))
}

func (e *TightError) Unwrap() error { return e.Err }

// TightenEnvelope measures on be what every WorkspaceMeasurer of m needs at each candidate of
// ep (the default plan of its envelope, planned with opts for be's kernels) and plans the
// envelope again with those needs. Without measurers, or when none needs less than its Recipe,
// the result's Plan is ep.
func TightenEnvelope(ctx context.Context, m *graph.Model, be kernels.Backend, ep *EnvelopePlan, opts Options) (*TightPlan, error) {
	opts, err := opts.normalized()
	if err != nil {
		return nil, err
	}
	tp := &TightPlan{Default: ep, Plan: ep, options: opts}
	type need struct {
		c, r int64
		at   Binding
		part string
	}
	needs := map[*graph.Node]*need{}
	for _, cd := range ep.Candidates {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := graph.Bind(m, cd.Binding)
		if err != nil {
			return nil, &PlanError{Binding: cd.Binding, Err: err}
		}
		for _, n := range m.Nodes {
			if stepKind(n) != RunKernel {
				continue
			}
			inst, err := opts.Registry.Select(KernelNode(b, n), opts.Target)
			if err != nil {
				return nil, &PlanError{Node: n, Binding: cd.Binding, Err: err}
			}
			wm, ok := inst.(WorkspaceMeasurer)
			if !ok {
				continue
			}
			parts := inst.Recipe().Parts
			i := wm.MeasuredPart()
			if i < 0 || i >= len(parts) {
				continue
			}
			size := parts[i].Size
			r, err := wm.MeasureWorkspace(be)
			if err != nil {
				return nil, &TightError{Node: n, Binding: cd.Binding, Err: err}
			}
			if r < 0 || r > size {
				return nil, &TightError{Node: n, Binding: cd.Binding, Need: r, Recipe: size}
			}
			nd := needs[n]
			if nd == nil {
				nd = &need{r: -1, part: parts[i].Name}
				needs[n] = nd
			} else if nd.part != parts[i].Name {
				return nil, &TightError{Node: n, Binding: cd.Binding,
					Err: fmt.Errorf("its measured workspace part is %q here and %q at %s", parts[i].Name, nd.part, nd.at)}
			}
			nd.c = max(nd.c, size)
			if r > nd.r {
				nd.r, nd.at = r, cd.Binding
			}
		}
	}
	tp.Measured = len(needs)
	if !opts.FullWorkspace {
		// Within the plan (grow.go) the default plan holds for a measured part what its step
		// leaves free: C is what the worst binding's plan carves.
		for n, nd := range needs {
			nd.c = carvedPart(ep.Worst, n, nd.part, nd.c)
		}
	}
	caps := map[*graph.Node]tightCap{}
	for n, nd := range needs {
		capacity := max(nd.r, alloc.DefaultPartAlign)
		if capacity >= nd.c {
			continue
		}
		caps[n] = tightCap{part: nd.part, size: capacity}
		tp.Kernels = append(tp.Kernels, TightKernel{Node: n, W: ep.bound(n), C: nd.c, R: nd.r, At: nd.at, Capacity: capacity, Part: nd.part})
	}
	sort.Slice(tp.Kernels, func(i, j int) bool {
		a, b := tp.Kernels[i], tp.Kernels[j]
		if a.C-a.Capacity != b.C-b.Capacity {
			return a.C-a.Capacity > b.C-b.Capacity
		}
		return a.Node.Index < b.Node.Index
	})
	if len(caps) == 0 {
		return tp, nil
	}
	topts := opts
	topts.workspaceCaps = caps
	plan, err := PlanEnvelope(ctx, m, ep.Envelope, topts)
	if err != nil {
		return nil, err
	}
	if alloc.ReservedSize(max(plan.ArenaBytes, 1)) < alloc.ReservedSize(max(ep.ArenaBytes, 1)) {
		tp.Plan, tp.options = plan, topts
	}
	return tp, nil
}

// carvedPart is the size p carves for n's workspace part named part, or def when p's step of n
// has no such part.
func carvedPart(p *Planned, n *graph.Node, part string, def int64) int64 {
	if p == nil || n.Index >= len(p.Steps) || p.Steps[n.Index].Instance == nil {
		return def
	}
	if q, ok := p.Steps[n.Index].Instance.Recipe().Part(part); ok {
		return q.Size
	}
	return def
}

// tightCap is a measured kernel's capacity in the tight plan: the size of its part named part.
type tightCap struct {
	part string
	size int64
}

// tighten gives inst, n's instance, its tight capacity when opts plan a tight envelope. An
// instance without a measured part here (another tactic) keeps its Recipe.
func (o Options) tighten(n *graph.Node, inst kernels.Instance) (kernels.Instance, error) {
	c, ok := o.workspaceCaps[n]
	if !ok {
		return inst, nil
	}
	inst, err := carve(inst, c.part, c.size)
	if err != nil {
		return nil, fmt.Errorf("tight plan: %w", err)
	}
	return inst, nil
}

// tightCache holds a runtime's tight plan once computed.
type tightCache struct {
	mu   sync.Mutex
	plan *TightPlan
}

// Tight returns the runtime's tight plan: with RuntimeOptions.Tight the one computed at load and
// reserved, otherwise the one the runtime could have reserved, computed at the first call (the
// kernels' needs measured on the device; no memory is allocated).
func (rt *Runtime) Tight(ctx context.Context) (*TightPlan, error) {
	rt.tight.mu.Lock()
	defer rt.tight.mu.Unlock()
	if rt.tight.plan == nil {
		tp, err := TightenEnvelope(ctx, rt.Model, rt.Backend, rt.Reserve, rt.opts.Options)
		if err != nil {
			return nil, err
		}
		rt.tight.plan = tp
	}
	return rt.tight.plan, nil
}
