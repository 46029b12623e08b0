package graph

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

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

// BindError reports a binding that does not fit the model: a missing dim, one below 1, or a
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

// Bind evaluates the model's shapes for concrete values of its named dims (Model.DimNames):
// every value's shape and byte size, and the data of every host value. Dims the model does
// not have, missing dims, dims below 1 (a *DimValueError inside), sizes that overflow int64
// and shapes that do not fit a node are *BindError; the error names the node and the problem.
func Bind(m *Model, dims map[string]int64) (*Binding, error) {
	for _, name := range m.DimNames {
		v, ok := dims[name]
		if !ok {
			return nil, &BindError{Problem: fmt.Errorf("dim %q has no value (the model's dims are %v)", name, m.DimNames)}
		}
		if v < 1 {
			return nil, &BindError{Problem: &DimValueError{Dim: name, Value: v}}
		}
	}
	for _, name := range sortedKeys(dims) {
		if !slices.Contains(m.DimNames, name) {
			return nil, &BindError{Problem: fmt.Errorf("the model has no dim %q (its dims are %v)", name, m.DimNames)}
		}
	}
	b := &Binding{
		Model:  m,
		Dims:   maps.Clone(dims),
		shapes: make([][]int64, len(m.Values)),
		sizes:  make([]int64, len(m.Values)),
		host:   make([]*HostTensor, len(m.Values)),
	}
	for _, v := range m.Inputs {
		if err := b.bindValue(v); err != nil {
			return nil, err
		}
	}
	for _, v := range m.Initializers {
		if err := b.bindValue(v); err != nil {
			return nil, err
		}
	}
	ci := 0
	for _, n := range m.Nodes {
		for ; ci < len(m.checks) && m.checks[ci].node == n; ci++ {
			ok, err := m.checks[ci].cond.Eval(dims)
			if err == nil && ok == 0 {
				err = errors.New(m.checks[ci].what)
			}
			if err != nil {
				return nil, &BindError{Node: n, Problem: err}
			}
		}
		for _, o := range n.Outputs {
			if o == nil {
				continue
			}
			if err := b.bindValue(o); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func (b *Binding) bindValue(v *Value) error {
	m := b.Model
	fail := func(err error) error { return &BindError{Node: v.Producer, Value: v.Name, Problem: err} }
	shape, err := v.Shape.Eval(b.Dims)
	if err != nil {
		return fail(err)
	}
	for i, d := range shape {
		if d < 0 {
			return fail(fmt.Errorf("dim %d of shape %v (%v) is negative", i, v.Shape, shape))
		}
	}
	size, err := ByteSize(v.DType, shape)
	if err != nil {
		return fail(err)
	}
	b.shapes[v.ID], b.sizes[v.ID] = shape, size
	switch {
	case m.consts[v.ID] != nil:
		b.host[v.ID] = m.consts[v.ID]
	case m.hostData[v.ID] != nil:
		d := m.hostData[v.ID]
		vals := make([]int64, len(d))
		for i, x := range d {
			if vals[i], err = x.Eval(b.Dims); err != nil {
				return fail(err)
			}
		}
		b.host[v.ID] = encodeInts(v.DType, shape, vals)
	}
	return nil
}
