// Package cpu is the CPU backend of carve's kernels: every op the graph library supports, on host
// memory, with the workspace contract of package kernels.
package cpu

import (
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// runner is an op's execution, with its attributes parsed and shapes resolved at Select.
// ws holds the carved recipe parts, already checked against the recipe.
type runner interface {
	run(in, out []kernels.Tensor, ws wsParts) error
}

// plan is what an op's select function produces for one node.
type plan struct {
	tactic string
	parts  []alloc.Part // workspace recipe parts; nil for none
	r      runner
	// inPlace is the kernel's in-place contract at this node (kernels.InPlace): the outputs
	// that may take inputs' bytes; nil for none.
	inPlace []kernels.InPlace
}

// op is one CPU kernel: an op with its tactics.
type op struct {
	key     kernels.OpKey
	tactics []kernels.TacticInfo
	// sel validates the node and plans its execution.
	sel func(n *kernels.Node, d kernels.Target) (plan, error)
	// bound is W over ranges; nil for ops that never use workspace.
	bound func(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error)
}

var direct = []kernels.TacticInfo{{Name: "direct", Summary: "single pass, no workspace"}}

func (o *op) Op() kernels.OpKey                    { return o.key }
func (o *op) Backend() string                      { return kernels.BackendCPU }
func (o *op) Tactics() []kernels.TacticInfo        { return o.tactics }
func (o *op) nodeErr(name string, err error) error { return kernels.NodeErr(name, o.key, err) }

func (o *op) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	if d.Workers < 1 {
		d.Workers = 1
	}
	if err := kernels.CheckNodeSizes(n); err != nil {
		return nil, o.nodeErr(n.Name, err)
	}
	p, err := o.sel(n, d)
	if err != nil {
		return nil, o.nodeErr(n.Name, err)
	}
	label, recipe, err := kernels.InstanceRecipe(n, o.key, p.tactic, p.parts)
	if err != nil {
		return nil, o.nodeErr(n.Name, err)
	}
	inst := &instance{label: label, tactic: p.tactic, recipe: recipe, impl: p.r, inPlace: p.inPlace}
	inst.in = kernels.Expectations(n.Inputs)
	inst.out = kernels.Expectations(n.Outputs)
	return inst, nil
}

func (o *op) Bound(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	if o.bound == nil {
		return kernels.Bound{}, nil
	}
	if d.Workers < 1 {
		d.Workers = 1
	}
	if err := kernels.CheckRange(r); err != nil {
		return kernels.Bound{}, o.nodeErr(r.Name, err)
	}
	b, err := o.bound(r, d)
	if err != nil {
		return kernels.Bound{}, o.nodeErr(r.Name, err)
	}
	return b, nil
}

// instance is a CPU kernel bound to one node. It is immutable and safe for concurrent use.
type instance struct {
	label   string
	tactic  string
	recipe  alloc.Recipe
	in, out []kernels.Expect
	impl    runner
	inPlace []kernels.InPlace
}

func (i *instance) Tactic() string             { return i.tactic }
func (i *instance) Recipe() alloc.Recipe       { return i.recipe }
func (i *instance) InPlace() []kernels.InPlace { return i.inPlace }

// checkValues checks got against want (kernels.CheckTensors) and that each tensor's data holds
// its bytes.
func checkValues(kind string, want []kernels.Expect, got []kernels.Tensor) error {
	if err := kernels.CheckTensors(kind, want, got); err != nil {
		return err
	}
	for j := range want {
		if w, t := &want[j], &got[j]; w.Present && int64(len(t.Data)) < w.Bytes {
			return fmt.Errorf("%s %d holds %d bytes, want %d", kind, j, len(t.Data), w.Bytes)
		}
	}
	return nil
}

// Run checks inputs, outputs and workspace against what the instance was selected for, then
// runs the kernel. Nothing is written before every check has passed.
func (i *instance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, _ alloc.Stream) error {
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
			if have < p.Size {
				return &kernels.WorkspaceError{Kernel: i.label, Part: p.Name, Need: p.Size, Have: have}
			}
		}
	}
	if err := i.impl.run(in, out, wsParts{w: ws}); err != nil {
		return &kernels.RunError{Kernel: i.label, Err: err}
	}
	return nil
}

// wsParts is a checked workspace as the CPU kernels see it: part i's host bytes. It is passed
// by value (a slice of a local array would escape through the runner interface and allocate).
type wsParts struct {
	w   *alloc.Workspace
	off int
}

// bytes returns part i's host bytes.
func (p wsParts) bytes(i int) []byte {
	return p.w.Parts()[p.off+i].Region().Bytes()
}

// skip drops the first n parts.
func (p wsParts) skip(n int) wsParts { return wsParts{p.w, p.off + n} }
