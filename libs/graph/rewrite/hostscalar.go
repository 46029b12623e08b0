package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// Scalars known at load.
//
// An export that traces shapes computes a scale on the host rather than writing it as a
// constant: TorchScript's export of scaled_dot_product_attention computes 1/sqrt(head_dim)
// as Div(1, Sqrt(Cast(Slice(Shape(Q), -1:)))) and scales Q and K^T each by Sqrt of it. Such
// a value is the same at every binding when every dim it reads is static, and then it is as
// good a constant as an initializer. hostScalar decides that by construction, not by the
// ops' spelling: it evaluates the value's cone with the evaluator of maskeval.go, reading
// constants and initializers as they are and every host integer value (a shape computation)
// as the data graph infers for it before binding (graph.Model.HostData), which names the
// dims it depends on. A cone that reads a dim that is not a constant, the data of a graph
// input, a value computed on the device, or an op the evaluator does not know is refused,
// and the reason names it. Nothing is probed: data that graph's dim arithmetic does not
// reduce to a constant is refused, even where it would not change with the dims.

// maxHostCone bounds the elements of a value of a cone evaluated at load: a scale's cone
// holds shape vectors and scalars.
const maxHostCone = 1 << 12

// hostScalar returns the value of v, a one-element float that is a constant or computed on
// the host from constants and static dims of model m, or why it is not known at load (a
// clause about v: "it reads ...").
func hostScalar(m *graph.Model, v *graph.Value) (float64, string) {
	if x, ok := scalar(v); ok {
		return x, ""
	}
	if !oneFloat(v) {
		return 0, fmt.Sprintf("it is %s%s, not a one-element float", v.DType, v.Shape)
	}
	if why := hostCone(m, v); why != "" {
		return 0, why
	}
	ev := &evaluator{host: m, env: map[string]int64{}, memo: map[*graph.Value]*etensor{}}
	t, err := ev.eval(v)
	if err != nil {
		return 0, err.Error()
	}
	if len(t.data) != 1 {
		return 0, fmt.Sprintf("it evaluates to %d elements", len(t.data))
	}
	return t.data[0], ""
}

// hostCone returns "" if the cone of v is made of what the evaluator reads at load, else why
// not: it stops at constants and at host integer values, whose data graph knows before
// binding, and refuses graph inputs, values computed on the device and unknown ops, before
// anything is evaluated.
func hostCone(m *graph.Model, v *graph.Value) string {
	seen := map[*graph.Value]bool{}
	var walk func(v *graph.Value) string
	walk = func(v *graph.Value) string {
		if v == nil || seen[v] {
			return ""
		}
		seen[v] = true
		if _, ok := m.HostData(v); ok {
			return "" // the evaluator refuses data that depends on a named dim (knownInts)
		}
		if _, ok := constData(v); ok {
			return ""
		}
		switch v.Kind {
		case graph.KindInput:
			return fmt.Sprintf("it reads the data of the input %s", v.Name)
		case graph.KindInitializer, graph.KindConstant:
			return fmt.Sprintf("it reads %s, which cannot be read at load", v.Name)
		}
		if n, ok := v.Shape.NumElements().Value(); !ok || n > maxHostCone {
			return fmt.Sprintf("it reads %s, computed on the device", v)
		}
		n := v.Producer
		if n.Domain != "" || !evalOps[n.OpType] {
			return fmt.Sprintf("it is computed by %s (%s), an op the evaluator does not know", n.Name, opLabel(n))
		}
		for _, in := range n.Inputs {
			if why := walk(in); why != "" {
				return why
			}
		}
		return ""
	}
	return walk(v)
}

// oneFloat reports whether v is a float of one element: a scalar, if it is known at load.
func oneFloat(v *graph.Value) bool {
	n, ok := v.Shape.NumElements().Value()
	return ok && n == 1 && (isFloat(v.DType) || v.DType == graph.Float64)
}
