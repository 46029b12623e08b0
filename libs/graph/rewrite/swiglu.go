package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// The gate of a SiLU-gated MLP, Mul(Swish(gate), up), becomes dev.carve.SwiGLU(gate, up)
// (ONNX's SwiGLU of opset 28, beyond the opsets carve loads): one elementwise kernel instead
// of two, and the Swish's output, a [tokens, intermediate] tensor, is never written. The gate
// may also be the unfused x * Sigmoid(x) (when the SiLU kind was skipped). The two operands
// must have one dtype and one shape (SwiGLU does not broadcast); every dim is compared
// symbolically, so a shape that merely might agree is left as exported.

// swigluCandidate: a Mul one of whose operands is a Swish or an x * Sigmoid(x).
func swigluCandidate(n *graph.Node) bool {
	if !is(n, "Mul") || len(n.Inputs) != 2 {
		return false
	}
	for _, v := range n.Inputs {
		if _, _, ok := gateOf(v); ok {
			return true
		}
	}
	return false
}

// gateOf returns the SiLU producing v: its input, alpha and the nodes computing it (Swish, or
// Sigmoid and Mul).
func gateOf(v *graph.Value) (x *graph.Value, nodes []*graph.Node, ok bool) {
	if v == nil {
		return nil, nil, false
	}
	if sw := from(v, "Swish"); sw != nil {
		return sw.Inputs[0], []*graph.Node{sw}, true
	}
	mul := from(v, "Mul")
	if mul == nil || len(mul.Inputs) != 2 {
		return nil, nil, false
	}
	for i, s := range mul.Inputs {
		sig := from(s, "Sigmoid")
		if sig != nil && sig.Inputs[0] == mul.Inputs[1-i] {
			return sig.Inputs[0], []*graph.Node{sig, mul}, true
		}
	}
	return nil, nil, false
}

// matchSwiGLU matches the gating Mul mul.
func matchSwiGLU(mul *graph.Node) (*match, string) {
	var why string
	for i, g := range mul.Inputs {
		x, nodes, ok := gateOf(g)
		if !ok {
			continue
		}
		up := mul.Inputs[1-i]
		alpha := float32(1)
		if sw := nodes[0]; is(sw, "Swish") {
			alpha = sw.Attrs.Float("alpha", 1)
		}
		if why = swigluOperands(g, x, up, mul, nodes); why != "" {
			continue
		}
		y := mul.Outputs[0]
		return &match{
			kind: SwiGLU, root: mul, interior: append(nodes, mul),
			add: []graph.NodeSpec{{Name: mul.Name + "/SwiGLU", OpType: "SwiGLU", Domain: graph.DomainCarve,
				Inputs: []string{x.Name, up.Name}, Outputs: []string{y.Name},
				Attrs: graph.NewAttributes(graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: alpha})}},
			opsets: map[string]int64{graph.DomainCarve: 1},
			detail: fmt.Sprintf("swish(%s, alpha %s) * %s", x.Name, f32(float64(alpha)), up.Name),
		}, ""
	}
	return nil, why
}

// swigluOperands says why gate g = silu(x) cannot fuse with up under mul, or "".
func swigluOperands(g, x, up *graph.Value, mul *graph.Node, nodes []*graph.Node) string {
	if len(g.Consumers) != 1 || g.Output {
		return fmt.Sprintf("the gate %s is read by %s, not by %s alone", g.Name, readers(g), mul.Name)
	}
	if len(nodes) == 2 { // x * Sigmoid(x): the sigmoid is read by the product alone
		s := nodes[0].Outputs[0]
		if len(s.Consumers) != 1 || s.Output {
			return fmt.Sprintf("the sigmoid %s is read by %s", s.Name, readers(s))
		}
	}
	if !isFloat(x.DType) || x.DType != up.DType {
		return fmt.Sprintf("the gate's input %s is %s and %s is %s", x.Name, x.DType, up.Name, up.DType)
	}
	if len(x.Shape) != len(up.Shape) {
		return fmt.Sprintf("%s%v and %s%v differ in rank (SwiGLU does not broadcast)", x.Name, x.Shape, up.Name, up.Shape)
	}
	for i := range x.Shape {
		if !x.Shape[i].Equal(up.Shape[i]) {
			return fmt.Sprintf("%s%v and %s%v may differ in dim %d (SwiGLU does not broadcast)", x.Name, x.Shape, up.Name, up.Shape, i)
		}
	}
	return ""
}
