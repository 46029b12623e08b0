package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// SiLU as exporters write it, x * Sigmoid(x), becomes ONNX's Swish(x) (opset 24, alpha 1:
// x * sigmoid(alpha * x)). The gate of a SiLU-gated MLP, silu(x) * up, is the SwiGLU kind's
// (swiglu.go), which runs next.

// matchSiLU matches the SiLU whose Sigmoid is sig.
func matchSiLU(sig *graph.Node) (*match, string) {
	x, s := sig.Inputs[0], sig.Outputs[0]
	if !isFloat(x.DType) {
		return nil, fmt.Sprintf("%s is %s", x.Name, x.DType)
	}
	if len(s.Consumers) != 1 || s.Output {
		return nil, fmt.Sprintf("the sigmoid %s is read by %s, not by one Mul", s.Name, readers(s))
	}
	mul := s.Consumers[0]
	if !is(mul, "Mul") || other(mul, s) != x {
		return nil, fmt.Sprintf("the sigmoid %s is read by %s (%s), not multiplied by its own input %s", s.Name, mul.Name, opLabel(mul), x.Name)
	}
	y := mul.Outputs[0]
	detail := "x*sigmoid(x)"
	if len(y.Consumers) == 1 && is(y.Consumers[0], "Mul") {
		detail += fmt.Sprintf(", gating %s", y.Consumers[0].Name)
	}
	return &match{
		kind: SiLU, root: mul, interior: []*graph.Node{sig, mul},
		add: []graph.NodeSpec{{Name: mul.Name + "/Swish", OpType: "Swish",
			Inputs: []string{x.Name}, Outputs: []string{y.Name},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: 1})}},
		opsets: map[string]int64{"": 24},
		detail: detail,
	}, ""
}
