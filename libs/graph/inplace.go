package graph

import "carve.dev/libs/planner"

// InPlace is one pair of a kernel's in-place contract: the node's output Output may be written
// over its input Input's bytes (kernels.InPlace says when a kernel may declare it).
type InPlace struct{ Output, Input int }

// InPlaceFunc returns the in-place pairs n's kernel declares at the binding at hand; nil for
// none. The kernels library supplies it.
type InPlaceFunc func(n *Node) ([]InPlace, error)

// inPlace gives each output that may take an input's bytes that input's buffer
// (planner.Buffer.InPlace), in the order l runs the nodes. Output o of node n, at step s, takes
// the buffer of its input v, pair (o, v) declared by n's kernel, when
//
//  1. o has a buffer of its own, defined by n (not a view, an external or a host value);
//  2. v's buffer holds activations only: defined by a kernel, none of its values a graph output,
//     graph input or host value (those persist or are copied in), and it is no workspace;
//  3. n is the last step that reads v's buffer (its End is s+1), through any of the values
//     sharing it, and reads it through no input but v;
//  4. o and v have one dtype, and o, v and the two buffers one byte size (and alignment), not 0;
//  5. v's buffer is taken by no other output, and o's takes no other buffer.
//
// 1-3 are what planner.Validate requires of an in-place buffer, read off the graph: the two
// buffers share step s alone. It returns how many outputs take an input's bytes.
func (l *Lifetimes) inPlace(b *Binding, fn InPlaceFunc) (int, error) {
	bufs := l.Problem.Buffers
	taken := make([]bool, len(bufs))
	takes := make([]bool, len(bufs))
	count := 0
	for s, n := range l.Steps {
		pairs, err := fn(n)
		if err != nil {
			return 0, err
		}
		for _, p := range pairs {
			o, v := at(n.Outputs, p.Output), at(n.Inputs, p.Input)
			if o == nil || v == nil {
				continue
			}
			i, ok := l.Buffer(o)
			k, okv := l.Buffer(v)
			if !ok || !okv || i == k || takes[i] || taken[k] {
				continue
			}
			bi, bk := &bufs[i], &bufs[k]
			if own := l.Owners[i]; own.Node != n || own.Values[0] != o || bi.Start != s || bi.Kind == planner.Workspace { // 1
				continue
			}
			if !activationsOnly(l.Owners[k], bk.Kind) { // 2
				continue
			}
			if bk.End != s+1 || bk.Start >= s || readsElsewhere(l, n, p.Input, k) { // 3
				continue
			}
			if o.DType != v.DType || b.Size(o) != b.Size(v) || bi.Size != bk.Size || bi.Size != b.Size(o) || bi.Size == 0 ||
				bi.Alignment() != bk.Alignment() { // 4
				continue
			}
			bi.InPlace = bk.ID
			takes[i], taken[k] = true, true // 5
			count++
		}
	}
	return count, nil
}

// at is vs[i], nil when i is out of range.
func at(vs []*Value, i int) *Value {
	if i < 0 || i >= len(vs) {
		return nil
	}
	return vs[i]
}

// activationsOnly reports whether a buffer holds only values that kernels compute and nothing
// reads past the run: no graph output, input or host value, and no workspace.
func activationsOnly(own BufferOwner, kind planner.Kind) bool {
	if kind != planner.Activation || len(own.Values) == 0 {
		return false
	}
	for _, v := range own.Values {
		if v.Output || v.Host || v.Kind != KindActivation || v.Producer == nil {
			return false
		}
	}
	return true
}

// readsElsewhere reports whether n reads buffer k through an input other than input j.
func readsElsewhere(l *Lifetimes, n *Node, j, k int) bool {
	for i, v := range n.Inputs {
		if i == j || v == nil {
			continue
		}
		if kb, ok := l.Buffer(v); ok && kb == k {
			return true
		}
	}
	return false
}
