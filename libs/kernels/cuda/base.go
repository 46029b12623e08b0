package cuda

import (
	"fmt"
	"slices"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// plan is what an op's select function produces for one node: the tactic, the workspace recipe
// parts and the launches.
type plan struct {
	tactic string
	parts  []alloc.Part
	prog   program
	// measured names the part that the program's measuredCall steps run within at whatever
	// size it is carved (MeasuredPart); "" is gemmPart, cuBLASLt's.
	measured string
	// inPlace is the kernel's in-place contract at this node (kernels.InPlace); nil for none.
	inPlace []kernels.InPlace
}

// op is one CUDA kernel: an op with its tactics. It mirrors the CPU backend's op (cpu/base.go):
// sel validates a node and plans its launches, bound is W over shape ranges (nil for ops that
// never use workspace).
type op struct {
	key     kernels.OpKey
	tactics []kernels.TacticInfo
	sel     func(n *kernels.Node, t kernels.Target) (plan, error)
	bound   func(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error)
}

var direct = []kernels.TacticInfo{{Name: "direct", Summary: "one or a few kernel launches, no workspace"}}

func (o *op) Op() kernels.OpKey             { return o.key }
func (o *op) Backend() string               { return kernels.BackendCUDA }
func (o *op) Tactics() []kernels.TacticInfo { return o.tactics }

func (o *op) nodeErr(name string, err error) error { return kernels.NodeErr(name, o.key, err) }

// target fills what selection needs of a target that leaves it out.
func target(t kernels.Target) kernels.Target {
	if t.SMs < 1 {
		t.SMs = 1
	}
	if t.SharedMemPerBlock < 48<<10 {
		t.SharedMemPerBlock = 48 << 10
	}
	return t
}

func (o *op) Select(n *kernels.Node, t kernels.Target) (kernels.Instance, error) {
	if err := kernels.CheckNodeSizes(n); err != nil {
		return nil, o.nodeErr(n.Name, err)
	}
	p, err := o.sel(n, target(t))
	if err != nil {
		return nil, o.nodeErr(n.Name, err)
	}
	label, recipe, err := kernels.InstanceRecipe(n, o.key, p.tactic, p.parts)
	if err != nil {
		return nil, o.nodeErr(n.Name, err)
	}
	inst := &instance{
		label:   label,
		tactic:  p.tactic,
		recipe:  recipe,
		prog:    p.prog,
		inPlace: p.inPlace,
		in:      kernels.Expectations(n.Inputs),
		out:     kernels.Expectations(n.Outputs),
	}
	inst.measured = -1
	if slices.ContainsFunc(p.prog, isMeasured) {
		name := p.measured
		if name == "" {
			name = gemmPart
		}
		inst.measured = slices.IndexFunc(p.parts, func(p alloc.Part) bool { return p.Name == name })
	}
	return inst, nil
}

func (o *op) Bound(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	if o.bound == nil {
		return kernels.Bound{}, nil
	}
	if err := kernels.CheckRange(r); err != nil {
		return kernels.Bound{}, o.nodeErr(r.Name, err)
	}
	b, err := o.bound(r, target(t))
	if err != nil {
		return kernels.Bound{}, o.nodeErr(r.Name, err)
	}
	return b, nil
}

// recipeBound is the Bound of a tactic whose worst-case recipe has parts: its carved size.
func recipeBound(tactic string, parts []alloc.Part) (kernels.Bound, error) {
	size, err := alloc.Recipe{Kernel: tactic, Parts: parts}.Size()
	if err != nil {
		return kernels.Bound{}, err
	}
	return kernels.Bound{Bytes: size, Tactic: tactic}, nil
}

// instance is a CUDA kernel bound to one node: its launches are fixed. It is immutable and safe
// for concurrent use.
type instance struct {
	label   string
	tactic  string
	recipe  alloc.Recipe
	in, out []kernels.Expect
	prog    program
	// measured is MeasuredPart: the index in recipe of the part that prog's measuredCall steps
	// run within at whatever size it is carved (cuBLASLt's "cublas", cuDNN's "cudnn"), else -1.
	measured int
	inPlace  []kernels.InPlace
}

func (i *instance) Tactic() string       { return i.tactic }
func (i *instance) Recipe() alloc.Recipe { return i.recipe }

// InPlace is the plan's in-place contract (kernels.InPlacer).
func (i *instance) InPlace() []kernels.InPlace { return i.inPlace }

// MeasuredPart is the index of the "cublas" part when the program holds cuBLASLt products of its
// own, or of the "cudnn" part of a cuDNN convolution, else -1.
func (i *instance) MeasuredPart() int { return i.measured }

// MeasureWorkspace is the most that the algorithms the libraries choose for the program's steps
// (cuBLASLt products, a cuDNN convolution) need on b's device, within the measured part's size.
func (i *instance) MeasureWorkspace(b kernels.Backend) (int64, error) {
	if i.measured < 0 {
		return 0, nil
	}
	var need int64
	for _, st := range i.prog {
		if mc, ok := st.call.(measuredCall); ok {
			r, err := mc.need(b, i.recipe.Parts[i.measured].Size)
			if err != nil {
				return 0, err
			}
			need = max(need, r)
		}
	}
	return need, nil
}

// A describedCall is a step whose work is decided on the device (convCall: a cuDNN algorithm, or
// the own kernels in its place); describe says which, for Label.
type describedCall interface {
	describe(b kernels.Backend) string
}

// Label is the instance's label, "node:Op/tactic" (its Recipe's Kernel), followed for each step
// whose work is decided on b's device by what that is: for Conv's cudnn tactic, cuDNN's
// algorithm or "own: " and why cuDNN does not run it (not loaded, no algorithm within the
// workspace, measured slower). Tactic and the Recipe stay what Select chose on the Target alone.
func (i *instance) Label(b kernels.Backend) string {
	label := i.label
	for _, st := range i.prog {
		if dc, ok := st.call.(describedCall); ok {
			label += " [" + dc.describe(b) + "]"
		}
	}
	return label
}

// A preparedCall is a step that makes on the device, at its first Run, what a stream capture
// cannot make (convCall: cuDNN's handle and plan, and a first run of its algorithms); prepare
// makes it ahead.
type preparedCall interface {
	prepare(b kernels.Backend) error
}

// Prepare makes on b's device, ahead, what the instance's library steps would make at their
// first Run: for Conv's cudnn tactic, cuDNN's handle and descriptors, and the algorithms ranked
// by measurement (as MeasureWorkspace does). A first Run inside a stream capture cannot make
// them and runs the own kernels instead, so a runtime that captures graphs calls Prepare at
// load, outside any capture, for each instance that has it. Instances without such steps do
// nothing.
func (i *instance) Prepare(b kernels.Backend) error {
	for _, st := range i.prog {
		if pc, ok := st.call.(preparedCall); ok {
			if err := pc.prepare(b); err != nil {
				return &kernels.RunError{Kernel: i.label, Err: err}
			}
		}
	}
	return nil
}

func isMeasured(st step) bool {
	_, ok := st.call.(measuredCall)
	return ok
}

// checkValues checks got against want (kernels.CheckTensors) and that each tensor that holds
// bytes has a device address.
func checkValues(kind string, want []kernels.Expect, got []kernels.Tensor) error {
	if err := kernels.CheckTensors(kind, want, got); err != nil {
		return err
	}
	for j := range want {
		if w, t := &want[j], &got[j]; w.Present && t.Addr == 0 && w.Bytes > 0 {
			return fmt.Errorf("%s %d has no device address", kind, j)
		}
	}
	return nil
}

// run checks inputs, outputs and workspace against what the instance was selected for, then
// launches its program on s through launch (nil: the package's launch, see program.exec).
// Nothing is launched before every check has passed.
func (i *instance) run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream, launch launcher) error {
	if err := checkValues("input", i.in, in); err != nil {
		return &kernels.RunError{Kernel: i.label, Err: err}
	}
	if err := checkValues("output", i.out, out); err != nil {
		return &kernels.RunError{Kernel: i.label, Err: err}
	}
	if len(i.recipe.Parts) > 0 {
		var carved []alloc.CarvedPart
		if ws != nil {
			carved = ws.Parts()
		}
		for j, p := range i.recipe.Parts {
			var have int64
			if j < len(carved) && carved[j].Name == p.Name {
				have = carved[j].Size
			}
			need := p.Size
			if j == i.measured {
				need = min(need, alloc.DefaultPartAlign) // a cap: the products choose within what they get
			}
			if have < need {
				return &kernels.WorkspaceError{Kernel: i.label, Part: p.Name, Need: need, Have: have}
			}
		}
	}
	if err := i.prog.exec(s, in, out, ws, launch); err != nil {
		return &kernels.RunError{Kernel: i.label, Err: err}
	}
	return nil
}
