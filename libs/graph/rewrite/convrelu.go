package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// Relu(Conv(x, W, b)) becomes onnxruntime's com.microsoft.FusedConv(x, W, b) with activation
// "Relu", and Relu(Add(Conv(x, W, b), z)) (a residual block's end, either operand order)
// FusedConv(x, W, b, z): the sum Y = Relu(Conv + z) is formed by the convolution as its output
// is computed, so neither the convolution's output nor the sum is written and read back, and
// neither the Add nor the Relu runs. onnxruntime fuses the same (its Conv activation and Conv
// Add fusions). The Conv keeps its attributes.
//
// It fuses only what FusedConv computes exactly: a Conv whose output the Add (or the Relu)
// alone reads, an Add whose output the Relu alone reads, and a z of the Conv output's shape,
// dim for dim (no broadcasting) and of its type. An Add of two Conv outputs fuses into the
// first operand's Conv, the second becoming z. Anything else stays as exported, and the Report
// says why.

// convReluCandidate: a Relu of a Conv, or of an Add of a Conv.
func convReluCandidate(n *graph.Node) bool {
	if !is(n, "Relu") || len(n.Inputs) != 1 {
		return false
	}
	if from(n.Inputs[0], "Conv") != nil {
		return true
	}
	add := from(n.Inputs[0], "Add")
	return add != nil && len(add.Inputs) == 2 && (from(add.Inputs[0], "Conv") != nil || from(add.Inputs[1], "Conv") != nil)
}

// matchConvRelu matches the Relu r.
func matchConvRelu(r *graph.Node) (*match, string) {
	in := r.Inputs[0]
	if why := exclusive(in, r, "the Relu's input"); why != "" {
		return nil, why
	}
	conv, add := in.Producer, (*graph.Node)(nil)
	var z *graph.Value
	if is(conv, "Add") {
		add = conv
		// the Conv operand: the first that is a Conv's output the Add alone reads, else the
		// first Conv's (refused below)
		ci := 0
		if from(add.Inputs[0], "Conv") == nil || !only(add.Inputs[0], add) && from(add.Inputs[1], "Conv") != nil && only(add.Inputs[1], add) {
			ci = 1
		}
		y := add.Inputs[ci]
		conv, z = y.Producer, add.Inputs[1-ci]
		if why := exclusive(y, add, "the convolution's output"); why != "" {
			return nil, why
		}
		if z == nil || z == y || !sameShape(z, y) || z.DType != y.DType {
			return nil, fmt.Sprintf("the Add's other operand %s is %v, not another value of the convolution's output's type and shape %v", add.Inputs[1-ci].Name, add.Inputs[1-ci], y)
		}
	}
	if len(conv.Inputs) < 2 || len(conv.Outputs) != 1 {
		return nil, "the convolution has no weight input"
	}
	ins := []string{conv.Inputs[0].Name, conv.Inputs[1].Name, ""}
	if len(conv.Inputs) > 2 && conv.Inputs[2] != nil {
		ins[2] = conv.Inputs[2].Name
	}
	interior := []*graph.Node{conv, r}
	detail := fmt.Sprintf("Relu of %s", conv.Name)
	if add != nil {
		ins = append(ins, z.Name)
		interior = []*graph.Node{conv, add, r}
		detail = fmt.Sprintf("Relu of %s plus %s", conv.Name, z.Name)
	}
	attrs := withActivation(conv.Attrs, "Relu")
	return &match{
		kind: ConvRelu, root: r, interior: interior,
		add: []graph.NodeSpec{{Name: r.Name + "/FusedConv", OpType: "FusedConv", Domain: "com.microsoft",
			Inputs: ins, Outputs: []string{r.Outputs[0].Name}, Attrs: attrs}},
		opsets: map[string]int64{"com.microsoft": 1},
		detail: detail,
	}, ""
}

// withActivation is a's attributes with activation set to act.
func withActivation(a graph.Attributes, act string) graph.Attributes {
	var list []graph.Attribute
	for _, name := range a.Names() {
		if name != "activation" {
			v, _ := a.Get(name)
			list = append(list, v)
		}
	}
	return graph.NewAttributes(append(list, graph.Attribute{Name: "activation", Kind: graph.AttrString, String: act})...)
}
