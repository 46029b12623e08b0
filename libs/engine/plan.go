package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// DefaultStepLimit bounds the planner's exact search by work, not time, so the same model and
// binding give the same plan on every machine: the estimator's figures and the runner's
// reservation must agree to the byte.
const DefaultStepLimit = 200_000

// Options say how a model is planned. The estimator and the runner agree exactly when they
// plan with equal Options.
type Options struct {
	// Registry holds the kernels; nil means the kernels registered for Target.Backend
	// (kernels.RegistryFor): the program must import that backend's package.
	Registry *kernels.Registry
	// Target is what tactic choice may depend on; the zero value means the CPU with Workers
	// workers.
	Target kernels.Target
	// Workers is the CPU backend's worker count when Target is zero; 0 means GOMAXPROCS.
	Workers int
	// Algorithm is the planner's solver; "" means the exact search (seeded by the heuristics)
	// within StepLimit.
	Algorithm planner.Algorithm
	// StepLimit bounds the exact search; 0 means DefaultStepLimit.
	StepLimit int64
	// External names graph inputs and outputs whose bytes live outside the arena, in state
	// buffers that outlive runs (RuntimeOptions.State): they take no arena bytes.
	External []string
	// NoInPlace keeps every output in bytes of its own. By default an output takes an input's
	// bytes where its kernel declares the pair (kernels.InPlace) and the graph allows it (the
	// input's last reader is the node, it persists nowhere: graph.LifetimesSunk).
	NoInPlace bool
	// FullWorkspace plans every kernel whose workspace is a choice (WorkspaceMeasurer) at its
	// declared size, the arena growing for it. By default such a kernel gets what the plan
	// leaves free at its step, at least alloc.DefaultPartAlign (grow.go).
	FullWorkspace bool

	// workspaceCaps are the tight plan's workspace sizes by node (tight.go); nil for the
	// default plan, every kernel at its Recipe.
	workspaceCaps map[*graph.Node]tightCap
}

// NoKernelsError reports a target whose backend this program was built without.
type NoKernelsError struct {
	Target kernels.Target
	Linked []string // the backends the program has
}

func (e *NoKernelsError) Error() string {
	return fmt.Sprintf("engine: no kernels for backend %q in this program (it has %s)", e.Target.Backend, strings.Join(e.Linked, ", "))
}

func (o Options) normalized() (Options, error) {
	if o.Target.Backend == "" {
		o.Target = kernels.CPU(o.Workers)
	}
	if o.Registry == nil {
		r, err := kernels.RegistryFor(o.Target.Backend)
		if err != nil {
			var ub *kernels.UnknownBackendError
			if errors.As(err, &ub) {
				return o, &NoKernelsError{Target: o.Target, Linked: ub.Known}
			}
			return o, err
		}
		o.Registry = r
	}
	if o.StepLimit == 0 {
		o.StepLimit = DefaultStepLimit
	}
	return o, nil
}

// MissingKernelsError reports every op of a model that a backend has no kernel for, so that
// planning for a target names all of them at once instead of the first.
type MissingKernelsError struct {
	Backend string
	Ops     []kernels.OpKey // sorted
	Nodes   int             // how many of the model's nodes use them
}

func (e *MissingKernelsError) Error() string {
	names := make([]string, len(e.Ops))
	for i, k := range e.Ops {
		names[i] = k.String()
	}
	return fmt.Sprintf("engine: backend %q has no kernel for %d of the model's ops (%d nodes): %s",
		e.Backend, len(e.Ops), e.Nodes, strings.Join(names, ", "))
}

// checkKernels fails with a *MissingKernelsError unless every node that runs a kernel has one.
func checkKernels(m *graph.Model, opts Options) error {
	missing := map[kernels.OpKey]bool{}
	nodes := 0
	for _, n := range m.Nodes {
		if stepKind(n) != RunKernel {
			continue
		}
		key := kernels.Key(n.Domain, n.OpType)
		if _, err := opts.Registry.Lookup(opts.Target.Backend, key); err != nil {
			var uo *kernels.UnsupportedOpError
			if !errors.As(err, &uo) {
				return err
			}
			missing[key] = true
			nodes++
		}
	}
	if len(missing) == 0 {
		return nil
	}
	e := &MissingKernelsError{Backend: opts.Target.Backend, Nodes: nodes}
	for k := range missing {
		e.Ops = append(e.Ops, k)
	}
	sort.Slice(e.Ops, func(i, j int) bool { return e.Ops[i].String() < e.Ops[j].String() })
	return e
}

// residency is where the target's kernels read graph inputs and host-computed values.
func residency(t kernels.Target) graph.Residency {
	if t.HostVisible() {
		return graph.HostResident
	}
	return graph.DeviceResident
}

// StepKind says what executing a node takes.
type StepKind uint8

const (
	// RunKernel: the node's kernel runs.
	RunKernel StepKind = iota
	// HostValue: every output was computed on the host at bind time (shape arithmetic).
	HostValue
	// View: the output shares its input's bytes (Reshape, Squeeze, ...); nothing runs.
	View
)

// Step is one node of a planned binding.
type Step struct {
	Node     *graph.Node
	Kind     StepKind
	Instance kernels.Instance // the kernel at this binding's shapes, for RunKernel
	// Workspace is R: the bytes of Instance's Recipe (0 without workspace).
	Workspace int64
	// WorkspaceBuffer is the index of the workspace in Lifetimes.Problem.Buffers, or -1.
	WorkspaceBuffer int
}

// Planned is a model planned for one concrete binding: every value's shape, every node's
// kernel and tactic, and the arena plan of all activations and workspaces. It is immutable
// and safe for concurrent use.
type Planned struct {
	Model     *graph.Model
	Binding   *graph.Binding
	Lifetimes *graph.Lifetimes
	Plan      planner.Plan
	Steps     []Step // Steps[i] is Model.Nodes[i]; they run in the order of Lifetimes.Steps
	Options   Options
	// WithinPlan counts the kernels whose workspace is a choice planned within the bytes the
	// plan leaves free at their step (grow.go); 0 with Options.FullWorkspace.
	WithinPlan int
}

// ArenaBytes is what the runner reserves for this binding: activations and workspaces.
func (p *Planned) ArenaBytes() int64 { return p.Plan.Peak }

// WorkspaceBytes is the sum of the nodes' workspaces (R), planned or not overlapping.
func (p *Planned) WorkspaceBytes() int64 {
	var s int64
	for _, st := range p.Steps {
		s += st.Workspace
	}
	return s
}

// PlanError reports a binding that cannot be planned: an unsupported op, a kernel that rejects
// its shapes, or a binding that does not fit the model.
type PlanError struct {
	Node    *graph.Node // nil when the problem is not one node's
	Binding Binding
	Err     error
}

func (e *PlanError) Error() string {
	if e.Node != nil {
		return fmt.Sprintf("plan at %s: %s: %v", e.Binding, e.Node, e.Err)
	}
	return fmt.Sprintf("plan at %s: %v", e.Binding, e.Err)
}

func (e *PlanError) Unwrap() error { return e.Err }

// KernelNode describes n to the kernels at binding b.
func KernelNode(b *graph.Binding, n *graph.Node) *kernels.Node {
	kn := &kernels.Node{
		Name: n.Name, Op: n.OpType, Domain: n.Domain, Attrs: n.Attrs,
		Opset:   b.Model.Opsets[n.Domain],
		Inputs:  make([]kernels.Value, len(n.Inputs)),
		Outputs: make([]kernels.Value, len(n.Outputs)),
	}
	for i, v := range n.Inputs {
		if v != nil {
			kn.Inputs[i] = kernels.Value{DType: v.DType, Shape: b.Shape(v), Const: constBytes(b, v),
				Initializer: v.Kind == graph.KindInitializer}
		}
	}
	for i, v := range n.Outputs {
		if v != nil {
			kn.Outputs[i] = kernels.Value{DType: v.DType, Shape: b.Shape(v)}
		}
	}
	return kn
}

// constBytes are v's bytes when they are known at bind time and small (kernels.Value.Const).
func constBytes(b *graph.Binding, v *graph.Value) []byte {
	if b.Size(v) > kernels.MaxConstBytes {
		return nil
	}
	switch {
	case v.Kind == graph.KindInitializer && v.Init != nil:
		if data, err := v.Init.Bytes(); err == nil {
			return data
		}
	case v.Host:
		if h, ok := b.Host(v); ok {
			return h.Data
		}
	}
	return nil
}

// stepKind classifies a node: host-computed, a view, or a kernel to run.
func stepKind(n *graph.Node) StepKind {
	host := true
	for _, o := range n.Outputs {
		if o != nil && !o.Host {
			host = false
		}
	}
	switch {
	case host:
		return HostValue
	case n.IsView():
		return View
	}
	return RunKernel
}

// Plan plans m at one concrete binding: binds the dims, selects every node's kernel and tactic
// (R), derives lifetimes in the order the nodes will run (graph.LifetimesSunk: the model's, or
// one with a lower peak) and places activations and workspaces in one arena; a workspace that is
// a choice takes what the plan leaves free at its step (grow.go). The plan passes
// planner.Verify before it is returned.
func Plan(ctx context.Context, m *graph.Model, dims Binding, opts Options) (*Planned, error) {
	opts, err := opts.normalized()
	if err != nil {
		return nil, err
	}
	b, err := graph.Bind(m, dims)
	if err != nil {
		return nil, &PlanError{Binding: dims, Err: err}
	}
	p := &Planned{Model: m, Binding: b, Steps: make([]Step, len(m.Nodes)), Options: opts}
	var growables []*growable
	for i, n := range m.Nodes {
		st := Step{Node: n, Kind: stepKind(n), WorkspaceBuffer: -1}
		if st.Kind == RunKernel {
			inst, err := opts.Registry.Select(KernelNode(b, n), opts.Target)
			if err != nil {
				return nil, &PlanError{Node: n, Binding: dims, Err: err}
			}
			if inst, err = opts.tighten(n, inst); err != nil {
				return nil, &PlanError{Node: n, Binding: dims, Err: err}
			}
			st.Instance = inst
			if st.Workspace, err = inst.Recipe().Size(); err != nil {
				return nil, &PlanError{Node: n, Binding: dims, Err: err}
			}
			g, err := shrink(opts, i, &st)
			if err != nil {
				return nil, &PlanError{Node: n, Binding: dims, Err: err}
			}
			if g != nil {
				growables = append(growables, g)
			}
		}
		p.Steps[i] = st
	}
	external, err := externalValues(m, opts.External)
	if err != nil {
		return nil, &PlanError{Binding: dims, Err: err}
	}
	var inPlace graph.InPlaceFunc
	if !opts.NoInPlace {
		inPlace = p.inPlace
	}
	lt, err := b.LifetimesSunk(residency(opts.Target), func(n *graph.Node) (int64, error) { return p.Steps[n.Index].Workspace, nil }, inPlace, external...)
	if err != nil {
		return nil, &PlanError{Binding: dims, Err: err}
	}
	p.Lifetimes = lt
	if err := p.checkInPlace(); err != nil {
		return nil, &PlanError{Binding: dims, Err: err}
	}
	for i, buf := range lt.Problem.Buffers {
		if buf.Kind == planner.Workspace {
			p.Steps[lt.Owners[i].Node.Index].WorkspaceBuffer = i
		}
	}
	p.Plan, err = solve(ctx, lt.Problem, opts)
	if err != nil {
		return nil, &PlanError{Binding: dims, Err: err}
	}
	p.WithinPlan = len(growables)
	if err := p.grow(growables); err != nil {
		return nil, &PlanError{Binding: dims, Err: err}
	}
	return p, nil
}

// inPlace is the in-place pairs of n's kernel (kernels.InPlaceOf), as the graph names them.
func (p *Planned) inPlace(n *graph.Node) ([]graph.InPlace, error) {
	st := &p.Steps[n.Index]
	if st.Kind != RunKernel {
		return nil, nil
	}
	pairs := kernels.InPlaceOf(st.Instance)
	out := make([]graph.InPlace, len(pairs))
	for i, q := range pairs {
		out[i] = graph.InPlace{Output: q.Output, Input: q.Input}
	}
	return out, nil
}

// InPlaceBytes is the arena bytes the in-place outputs save: the sizes of the buffers that
// take another's bytes.
func (p *Planned) InPlaceBytes() int64 {
	var s int64
	for _, b := range p.Lifetimes.Problem.Buffers {
		if b.InPlace != "" {
			s += b.Size
		}
	}
	return s
}

// checkInPlace checks each in-place buffer of the lifetimes against the kernels, apart from the
// graph's rules (the planner's Verify checks the lifetimes): its value is output i of a node that
// runs a kernel, the buffer it takes holds that node's input j, and the kernel declares (i, j);
// with NoInPlace there is none.
func (p *Planned) checkInPlace() error {
	lt := p.Lifetimes
	index := make(map[string]int, len(lt.Problem.Buffers))
	for i, b := range lt.Problem.Buffers {
		index[b.ID] = i
	}
	for i, b := range lt.Problem.Buffers {
		if b.InPlace == "" {
			continue
		}
		own := lt.Owners[i]
		bad := fmt.Errorf("engine: buffer %q takes %q's bytes, which no kernel declared (a bug)", b.ID, b.InPlace)
		if p.Options.NoInPlace || own.Node == nil || len(own.Values) == 0 {
			return bad
		}
		n, st := own.Node, p.Steps[own.Node.Index]
		if st.Kind != RunKernel {
			return bad
		}
		ok := false
		for _, q := range kernels.InPlaceOf(st.Instance) {
			if q.Output < len(n.Outputs) && n.Outputs[q.Output] == own.Values[0] && q.Input < len(n.Inputs) && n.Inputs[q.Input] != nil {
				if k, has := lt.Buffer(n.Inputs[q.Input]); has && k == index[b.InPlace] {
					ok = true
				}
			}
		}
		if !ok {
			return bad
		}
	}
	return nil
}

// externalValues looks up Options.External.
func externalValues(m *graph.Model, names []string) ([]*graph.Value, error) {
	vs := make([]*graph.Value, len(names))
	for i, name := range names {
		if vs[i] = m.Value(name); vs[i] == nil {
			return nil, fmt.Errorf("external value %q: the model has no such value", name)
		}
	}
	return vs, nil
}

// solve places a problem with the configured solver and verifies the result.
func solve(ctx context.Context, prob planner.Problem, opts Options) (planner.Plan, error) {
	plan, err := planner.Solve(ctx, prob, planner.Options{Algorithm: opts.Algorithm, StepLimit: opts.StepLimit, TimeLimit: noTimeLimit})
	if err != nil {
		return plan, err
	}
	if err := planner.Verify(prob, plan); err != nil {
		return plan, fmt.Errorf("engine: the planner produced an invalid plan (a bug): %w", err)
	}
	return plan, nil
}

// noTimeLimit leaves the exact search to StepLimit alone, so plans do not depend on the machine.
const noTimeLimit = 1 << 62
