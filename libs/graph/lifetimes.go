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
	// Steps is the execution order: step i runs Steps[i].
	Steps []*Node
	// Owners is parallel to Problem.Buffers and says what each buffer holds.
	Owners []BufferOwner

	bufOf []int // by Value.ID: index into Problem.Buffers, or -1 when v takes no arena bytes
}

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

// Lifetimes derives the planner problem of the binding, in the model's execution order
// (step i runs Model.Nodes[i]):
//   - each activation gets a buffer from the step that defines it to one past its last use;
//   - views (Reshape, Squeeze, Unsqueeze, Flatten, Identity) share their input's buffer,
//     which then lives until the views' last use too;
//   - graph outputs live to the end of the run;
//   - weights, constants, host values, graph inputs and views of them take no arena bytes
//     (the runner holds them elsewhere);
//   - a node for which workspace returns more than 0 bytes gets a Workspace buffer for its
//     step only.
//
// workspace may be nil (no workspaces).
func (b *Binding) Lifetimes(workspace WorkspaceFunc) (*Lifetimes, error) {
	m := b.Model
	steps := len(m.Nodes)
	l := &Lifetimes{Steps: m.Nodes, bufOf: make([]int, len(m.Values))}
	l.Problem.Buffers = make([]planner.Buffer, 0, len(m.Values)+len(m.Nodes)/4)
	l.Owners = make([]BufferOwner, 0, cap(l.Problem.Buffers))
	for i := range l.bufOf {
		l.bufOf[i] = -1
	}
	// root[v] is the value whose buffer v uses: itself, or for a view its input's root.
	// Nodes are in topological order, so a view's input is resolved before the view.
	for _, n := range m.Nodes {
		for _, o := range n.Outputs {
			if o == nil || o.Kind != KindActivation || o.Host {
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
				ID: o.Name, Size: b.Size(o), Start: n.Index, End: n.Index + 1,
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
				buf.End = max(buf.End, c.Index+1)
			}
		}
	}
	if workspace != nil {
		ids := make(map[string]bool, len(l.Problem.Buffers))
		for _, buf := range l.Problem.Buffers {
			ids[buf.ID] = true
		}
		for _, n := range m.Nodes {
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
				ID: id, Size: size, Start: n.Index, End: n.Index + 1, Kind: planner.Workspace, Node: n.Name,
			})
			l.Owners = append(l.Owners, BufferOwner{Node: n})
		}
	}
	return l, nil
}
