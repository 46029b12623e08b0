package kernels

import (
	"fmt"

	"carve.dev/libs/graph"
)

// Domains of the ops kernels implement.
const (
	DomainONNX      = ""                // the default ONNX domain (also spelled "ai.onnx")
	DomainMicrosoft = "com.microsoft"   // onnxruntime's contrib ops
	DomainCarve     = graph.DomainCarve // carve's own fused ops (graph/rewrite)
)

// OpKey names an op: its domain and type.
type OpKey struct {
	Domain string
	Op     string
}

// Key normalizes a domain ("ai.onnx" is the default domain) and pairs it with op.
func Key(domain, op string) OpKey {
	if domain == "ai.onnx" {
		domain = DomainONNX
	}
	return OpKey{Domain: domain, Op: op}
}

func (k OpKey) String() string {
	if k.Domain == DomainONNX {
		return k.Op
	}
	return k.Domain + "." + k.Op
}

// Value describes one input or output of a node at concrete shapes.
type Value struct {
	DType graph.DType // graph.Undefined marks an absent optional input or output
	Shape []int64
	// Const holds a small input's bytes when they are known before any run (a weight or a value
	// computed on the host at bind time, up to MaxConstBytes); nil otherwise. A kernel may read
	// parameters such as axes from it at Select instead of recovering them from shapes.
	Const []byte
	// Initializer reports that the value is one of the model's initializers (a weight): the same
	// bytes at every run, which no kernel writes. A kernel may read it at any time, even before
	// the kernels ahead of it on the stream have finished.
	Initializer bool
}

// MaxConstBytes bounds Value.Const: larger known inputs are left to be read at run time.
const MaxConstBytes = 4096

// Present reports whether the value exists (an optional input or output may be absent).
func (v Value) Present() bool { return v.DType != graph.Undefined }

func (v Value) String() string {
	if !v.Present() {
		return "absent"
	}
	return fmt.Sprintf("%v%v", v.DType, v.Shape)
}

// Node is what a kernel sees of one graph node at a binding: op, attributes, and the concrete
// dtype and shape of every input and output (shape inference is the graph library's job).
// Trailing absent optional inputs may be left out of Inputs.
type Node struct {
	Name    string
	Op      string
	Domain  string
	Opset   int64 // the model's opset for Domain; 0 means the newest. Only a few ops differ by opset.
	Attrs   graph.Attributes
	Inputs  []Value
	Outputs []Value
}

// Key is the node's op key, with its domain normalized.
func (n *Node) Key() OpKey { return Key(n.Domain, n.Op) }

// Input returns input i and whether it is present.
func (n *Node) Input(i int) (Value, bool) {
	if i < 0 || i >= len(n.Inputs) || !n.Inputs[i].Present() {
		return Value{}, false
	}
	return n.Inputs[i], true
}

// Output returns output i and whether it is present.
func (n *Node) Output(i int) (Value, bool) {
	if i < 0 || i >= len(n.Outputs) || !n.Outputs[i].Present() {
		return Value{}, false
	}
	return n.Outputs[i], true
}

// DimRange is an inclusive range [Lo, Hi] of one dim; Lo == Hi for a fixed dim.
type DimRange struct{ Lo, Hi int64 }

// Fixed is the range of a dim that does not vary.
func Fixed(d int64) DimRange { return DimRange{d, d} }

// ValueRange is a value whose dims range over intervals.
type ValueRange struct {
	DType graph.DType // graph.Undefined marks an absent optional value
	Dims  []DimRange
}

// Present reports whether the value exists.
func (v ValueRange) Present() bool { return v.DType != graph.Undefined }

// FixedValue is the range of a value with one concrete shape.
func FixedValue(v Value) ValueRange {
	r := ValueRange{DType: v.DType, Dims: make([]DimRange, len(v.Shape))}
	for i, d := range v.Shape {
		r.Dims[i] = Fixed(d)
	}
	return r
}

// NodeRange describes a node over shape ranges, for workspace bounds. Outputs may be nil when
// the output ranges are unknown; kernels whose workspace depends on outputs then report an error.
type NodeRange struct {
	Name    string
	Op      string
	Domain  string
	Opset   int64
	Attrs   graph.Attributes
	Inputs  []ValueRange
	Outputs []ValueRange
}

// Key is the node's op key, with its domain normalized.
func (r *NodeRange) Key() OpKey { return Key(r.Domain, r.Op) }

// Input returns input range i and whether it is present.
func (r *NodeRange) Input(i int) (ValueRange, bool) {
	if i < 0 || i >= len(r.Inputs) || !r.Inputs[i].Present() {
		return ValueRange{}, false
	}
	return r.Inputs[i], true
}

// Output returns output range i and whether it is present.
func (r *NodeRange) Output(i int) (ValueRange, bool) {
	if i < 0 || i >= len(r.Outputs) || !r.Outputs[i].Present() {
		return ValueRange{}, false
	}
	return r.Outputs[i], true
}

// RangeOf is the degenerate range of a concrete node: every dim fixed.
func RangeOf(n *Node) *NodeRange {
	r := &NodeRange{Name: n.Name, Op: n.Op, Domain: n.Domain, Opset: n.Opset, Attrs: n.Attrs}
	for _, v := range n.Inputs {
		r.Inputs = append(r.Inputs, FixedValue(v))
	}
	for _, v := range n.Outputs {
		r.Outputs = append(r.Outputs, FixedValue(v))
	}
	return r
}
