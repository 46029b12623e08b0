package rewrite

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"carve.dev/libs/graph"
)

// The helpers below read a loaded graph: which node produces a value, who reads it, what a
// constant holds. They never modify it.

// is reports whether n is the ai.onnx op named op.
func is(n *graph.Node, op string) bool { return n != nil && n.Domain == "" && n.OpType == op }

// from returns v's producer if it is the ai.onnx op named op.
func from(v *graph.Value, op string) *graph.Node {
	if v != nil && is(v.Producer, op) {
		return v.Producer
	}
	return nil
}

// only reports whether n is the one reader of v, and v no graph output.
func only(v *graph.Value, n *graph.Node) bool {
	return v != nil && !v.Output && len(v.Consumers) == 1 && v.Consumers[0] == n
}

// readers describes who reads v, for reasons.
func readers(v *graph.Value) string {
	var names []string
	for _, c := range v.Consumers {
		names = append(names, fmt.Sprintf("%s (%s)", c.Name, opLabel(c)))
	}
	if v.Output {
		names = append(names, "the graph's outputs")
	}
	return strings.Join(names, ", ")
}

// exclusive returns "" if n is v's only reader and v is no graph output, else why not.
func exclusive(v *graph.Value, n *graph.Node, what string) string {
	if only(v, n) {
		return ""
	}
	return fmt.Sprintf("%s %s is read by %s, not only by %s", what, v.Name, readers(v), n.Name)
}

func opLabel(n *graph.Node) string {
	if n.Domain == "" {
		return n.OpType
	}
	return n.Domain + "." + n.OpType
}

// constData returns the data of a value known at load: an initializer, the output of a
// Constant node, or either through Identity nodes (as TorchScript exports write weights that
// several nodes read, or that keep their names in training-preserving exports).
func constData(v *graph.Value) (*graph.HostTensor, bool) {
	for v != nil && v.Kind == graph.KindActivation && is(v.Producer, "Identity") {
		v = v.Producer.Inputs[0]
	}
	if v == nil {
		return nil, false
	}
	switch v.Kind {
	case graph.KindInitializer:
		if _, ext := v.Init.External(); ext {
			return nil, false // not read here: a missing file would fail later, not now
		}
		t, err := v.Init.Host()
		return t, err == nil
	case graph.KindConstant:
		at := v.Producer.Attrs
		if t, ok := at.Tensor("value"); ok {
			return t, true
		}
		if at.Has("value_float") {
			return &graph.HostTensor{DType: graph.Float32, Data: binary.LittleEndian.AppendUint32(nil, math.Float32bits(at.Float("value_float", 0)))}, true
		}
		if at.Has("value_int") {
			return &graph.HostTensor{DType: graph.Int64, Data: binary.LittleEndian.AppendUint64(nil, uint64(at.Int("value_int", 0)))}, true
		}
		if vs := at.Ints("value_ints"); at.Has("value_ints") {
			b := make([]byte, 0, 8*len(vs))
			for _, x := range vs {
				b = binary.LittleEndian.AppendUint64(b, uint64(x))
			}
			return &graph.HostTensor{DType: graph.Int64, Shape: []int64{int64(len(vs))}, Data: b}, true
		}
	}
	return nil, false
}

// scalar returns the value of a one-element float constant.
func scalar(v *graph.Value) (float64, bool) {
	t, ok := constData(v)
	if !ok {
		return 0, false
	}
	if n, err := graph.NumElements(t.Shape); err != nil || n != 1 {
		return 0, false
	}
	return floatAt(t.DType, t.Data)
}

// floatAt decodes the first element of little-endian float data.
func floatAt(dt graph.DType, b []byte) (float64, bool) {
	switch {
	case dt == graph.Float32 && len(b) >= 4:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
	case dt == graph.Float64 && len(b) >= 8:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), true
	case dt == graph.BFloat16 && len(b) >= 2:
		return float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16)), true
	case dt == graph.Float16 && len(b) >= 2:
		return halfToFloat(binary.LittleEndian.Uint16(b)), true
	}
	return 0, false
}

// halfToFloat decodes an IEEE 754 binary16 value. Written out here because graph has no
// float16 decoder and the rewrite reads only a handful of scalars.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10)&0x1f, float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// constInts returns the data of an integer constant.
func constInts(v *graph.Value) ([]int64, bool) {
	t, ok := constData(v)
	if !ok {
		return nil, false
	}
	x, err := t.Int64s()
	return x, err == nil
}

// allBool reports whether v is a bool constant all of whose elements are want.
func allBool(v *graph.Value, want bool) bool {
	t, ok := constData(v)
	if !ok || t.DType != graph.Bool || len(t.Data) == 0 {
		return false
	}
	for _, b := range t.Data {
		if (b != 0) != want {
			return false
		}
	}
	return true
}

// isFloat reports whether dt is a type the fused ops accept.
func isFloat(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float16 || dt == graph.BFloat16
}

// axesOf returns the axes of a Reduce*, Squeeze or Unsqueeze node: input 1 (opset 13+ for
// Squeeze/Unsqueeze, 18+ for reductions) or the axes attribute.
func axesOf(n *graph.Node) ([]int64, bool) {
	if in := n.Input(1); in != nil {
		return constInts(in)
	}
	if n.Attrs.Has("axes") {
		return n.Attrs.Ints("axes"), true
	}
	return nil, false
}

// isLastAxis reports whether axes is exactly the last axis of a rank-r tensor.
func isLastAxis(axes []int64, r int) bool {
	return len(axes) == 1 && (axes[0] == -1 || axes[0] == int64(r-1))
}

// differ reports whether two dims are constants that differ: the one shape conflict the
// rewrite can decide. Symbolic dims that the exported graph ties together are checked at Bind.
func differ(a, b graph.Dim) bool {
	x, ok1 := a.Value()
	y, ok2 := b.Value()
	return ok1 && ok2 && x != y
}

// scaleChain peels Mul and Div by scalars off v, returning the value under them and the
// product of their factors (divisors inverted). A scalar is a one-element float constant,
// or one that model m computes on the host from constants and static dims (hostScalar).
// next is the node that reads v; with strict, every peeled value must be read by the chain
// alone (their nodes are returned). Where the chain stops at a Mul or Div by a one-element
// float that is not known at load, why says so, for the reason of a match that fails there.
func scaleChain(m *graph.Model, v *graph.Value, next *graph.Node, strict bool) (inner *graph.Value, factor float64, nodes []*graph.Node, why string) {
	factor = 1
	for v != nil && v.Producer != nil && (!strict || only(v, next)) {
		n := v.Producer
		var c float64
		var x *graph.Value
		why = ""
		switch {
		case is(n, "Mul"):
			for i := range 2 {
				s, w := hostScalar(m, n.Inputs[1-i])
				if w == "" {
					c, x = s, n.Inputs[i]
					break
				}
				if why == "" && oneFloat(n.Inputs[1-i]) {
					why = fmt.Sprintf("%s scales %s by %s, which is not known at load: %s", n.Name, n.Inputs[i].Name, n.Inputs[1-i].Name, w)
				}
			}
		case is(n, "Div"):
			s, w := hostScalar(m, n.Inputs[1])
			switch {
			case w == "" && s != 0:
				c, x = 1/s, n.Inputs[0]
			case w != "" && oneFloat(n.Inputs[1]):
				why = fmt.Sprintf("%s divides %s by %s, which is not known at load: %s", n.Name, n.Inputs[0].Name, n.Inputs[1].Name, w)
			}
		}
		if x == nil || x.DType != v.DType || !sameShape(x, v) {
			break
		}
		why = ""
		factor *= c
		nodes = append(nodes, n)
		v, next = x, n
	}
	return v, factor, nodes, why
}

// sameShape reports whether a and b have the same shape: every dim equal, constants or symbols.
func sameShape(a, b *graph.Value) bool { return slices.EqualFunc(a.Shape, b.Shape, graph.Dim.Equal) }

// f32 formats a float as the float32 it becomes in an attribute.
func f32(x float64) string { return strconv.FormatFloat(x, 'g', -1, 32) }

// other returns the input of binary node n that is not v (nil if n does not read v).
func other(n *graph.Node, v *graph.Value) *graph.Value {
	switch {
	case len(n.Inputs) != 2:
		return nil
	case n.Inputs[0] == v:
		return n.Inputs[1]
	case n.Inputs[1] == v:
		return n.Inputs[0]
	}
	return nil
}
