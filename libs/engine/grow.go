package engine

import (
	"fmt"
	"slices"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// Workspace within the plan.
//
// Some kernels' workspace is a choice, not a need (WorkspaceMeasurer): a cuDNN convolution runs
// the fastest algorithm that fits the part it is carved, a cuBLASLt product asks for the best
// algorithm within it, and both run at any size down to alloc.DefaultPartAlign. Planned at their
// declared size (their bound, up to the Target's WorkspaceCap), they raise the arena for a
// speed-up that may be small: a ResNet-50's 3x3 convolutions declare the im2col matrix of the
// whole batch, more than the activations live beside them.
//
// By default Plan gives such a kernel only what the plan leaves free at its step: it plans the
// binding with every measured part at alloc.DefaultPartAlign, then grows each part, up to its
// declared size, into the largest range no other buffer holds during that step below the peak
// (planner.Room). Workspaces live for one step each, so no two of them compete for a range.
//
// Invariant: a plan's peak is that of the binding with every measured part at its smallest, so
// a workspace that is a choice never raises the arena. Because that smallest size is the same at
// every binding, the envelope's candidates bound every binding's arena exactly as they do with
// Recipes that only grow with the dims, and the estimator, which plans with the same code, still
// predicts the reservation to the byte. Options.FullWorkspace plans each kernel at its declared
// size instead. TestWorkspaceWithinPlan checks the invariant and that a grown part is used.

// carved is an instance whose measured part (index part) a plan carves at size instead of the
// size its Recipe declares: the tight plan's measured capacity, or what the plan leaves free at
// its step. It answers for the instance's optional interfaces as the instance itself does, so
// that wrapping changes nothing but the Recipe.
type carved struct {
	kernels.Instance
	part int
	size int64
}

func (c *carved) Recipe() alloc.Recipe {
	r := c.Instance.Recipe()
	r.Parts = slices.Clone(r.Parts)
	r.Parts[c.part].Size = c.size
	return r
}

// InPlace is the instance's (kernels.InPlacer).
func (c *carved) InPlace() []kernels.InPlace { return kernels.InPlaceOf(c.Instance) }

// Prepare prepares the instance when it is a Preparer.
func (c *carved) Prepare(b kernels.Backend) error {
	if p, ok := c.Instance.(Preparer); ok {
		return p.Prepare(b)
	}
	return nil
}

// MeasuredPart is the part carved at size.
func (c *carved) MeasuredPart() int { return c.part }

// MeasureWorkspace is the instance's need within its declared part, at most size.
func (c *carved) MeasureWorkspace(b kernels.Backend) (int64, error) {
	n, err := c.Instance.(WorkspaceMeasurer).MeasureWorkspace(b)
	return min(n, c.size), err
}

// RecordedTime is the instance's within r (kernels.RecordedTimer).
func (c *carved) RecordedTime(r alloc.Recipe) (kernels.RecordedTime, bool) {
	if rt, ok := c.Instance.(kernels.RecordedTimer); ok {
		return rt.RecordedTime(r)
	}
	return kernels.RecordedTime{}, false
}

// Label is the instance's label on b, when it has one.
func (c *carved) Label(b kernels.Backend) string {
	if l, ok := c.Instance.(interface{ Label(kernels.Backend) string }); ok {
		return l.Label(b)
	}
	return c.Instance.Recipe().Kernel
}

// measuredPart is the index of inst's measured part in its Recipe, or -1 when it has none at
// these shapes (another tactic, or not a WorkspaceMeasurer).
func measuredPart(inst kernels.Instance) int {
	wm, ok := inst.(WorkspaceMeasurer)
	if !ok {
		return -1
	}
	i := wm.MeasuredPart()
	if i < 0 || i >= len(inst.Recipe().Parts) {
		return -1
	}
	return i
}

// carve returns inst with its measured part at size (an instance already carved is carved again
// from the one beneath), or inst itself when it has no measured part. part, when not "", is the
// name the measured part must have.
func carve(inst kernels.Instance, part string, size int64) (kernels.Instance, error) {
	if c, ok := inst.(*carved); ok {
		inst = c.Instance
	}
	i := measuredPart(inst)
	if i < 0 {
		return inst, nil
	}
	if name := inst.Recipe().Parts[i].Name; part != "" && name != part {
		return nil, fmt.Errorf("the kernel's measured workspace part is %q here but %q where it was measured", name, part)
	}
	return &carved{Instance: inst, part: i, size: size}, nil
}

// growable is a step whose measured part Plan carves at its smallest and grows after solving.
type growable struct {
	step     int   // index in Planned.Steps
	declared int64 // the part's size before: its Recipe's, or the tight plan's capacity
}

// shrink carves the measured part of st's instance at alloc.DefaultPartAlign for growing,
// unless opts plan full workspaces; it reports the step as growable when it did.
func shrink(opts Options, i int, st *Step) (*growable, error) {
	pi := measuredPart(st.Instance)
	if opts.FullWorkspace || pi < 0 {
		return nil, nil
	}
	declared := st.Instance.Recipe().Parts[pi].Size
	if declared <= alloc.DefaultPartAlign {
		return nil, nil
	}
	inst, err := carve(st.Instance, "", alloc.DefaultPartAlign)
	if err != nil {
		return nil, err
	}
	st.Instance = inst
	st.Workspace, err = inst.Recipe().Size()
	return &growable{step: i, declared: declared}, err
}

// grow gives each growable step's measured part the most of its Room in p's plan, up to its
// declared size, and verifies the plan again.
func (p *Planned) grow(gs []*growable) error {
	if len(gs) == 0 {
		return nil
	}
	prob := p.Lifetimes.Problem
	prob.Buffers = slices.Clone(prob.Buffers)
	plan := p.Plan
	plan.Offsets = slices.Clone(plan.Offsets)
	for _, g := range gs {
		st := &p.Steps[g.step]
		wb := st.WorkspaceBuffer
		if wb < 0 {
			continue
		}
		c := st.Instance.(*carved)
		off, room := planner.Room(prob, plan, wb)
		if room <= prob.Buffers[wb].Size {
			continue
		}
		// the part may take what the room has beyond the Recipe's other parts and padding
		size := min(g.declared, c.size+(room-prob.Buffers[wb].Size)&^(alloc.DefaultPartAlign-1))
		for ; size > c.size; size -= alloc.DefaultPartAlign {
			grown := &carved{Instance: c.Instance, part: c.part, size: size}
			n, err := grown.Recipe().Size()
			if err != nil {
				return err
			}
			if n <= room {
				st.Instance, st.Workspace = grown, n
				prob.Buffers[wb].Size, plan.Offsets[wb] = n, off
				break
			}
		}
	}
	// a part that defined the peak at its smallest may have moved lower
	var peak int64
	for i, b := range prob.Buffers {
		if b.Size > 0 {
			peak = max(peak, plan.Offsets[i]+b.Size)
		}
	}
	if peak > plan.Peak {
		return fmt.Errorf("engine: growing the workspaces raised the peak from %d to %d (a bug)", plan.Peak, peak)
	}
	plan.Peak = peak
	if err := planner.Verify(prob, plan); err != nil {
		return fmt.Errorf("engine: growing the workspaces into the plan's free bytes made an invalid plan (a bug): %w", err)
	}
	lt := *p.Lifetimes
	lt.Problem = prob
	p.Lifetimes, p.Plan = &lt, plan
	return nil
}
