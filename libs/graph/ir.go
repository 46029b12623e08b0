package graph

import (
	"fmt"
	"sort"
)

// Model is an ONNX model in carve's intermediate representation: values with dtypes and
// symbolic shapes, nodes in a valid topological order, and lazily loaded weights.
//
// A Model is immutable after Load and safe for concurrent use; Close releases the memory
// mappings of its weights and must not run concurrently with other use.
type Model struct {
	Inputs       []*Value // graph inputs that are not initializers, in declaration order
	Outputs      []*Value // graph outputs, in declaration order
	Nodes        []*Node  // every node, in a valid topological order (producers before consumers)
	Initializers []*Value // weights; each has Kind == KindInitializer and a non-nil Init
	Values       []*Value // every value; Values[i].ID == i

	// Opsets maps an operator domain ("" for ai.onnx, "com.microsoft", ...) to its version.
	Opsets map[string]int64
	// DimNames are the symbolic dims of the graph inputs, in order of first appearance;
	// Bind needs a value for each.
	DimNames []string

	IRVersion int64
	Producer  string // producer_name and producer_version, space separated

	byName  map[string]*Value
	weights *weightStore

	// Inference results that Bind evaluates, by Value.ID.
	hostData [][]Dim       // symbolic data of host integer values
	consts   []*HostTensor // data known at load: Constant outputs, small integer initializers
	checks   []check       // conditions on the dims, in node order
}

// Value returns the value with the given name, or nil.
func (m *Model) Value(name string) *Value { return m.byName[name] }

// Constant returns the data of a Constant node's output (v.Kind == KindConstant) and whether v
// is one. The data is known at load and the same at every binding (Binding.Host returns the same
// tensor), so a runner keeps it where its kernels read it once, as it keeps the weights.
func (m *Model) Constant(v *Value) (*HostTensor, bool) {
	if v == nil || v.Kind != KindConstant || v.ID >= len(m.consts) || m.consts[v.ID] == nil {
		return nil, false
	}
	return m.consts[v.ID], true
}

// HostData returns the data of a host integer value (a shape computation such as
// Shape -> Gather -> Concat, or a small integer constant) as dims over the model's named
// dims, in row-major order, and whether v has such data. It is what Bind evaluates: an
// element that is a constant Dim is the same at every binding, whatever the dims it was
// computed from (Shape(x)[-1] of x [batch, seq, 64] is 64). The slice must not be modified.
func (m *Model) HostData(v *Value) ([]Dim, bool) {
	if v == nil || v.ID >= len(m.hostData) || m.Values[v.ID] != v || m.hostData[v.ID] == nil {
		return nil, false
	}
	return m.hostData[v.ID], true
}

// Close releases the memory mappings behind the model's weights. Tensor bytes obtained
// before Close must not be used after it.
func (m *Model) Close() error {
	if m.weights == nil {
		return nil
	}
	return m.weights.close()
}

// ValueKind says where a value comes from.
type ValueKind uint8

const (
	KindActivation  ValueKind = iota // produced by a node
	KindInput                        // a graph input supplied by the caller
	KindInitializer                  // a weight stored in the model (Init holds it)
	KindConstant                     // produced by a Constant node; its data is known at load
)

func (k ValueKind) String() string {
	switch k {
	case KindActivation:
		return "activation"
	case KindInput:
		return "input"
	case KindInitializer:
		return "initializer"
	case KindConstant:
		return "constant"
	}
	return fmt.Sprintf("ValueKind(%d)", uint8(k))
}

// Value is one tensor of the graph. Values are created by Load and immutable afterwards.
type Value struct {
	ID    int // index in Model.Values
	Name  string
	DType DType
	// Shape is the value's shape over the model's symbolic dims, as inferred at load; a
	// Binding holds the concrete shape for given dims.
	Shape Shape
	Kind  ValueKind

	Producer  *Node   // nil unless Kind is KindActivation or KindConstant
	Consumers []*Node // nodes reading the value, in topological order, each listed once
	Output    bool    // the value is a graph output

	// Host reports that the value's data is computed on the host at Bind (small integer
	// shape computations such as Shape -> Gather -> Concat) or known at load (constants).
	// Host values take no arena bytes; Binding.Host returns their data.
	Host bool

	Init *Tensor // the weight, for KindInitializer; nil otherwise
}

func (v *Value) String() string { return fmt.Sprintf("%s %s%s", v.Name, v.DType, v.Shape) }

// Node is one operator application. Nodes are created by Load and immutable afterwards.
type Node struct {
	Index  int // position in Model.Nodes, which is also its execution step in the model's order
	Name   string
	OpType string
	Domain string // "" for ai.onnx, "com.microsoft", ...
	// Inputs and Outputs are in the operator's positional order; an omitted optional input
	// or output is nil.
	Inputs  []*Value
	Outputs []*Value
	Attrs   Attributes
}

// Input returns the i'th input, or nil if it is omitted or out of range.
func (n *Node) Input(i int) *Value {
	if i < 0 || i >= len(n.Inputs) {
		return nil
	}
	return n.Inputs[i]
}

// Output returns the i'th output, or nil if it is omitted or out of range.
func (n *Node) Output(i int) *Value {
	if i < 0 || i >= len(n.Outputs) {
		return nil
	}
	return n.Outputs[i]
}

func (n *Node) String() string {
	op := n.OpType
	if n.Domain != "" {
		op = n.Domain + "." + op
	}
	return fmt.Sprintf("node %d %q (%s)", n.Index, n.Name, op)
}

// HostTensor is tensor data held on the host: a constant, an attribute's tensor, or a value
// evaluated on the host at Bind. Data is little-endian, densely packed in row-major order
// (4-bit types two to a byte, low nibble first); it may alias the model's memory and must
// not be modified. HostTensor is safe for concurrent reads.
type HostTensor struct {
	DType DType
	Shape []int64
	Data  []byte
}

// Int64s decodes an integer tensor (int8 to int64, uint8 to uint32, bool) into int64s.
func (t *HostTensor) Int64s() ([]int64, error) {
	n, err := NumElements(t.Shape)
	if err != nil {
		return nil, err
	}
	sz := t.DType.Size()
	if b, ok := CheckedMul(n, sz); sz == 0 || !ok || int64(len(t.Data)) != b {
		return nil, fmt.Errorf("graph: %s tensor %v holds %d bytes, want %d elements of %d bytes", t.DType, t.Shape, len(t.Data), n, sz)
	}
	out := make([]int64, n)
	for i := range out {
		v, ok := readInt(t.DType, t.Data[int64(i)*sz:])
		if !ok {
			return nil, fmt.Errorf("graph: %s tensor is not an integer tensor", t.DType)
		}
		out[i] = v
	}
	return out, nil
}

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
