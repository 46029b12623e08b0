// Package cpu is the CPU backend of carve's kernels: every op the graph library supports, on host
// memory, with the workspace contract of package kernels.
package cpu

import (
	"errors"
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
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
	inst.in = expectations(n.Inputs)
	inst.out = expectations(n.Outputs)
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

// expect is what Run checks of one input or output.
type expect struct {
	present bool
	dtype   graph.DType
	shape   []int64
	bytes   int
}

func expectations(vs []kernels.Value) []expect {
	out := make([]expect, len(vs))
	for i, v := range vs {
		if !v.Present() {
			continue
		}
		b, _ := kernels.ByteSize(v.DType, v.Shape) // checked in Select
		out[i] = expect{present: true, dtype: v.DType, shape: append([]int64(nil), v.Shape...), bytes: int(b)}
	}
	return out
}

// instance is a CPU kernel bound to one node. It is immutable and safe for concurrent use.
type instance struct {
	label   string
	tactic  string
	recipe  alloc.Recipe
	in, out []expect
	impl    runner
	inPlace []kernels.InPlace
}

func (i *instance) Tactic() string             { return i.tactic }
func (i *instance) Recipe() alloc.Recipe       { return i.recipe }
func (i *instance) InPlace() []kernels.InPlace { return i.inPlace }

// errShape and friends are static so that the checks in Run do not allocate on success.
var (
	errArity = errors.New("wrong number of inputs or outputs")
)

func checkValues(kind string, want []expect, got []kernels.Tensor) error {
	if len(got) < len(want) {
		return errArity
	}
	for j := range want {
		w := &want[j]
		if !w.present {
			continue
		}
		t := &got[j]
		if t.DType != w.dtype || len(t.Shape) != len(w.shape) || len(t.Data) < w.bytes {
			return fmt.Errorf("%s %d is %v with %d bytes, want %v%v (%d bytes)", kind, j, *t, len(t.Data), w.dtype, w.shape, w.bytes)
		}
		for k, d := range w.shape {
			if t.Shape[k] != d {
				return fmt.Errorf("%s %d has shape %v, want %v", kind, j, t.Shape, w.shape)
			}
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
