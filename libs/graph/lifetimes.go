package graph

import "carve.dev/libs/planner"

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
