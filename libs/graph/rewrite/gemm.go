package rewrite

import (
	"fmt"

	"carve.dev/libs/graph"
)

// A product with a transposed weight, MatMul(A, Transpose(W)) with W a 2-D initializer (how
// exporters write a tied LM head: logits = h @ embedding^T), becomes Gemm(Flatten(A), W,
// transB=1) reshaped back to A's leading dims. The Transpose would otherwise write W's transpose
// into the arena on every run — for Qwen2.5-1.5B's 151936 x 1536 embedding, 445 MiB that live
// from the Transpose to the LM head — while the GEMM reads W transposed for free. Flatten and
// Reshape are views, and the shape arithmetic around them is evaluated at bind, so nothing is
// added at run time.

// transposedWeightCandidate: a MatMul whose second input is a Transpose of a weight. Other
// MatMuls are not candidates (the report would list every product of the model).
func transposedWeightCandidate(n *graph.Node) bool {
	if !is(n, "MatMul") || len(n.Inputs) < 2 || n.Inputs[1] == nil {
		return false
	}
	tr := from(n.Inputs[1], "Transpose")
	return tr != nil && tr.Inputs[0] != nil && tr.Inputs[0].Kind == graph.KindInitializer
}

// matchTransposedWeight matches the MatMul mm whose second input is a transposed 2-D weight.
func matchTransposedWeight(mm *graph.Node) (*match, string) {
	a, bt := mm.Inputs[0], mm.Inputs[1]
	tr := from(bt, "Transpose")
	if tr == nil {
		return nil, fmt.Sprintf("its second input %s is not a Transpose", producerLabel(bt))
	}
	w := tr.Inputs[0]
	if w.Kind != graph.KindInitializer || len(w.Shape) != 2 {
		return nil, fmt.Sprintf("%s transposes %s, not a 2-D weight", tr.Name, w.Name)
	}
	if perm := tr.Attrs.Ints("perm"); perm != nil && !(len(perm) == 2 && perm[0] == 1 && perm[1] == 0) {
		return nil, fmt.Sprintf("%s has perm %v", tr.Name, perm)
	}
	if !isFloat(a.DType) || a.DType != w.DType || len(a.Shape) < 2 {
		return nil, fmt.Sprintf("%s is %s%v and %s is %s", a.Name, a.DType, a.Shape, w.Name, w.DType)
	}
	if bt.Output {
		return nil, fmt.Sprintf("the transpose %s is a graph output", bt.Name)
	}
	y := mm.Outputs[0]
	n, _ := w.Shape[0].Value()
	at := mm.Name + "/GemmTransB"
	mt := &match{kind: TransposedWeight, root: mm, fused: at, detail: fmt.Sprintf("%s^T read by the GEMM", w.Name)}
	// The Transpose is interior only when this MatMul is its one reader; otherwise it stays for
	// the others (each of which may fuse too, and then nothing reads it).
	if only(bt, mm) {
		mt.interior = []*graph.Node{tr, mm}
	} else {
		mt.interior = []*graph.Node{mm}
	}
	flat, prod, shape, lead, outShape := at+"/A2", at+"/Y2", at+"/shapeA", at+"/lead", at+"/shapeY"
	last := fmt.Sprintf("rewrite.[%d]", n)
	mt.add = []graph.NodeSpec{
		{Name: flat, OpType: "Flatten", Inputs: []string{a.Name}, Outputs: []string{flat},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: int64(len(a.Shape) - 1)})},
		{Name: at, OpType: "Gemm", Inputs: []string{flat, w.Name}, Outputs: []string{prod},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "transB", Kind: graph.AttrInt, Int: 1})},
		{Name: shape, OpType: "Shape", Inputs: []string{a.Name}, Outputs: []string{shape}},
		{Name: lead, OpType: "Slice", Inputs: []string{shape, mt.ints("rewrite.[0]", []int64{1}, 0), mt.ints("rewrite.[-1]", []int64{1}, -1)}, Outputs: []string{lead}},
		{Name: outShape, OpType: "Concat", Inputs: []string{lead, mt.ints(last, []int64{1}, n)}, Outputs: []string{outShape},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: 0})},
		{Name: at + "/Reshape", OpType: "Reshape", Inputs: []string{prod, outShape}, Outputs: []string{y.Name}},
	}
	return mt, ""
}
