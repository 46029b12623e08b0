package graph

import (
	"fmt"

	"carve.dev/libs/planner"
)

// WorkspaceFunc returns the workspace bytes a node needs for the binding at hand; 0 for
// none. The kernels library supplies it.
type WorkspaceFunc func(n *Node) (int64, error)

// Lifetimes is the planner problem of one binding: which buffers the arena must hold and
// when, in the model's execution order. It is immutable and safe for concurrent reads.
type Lifetimes struct {
	Problem planner.Problem
	// Steps is the execution order, a topological order of the model's nodes: step i runs
	// Steps[i]. It is the model's order (Model.Nodes) unless the lifetimes were derived in
	// another (LifetimesIn, LifetimesSunk).
	Steps []*Node
	// Owners is parallel to Problem.Buffers and says what each buffer holds.
	Owners []BufferOwner
	// InPlace counts the outputs written over an input's bytes: the buffers whose
	// planner.Buffer.InPlace names another (LifetimesSunk with an InPlaceFunc).
	InPlace int

	bufOf []int // by Value.ID: index into Problem.Buffers, or -1 when v takes no arena bytes
	step  []int // by Node.Index: the step that runs the node
}

// Step returns the step that runs n: its position in Steps.
func (l *Lifetimes) Step(n *Node) int { return l.step[n.Index] }

// BufferOwner is what one planner buffer holds: a value and the views that share its bytes,
// or a node's workspace.
type BufferOwner struct {
	Values []*Value // the defining value first, then its views; nil for a workspace
	Node   *Node    // the workspace's node; for an activation, the node defining Values[0]
}

// Buffer returns the index in Problem.Buffers of the buffer holding v, and false when v takes
// no arena bytes (a weight, a constant, a host value, a graph input or a view of one).
func (l *Lifetimes) Buffer(v *Value) (int, bool) {
	i := l.bufOf[v.ID]
	return i, i >= 0
}

// Residency says where the values that kernels read but no kernel writes live: graph inputs and
// host-computed values.
type Residency uint8

const (
	// HostResident: they stay in host memory, where host-visible kernels (the CPU's) read them.
	// They take no arena bytes.
	HostResident Residency = iota
	// DeviceResident: a discrete device reaches only its own memory, so graph inputs and the
	// host-computed values that kernels read get arena bytes from step 0 (they are copied in
	// before the first kernel): an input to one past its last use, a host value to the end of the
	// run, so that it survives the run and a session copies it in once for as long as it runs
	// the same shapes. Host values are computed at Bind and differ by binding, hence the arena;
	// values whose data is known at load and the same at every binding — weights and Constant
	// outputs (Kind KindInitializer, KindConstant) — take no arena bytes under either residency:
	// the runner keeps the ones kernels read in device memory once, beside the weights.
	DeviceResident
)

// Lifetimes derives the planner problem of the binding for HostResident values; see LifetimesFor.
func (b *Binding) Lifetimes(workspace WorkspaceFunc) (*Lifetimes, error) {
	return b.LifetimesFor(HostResident, workspace)
}

// LifetimesFor derives the planner problem of the binding in the model's execution order (step
// i runs Model.Nodes[i]); see LifetimesIn.
func (b *Binding) LifetimesFor(r Residency, workspace WorkspaceFunc, external ...*Value) (*Lifetimes, error) {
	return b.LifetimesIn(b.Model.Nodes, r, workspace, external...)
}

// LifetimesIn derives the planner problem of the binding in the execution order given (step i
// runs order[i]; order holds every node of the model once, each after the producers of its
// inputs):
//   - each activation gets a buffer from the step that defines it to one past its last use;
//   - views (Reshape, Squeeze, Unsqueeze, Flatten, Identity) share their input's buffer,
//     which then lives until the views' last use too;
//   - graph outputs live to the end of the run;
//   - weights and Constant outputs take no arena bytes (the runner holds them elsewhere, resident
//     once on a discrete device), and neither do
//     graph inputs, host values and views of them, unless r is DeviceResident (see Residency);
//   - a node for which workspace returns more than 0 bytes gets a Workspace buffer for its
//     step only;
//   - external values (graph inputs and outputs whose bytes their owner places elsewhere, such
//     as a KV cache held for a whole generation) and views of them take no arena bytes.
//
// workspace may be nil (no workspaces). An external value must be a graph input or a graph
// output that a kernel computes (not a view).
func (b *Binding) LifetimesIn(order []*Node, r Residency, workspace WorkspaceFunc, external ...*Value) (*Lifetimes, error) {
	m := b.Model
	steps := len(m.Nodes)
	step, err := orderSteps(m, order)
	if err != nil {
		return nil, err
	}
	l := &Lifetimes{Steps: order, bufOf: make([]int, len(m.Values)), step: step}
	l.Problem.Buffers = make([]planner.Buffer, 0, len(m.Values)+len(m.Nodes)/4)
	l.Owners = make([]BufferOwner, 0, cap(l.Problem.Buffers))
	for i := range l.bufOf {
		l.bufOf[i] = -1
	}
	held := make(map[*Value]bool, len(external))
	for _, v := range external {
		if v == nil || v.ID >= len(m.Values) || m.Values[v.ID] != v || (v.Kind != KindInput && !(v.Output && v.Kind == KindActivation && !v.Host)) {
			return nil, fmt.Errorf("graph: external value %v is neither a graph input nor a computed graph output", v)
		}
		if p := v.Producer; p != nil && p.IsView() {
			return nil, fmt.Errorf("graph: external output %q is a view of %s's input; it must be computed by a kernel", v.Name, p)
		}
		held[v] = true
	}
	if r == DeviceResident {
		// Graph inputs first, then host values, each in a buffer of its own from step 0.
		resident := func(v *Value, end int) {
			if v == nil || l.bufOf[v.ID] >= 0 || held[v] || !v.ReadByKernel() {
				return
			}
			l.bufOf[v.ID] = len(l.Problem.Buffers)
			l.Problem.Buffers = append(l.Problem.Buffers, planner.Buffer{
				ID: v.Name, Size: b.Size(v), Start: 0, End: end, Kind: planner.Activation,
			})
			l.Owners = append(l.Owners, BufferOwner{Values: []*Value{v}, Node: v.Producer})
		}
		for _, v := range m.Inputs {
			resident(v, 1)
		}
		for _, n := range m.Nodes {
			for _, o := range n.Outputs {
				if o != nil && o.Kind == KindActivation && o.Host {
					resident(o, steps)
				}
			}
		}
	}
	// root[v] is the value whose buffer v uses: itself, or for a view its input's root.
	// Nodes are in topological order, so a view's input is resolved before the view.
	for _, n := range order {
		for _, o := range n.Outputs {
			if o == nil || o.Kind != KindActivation || o.Host || held[o] {
				continue
			}
			if in := n.Input(0); n.IsView() && in != nil {
				if i := l.bufOf[in.ID]; i >= 0 {
					l.bufOf[o.ID] = i
					l.Owners[i].Values = append(l.Owners[i].Values, o)
				}
				// A view of an input, weight, constant or host value needs no arena bytes.
				continue
			}
			l.bufOf[o.ID] = len(l.Problem.Buffers)
			l.Problem.Buffers = append(l.Problem.Buffers, planner.Buffer{
				ID: o.Name, Size: b.Size(o), Start: step[n.Index], End: step[n.Index] + 1,
				Kind: planner.Activation, Node: n.Name,
			})
			l.Owners = append(l.Owners, BufferOwner{Values: []*Value{o}, Node: n})
		}
	}
	// Extend each buffer over the uses of every value that shares it.
	for i := range l.Problem.Buffers {
		buf := &l.Problem.Buffers[i]
		for _, v := range l.Owners[i].Values {
			if v.Output {
				buf.End, buf.Kind = steps, planner.Output
			}
			for _, c := range v.Consumers {
				buf.End = max(buf.End, step[c.Index]+1)
			}
		}
	}
	if workspace != nil {
		ids := make(map[string]bool, len(l.Problem.Buffers))
		for _, buf := range l.Problem.Buffers {
			ids[buf.ID] = true
		}
		for _, n := range order {
			size, err := workspace(n)
			if err != nil {
				return nil, fmt.Errorf("graph: workspace of %s: %w", n, err)
			}
			if size < 0 {
				return nil, fmt.Errorf("graph: workspace of %s: negative size %d", n, size)
			}
			if size == 0 {
				continue
			}
			id := "workspace/" + n.Name
			if n.Name == "" || ids[id] {
				id = fmt.Sprintf("workspace/%d/%s", n.Index, n.Name)
			}
			ids[id] = true
			l.Problem.Buffers = append(l.Problem.Buffers, planner.Buffer{
				ID: id, Size: size, Start: step[n.Index], End: step[n.Index] + 1, Kind: planner.Workspace, Node: n.Name,
			})
			l.Owners = append(l.Owners, BufferOwner{Node: n})
		}
	}
	return l, nil
}

// orderSteps checks that order is an execution order of m's nodes and returns the step of each
// node, by Node.Index.
func orderSteps(m *Model, order []*Node) ([]int, error) {
	if len(order) != len(m.Nodes) {
		return nil, fmt.Errorf("graph: an order of %d nodes for a model of %d", len(order), len(m.Nodes))
	}
	step := make([]int, len(m.Nodes))
	for i := range step {
		step[i] = -1
	}
	for i, n := range order {
		if n == nil || n.Index >= len(m.Nodes) || m.Nodes[n.Index] != n || step[n.Index] >= 0 {
			return nil, fmt.Errorf("graph: step %d of the order is not a node of the model, or a repeated one", i)
		}
		step[n.Index] = i
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil && (step[v.Producer.Index] < 0 || step[v.Producer.Index] >= i) {
				return nil, fmt.Errorf("graph: %s runs at step %d, before %s, which produces its input %q", n, i, v.Producer, v.Name)
			}
		}
	}
	return step, nil
}

// ReadByKernel reports whether a kernel reads v's bytes at run time: v is a graph output, or some
// consumer computes at least one output that is not a host value (a node whose outputs are all
// host values is shape arithmetic, evaluated at Bind). A discrete device needs such a value in
// its own memory.
func (v *Value) ReadByKernel() bool {
	if v.Output {
		return true
	}
	for _, c := range v.Consumers {
		for _, o := range c.Outputs {
			if o != nil && !o.Host {
				return true
			}
		}
	}
	return false
}
