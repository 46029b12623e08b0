package graph

import "fmt"

// Binding is a model with concrete values for its named dims: the concrete shape and byte
// size of every value, and the data of every host value. A Binding is immutable and safe
// for concurrent use.
type Binding struct {
	Model *Model
	Dims  map[string]int64 // the named dims, as given to Bind

	shapes [][]int64     // by Value.ID
	sizes  []int64       // bytes, by Value.ID
	host   []*HostTensor // by Value.ID; nil for device values
}

// Shape returns v's concrete shape. The slice is shared and must not be modified.
func (b *Binding) Shape(v *Value) []int64 { return b.shapes[v.ID] }

// Size returns v's size in bytes.
func (b *Binding) Size(v *Value) int64 { return b.sizes[v.ID] }

// Host returns the data of a host value (a constant, or a shape computation evaluated on
// the host) and whether v is one.
func (b *Binding) Host(v *Value) (*HostTensor, bool) {
	t := b.host[v.ID]
	return t, t != nil
}

// BindError reports a binding that does not fit the model: a missing or negative dim, or a
// node whose shapes do not agree for these dims.
type BindError struct {
	Node    *Node  // nil for problems with the dims themselves
	Value   string // the value concerned, if any
	Problem error
}

func (e *BindError) Error() string {
	switch {
	case e.Node != nil && e.Value != "":
		return fmt.Sprintf("graph: bind: %s, value %q: %v", e.Node, e.Value, e.Problem)
	case e.Node != nil:
		return fmt.Sprintf("graph: bind: %s: %v", e.Node, e.Problem)
	case e.Value != "":
		return fmt.Sprintf("graph: bind: value %q: %v", e.Value, e.Problem)
	}
	return fmt.Sprintf("graph: bind: %v", e.Problem)
}

func (e *BindError) Unwrap() error { return e.Problem }
