package graph

import (
	"fmt"
	"maps"
	"slices"
)

// Spec is a model as plain data, its values named by strings: what Build turns into a Model
// and what Model.Spec returns for one. It is how a program derives a model from another
// (carve.dev/libs/graph/rewrite fuses exported subgraphs this way) or builds one from scratch
// (tests), with the same validation and inference as Load.
type Spec struct {
	Inputs       []ValueSpec // graph inputs that are not initializers, in declaration order
	Initializers []*Tensor   // weights, each named by its Tensor.Name
	// Nodes may come in any order that has no cycle: Build sorts them, keeping this order
	// where it is valid.
	Nodes   []NodeSpec
	Outputs []string // graph outputs, in declaration order

	Opsets    map[string]int64
	IRVersion int64
	Producer  string
}

// ValueSpec declares a graph input. Its dims are constants or named dims (Sym); the named
// dims become the model's DimNames, in order of first appearance.
type ValueSpec struct {
	Name  string
	DType DType
	Shape Shape
}

// NodeSpec is one node: Inputs and Outputs name values ("" for an omitted optional one).
type NodeSpec struct {
	Name    string
	OpType  string
	Domain  string
	Inputs  []string
	Outputs []string
	Attrs   Attributes
}

// Spec returns m as a Spec. The Spec shares m's weights (the *Tensor values) and attributes,
// which are immutable; its slices and maps are its own.
func (m *Model) Spec() Spec {
	s := Spec{Opsets: maps.Clone(m.Opsets), IRVersion: m.IRVersion, Producer: m.Producer}
	for _, v := range m.Inputs {
		s.Inputs = append(s.Inputs, ValueSpec{Name: v.Name, DType: v.DType, Shape: slices.Clone(v.Shape)})
	}
	for _, v := range m.Initializers {
		s.Initializers = append(s.Initializers, v.Init)
	}
	names := func(vs []*Value) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			if v != nil {
				out[i] = v.Name
			}
		}
		return out
	}
	for _, n := range m.Nodes {
		s.Nodes = append(s.Nodes, NodeSpec{Name: n.Name, OpType: n.OpType, Domain: n.Domain,
			Inputs: names(n.Inputs), Outputs: names(n.Outputs), Attrs: n.Attrs})
	}
	s.Outputs = names(m.Outputs)
	return s
}

// Build makes a Model from a Spec, validating it as Load validates a file: a supported
// opset, names defined once, no dangling inputs, no cycles, graph outputs that exist, and
// shape inference over every node (*ModelError, *UnsupportedOpError).
//
// The Model shares the Spec's weights. Weights of a loaded model stay in that model's memory
// mappings: closing either model closes both (Close of a model whose weights are all built
// with NewTensor does nothing). Weights from more than one loaded model are refused.
func Build(s Spec) (*Model, error) {
	b := &builder{m: &Model{byName: map[string]*Value{}}, dims: map[string]bool{}}
	m := b.m
	m.IRVersion, m.Producer = s.IRVersion, s.Producer
	m.Opsets = map[string]int64{}
	for d, v := range s.Opsets {
		if d == "ai.onnx" {
			d = ""
		}
		m.Opsets[d] = v
	}
	if err := checkOpsets(m.Opsets); err != nil {
		return nil, err
	}
	for i, t := range s.Initializers {
		if t == nil || t.Name == "" {
			return nil, &ModelError{Problem: fmt.Sprintf("initializer %d is nil or has no name", i)}
		}
		if m.byName[t.Name] != nil {
			return nil, &ModelError{Tensor: t.Name, Problem: "initializer defined twice"}
		}
		if t.store != nil && t.store != m.weights {
			if m.weights != nil {
				return nil, &ModelError{Tensor: t.Name, Problem: "initializers come from more than one loaded model"}
			}
			m.weights = t.store
		}
		v := b.value(t.Name)
		v.Kind, v.DType, v.Init, v.Shape = KindInitializer, t.DType, t, ConstShape(t.Shape)
		m.Initializers = append(m.Initializers, v)
	}
	for _, in := range s.Inputs {
		if in.Name == "" {
			return nil, &ModelError{Problem: "graph input has no name"}
		}
		if m.byName[in.Name] != nil {
			return nil, &ModelError{Tensor: in.Name, Problem: "graph input declared twice or also an initializer"}
		}
		if err := checkDType(in.DType); err != nil {
			return nil, &ModelError{Tensor: in.Name, Problem: err.Error()}
		}
		for i, d := range in.Shape {
			if err := b.inputDim(d); err != nil {
				return nil, &ModelError{Tensor: in.Name, Problem: fmt.Sprintf("dim %d (%s): %v", i, d, err)}
			}
		}
		v := b.value(in.Name)
		v.Kind, v.DType, v.Shape = KindInput, in.DType, slices.Clone(in.Shape)
		m.Inputs = append(m.Inputs, v)
	}
	m.Nodes = make([]*Node, len(s.Nodes))
	for i, ns := range s.Nodes {
		n := &Node{Index: i, Name: ns.Name, OpType: ns.OpType, Domain: ns.Domain, Attrs: ns.Attrs}
		if n.Domain == "ai.onnx" {
			n.Domain = ""
		}
		m.Nodes[i] = n
		if n.OpType == "" {
			return nil, &ModelError{Node: n, Problem: "node has no op_type"}
		}
		for _, name := range ns.Outputs {
			if name == "" {
				n.Outputs = append(n.Outputs, nil)
				continue
			}
			v := b.value(name)
			if v.Producer != nil || v.Kind != KindActivation {
				return nil, &ModelError{Node: n, Tensor: name, Problem: "value is defined more than once"}
			}
			v.Producer = n
			n.Outputs = append(n.Outputs, v)
		}
	}
	for i, n := range m.Nodes {
		for _, name := range s.Nodes[i].Inputs {
			if name == "" {
				n.Inputs = append(n.Inputs, nil)
				continue
			}
			v := m.byName[name]
			if v == nil {
				return nil, &ModelError{Node: n, Tensor: name, Problem: "input is not a graph input, an initializer or any node's output"}
			}
			n.Inputs = append(n.Inputs, v)
		}
	}
	if err := b.link(s.Outputs); err != nil {
		return nil, err
	}
	if err := infer(m); err != nil {
		return nil, err
	}
	return m, nil
}

// inputDim checks a graph input's dim (a non-negative constant, a named dim, or an expression of
// named dims such as past_seq + seq, which a binding derives from the dims other inputs give) and
// records the named dims in DimNames.
func (b *builder) inputDim(d Dim) error {
	if v, ok := d.Value(); ok {
		if v < 0 {
			return fmt.Errorf("negative")
		}
		return nil
	}
	if err := d.Err(); err != nil {
		return err
	}
	syms := d.Syms(nil)
	if len(syms) == 0 {
		return fmt.Errorf("an input's dim must be a constant, a named dim or an expression of named dims")
	}
	for _, s := range syms {
		b.dim(s)
	}
	return nil
}

// NewTensor returns a weight holding a copy of data: little-endian, densely packed in
// row-major order (4-bit types two to a byte), ByteSize(dt, shape) bytes.
func NewTensor(name string, dt DType, shape []int64, data []byte) (*Tensor, error) {
	if err := checkDType(dt); err != nil {
		return nil, &ModelError{Tensor: name, Problem: err.Error()}
	}
	size, err := ByteSize(dt, shape)
	if err != nil {
		return nil, &ModelError{Tensor: name, Problem: "bad shape", Err: err}
	}
	if int64(len(data)) != size {
		return nil, &ModelError{Tensor: name, Problem: fmt.Sprintf("%d bytes of data, want %d for %s%v", len(data), size, dt, shape)}
	}
	return &Tensor{Name: name, DType: dt, Shape: slices.Clone(shape), Size: size, raw: slices.Clip(slices.Clone(data))}, nil
}
