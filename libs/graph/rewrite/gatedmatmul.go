package rewrite

import (
	"fmt"
	"strings"

	"carve.dev/libs/graph"
)

// The gated MLP's two products over one input and its gate, dev.carve.SwiGLU(MatMul(A, Wg),
// MatMul(A, Wu)) with Wg and Wu 2-D weights of one shape and dtype, become
// dev.carve.GatedMatMul(A, Wg, Wu): one kernel reads both weights and applies the gate in its
// epilogue (three launches at every decode step become one), and neither product, each a
// [tokens, intermediate] tensor, is written. The pass runs right after SwiGLU and matches the
// SwiGLU nodes that pass made (or that the model holds already); with SwiGLU skipped it
// finds none. A product with a bias (MatMul and Add) or of a transposed weight (MatMul(A,
// Transpose(W))) is not matched: the kinds that fuse those (MatMulBias, TransposedWeight) run
// later, and GatedMatMul has no bias and reads W as [K, N].

// gatedMatMulCandidate: a dev.carve.SwiGLU.
func gatedMatMulCandidate(n *graph.Node) bool {
	return n.Domain == graph.DomainCarve && n.OpType == "SwiGLU" && len(n.Inputs) == 2
}

// matchGatedMatMul matches the SwiGLU sw: SwiGLU(g, u), g = MatMul(A, Wg), u = MatMul(A, Wu).
func matchGatedMatMul(sw *graph.Node) (*match, string) {
	g, u := sw.Inputs[0], sw.Inputs[1]
	mg, why := weightProduct(g, "gate")
	if why != "" {
		return nil, why
	}
	mu, why := weightProduct(u, "up")
	if why != "" {
		return nil, why
	}
	a, wg, wu := mg.Inputs[0], mg.Inputs[1], mu.Inputs[1]
	if mu.Inputs[0] != a {
		return nil, fmt.Sprintf("gate and up read different inputs, %s and %s", a.Name, mu.Inputs[0].Name)
	}
	if wg.DType != wu.DType || !sameShape(wg, wu) {
		return nil, fmt.Sprintf("the weights %s %s%v and %s %s%v differ in dtype or shape", wg.Name, wg.DType, wg.Shape, wu.Name, wu.DType, wu.Shape)
	}
	if !isFloat(a.DType) || a.DType != wg.DType || len(a.Shape) < 2 {
		return nil, fmt.Sprintf("the input %s is %s%v and the weights %s, want one float type and rank 2 or more", a.Name, a.DType, a.Shape, wg.DType)
	}
	if why := exclusive(g, sw, "the gate"); why != "" {
		return nil, why
	}
	if why := exclusive(u, sw, "the up product"); why != "" {
		return nil, why
	}
	alpha := sw.Attrs.Float("alpha", 1)
	y := sw.Outputs[0]
	return &match{
		kind: GatedMatMul, root: sw, interior: []*graph.Node{mg, mu, sw},
		add: []graph.NodeSpec{{Name: strings.TrimSuffix(sw.Name, "/SwiGLU") + "/GatedMatMul", OpType: "GatedMatMul", Domain: graph.DomainCarve,
			Inputs: []string{a.Name, wg.Name, wu.Name}, Outputs: []string{y.Name},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: alpha})}},
		opsets: map[string]int64{graph.DomainCarve: 1},
		detail: fmt.Sprintf("swish(%s·%s, alpha %s) * %s·%s", a.Name, wg.Name, f32(float64(alpha)), a.Name, wu.Name),
	}, ""
}

// weightProduct returns the MatMul producing v, the SwiGLU's operand named what, if it
// multiplies by a 2-D weight, else why not.
func weightProduct(v *graph.Value, what string) (*graph.Node, string) {
	mm := from(v, "MatMul")
	if mm == nil {
		why := fmt.Sprintf("the %s %s comes from %s, not a MatMul of a weight", what, v.Name, producerLabel(v))
		if add := from(v, "Add"); add != nil && (from(add.Inputs[0], "MatMul") != nil || from(add.Inputs[1], "MatMul") != nil) {
			why += " (a product with a bias is left to matmul-bias)"
		}
		return nil, why
	}
	w := mm.Inputs[1]
	if w.Kind != graph.KindInitializer || len(w.Shape) != 2 {
		why := fmt.Sprintf("the %s %s multiplies by %s, not a 2-D weight", what, v.Name, producerLabel(w))
		if from(w, "Transpose") != nil {
			why += " (a product with a transposed weight is left to transposed-weight)"
		}
		return nil, why
	}
	return mm, ""
}
