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
	mt.add = mt.gemmOverRows(at, a, y, n, []string{w.Name},
		graph.NewAttributes(graph.Attribute{Name: "transB", Kind: graph.AttrInt, Int: 1}))
	return mt, ""
}

// gemmOverRows is the nodes of Gemm at over A's rows: Flatten(A) to [rows, K], the Gemm of it
// and the further inputs (B, C) into [rows, n], and its Reshape back to A's leading dims and n,
// producing y. The shape arithmetic is evaluated at bind; Flatten and Reshape are views.
func (mt *match) gemmOverRows(at string, a, y *graph.Value, n int64, rest []string, attrs graph.Attributes) []graph.NodeSpec {
	flat, prod, shape, lead, outShape := at+"/A2", at+"/Y2", at+"/shapeA", at+"/lead", at+"/shapeY"
	last := fmt.Sprintf("rewrite.[%d]", n)
	return []graph.NodeSpec{
		{Name: flat, OpType: "Flatten", Inputs: []string{a.Name}, Outputs: []string{flat},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: int64(len(a.Shape) - 1)})},
		{Name: at, OpType: "Gemm", Inputs: append([]string{flat}, rest...), Outputs: []string{prod}, Attrs: attrs},
		{Name: shape, OpType: "Shape", Inputs: []string{a.Name}, Outputs: []string{shape}},
		{Name: lead, OpType: "Slice", Inputs: []string{shape, mt.ints("rewrite.[0]", []int64{1}, 0), mt.ints("rewrite.[-1]", []int64{1}, -1)}, Outputs: []string{lead}},
		{Name: outShape, OpType: "Concat", Inputs: []string{lead, mt.ints(last, []int64{1}, n)}, Outputs: []string{outShape},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: 0})},
		{Name: at + "/Reshape", OpType: "Reshape", Inputs: []string{prod, outShape}, Outputs: []string{y.Name}},
	}
}

// A product with a bias, Add(MatMul(A, W), b) with W a 2-D weight [K, N] and b a weight of N
// ([N] or [1, N]; how exporters write a linear layer with a bias, such as Qwen2's q, k and v
// projections), becomes Gemm(Flatten(A), W, b) reshaped back to A's leading dims: the GEMM adds
// the bias (on CUDA in cuBLASLt's epilogue), one kernel instead of two, and the product without
// the bias is never written.

// matmulBiasCandidate: an Add of a MatMul's product and a weight.
func matmulBiasCandidate(n *graph.Node) bool {
	if !is(n, "Add") || len(n.Inputs) != 2 {
		return false
	}
	for i, v := range n.Inputs {
		if mm := from(v, "MatMul"); mm != nil && n.Inputs[1-i] != nil && n.Inputs[1-i].Kind == graph.KindInitializer {
			return true
		}
	}
	return false
}

// matchMatMulBias matches the bias Add add.
func matchMatMulBias(add *graph.Node) (*match, string) {
	i := 0
	if from(add.Inputs[0], "MatMul") == nil || add.Inputs[1].Kind != graph.KindInitializer {
		i = 1
	}
	prod, b := add.Inputs[i], add.Inputs[1-i]
	mm := from(prod, "MatMul")
	a, w := mm.Inputs[0], mm.Inputs[1]
	if w == nil || w.Kind != graph.KindInitializer || len(w.Shape) != 2 {
		return nil, fmt.Sprintf("%s multiplies by %s, not a 2-D weight", mm.Name, producerLabel(w))
	}
	n, ok := w.Shape[1].Value()
	if !ok {
		return nil, fmt.Sprintf("the weight %s has shape %v", w.Name, w.Shape)
	}
	if !isFloat(a.DType) || a.DType != w.DType || b.DType != a.DType || len(a.Shape) < 2 {
		return nil, fmt.Sprintf("%s is %s%v, %s %s and %s %s", a.Name, a.DType, a.Shape, w.Name, w.DType, b.Name, b.DType)
	}
	bn, _ := b.Shape.NumElements().Value()
	if len(b.Shape) > 2 || bn != n || len(b.Shape) == 0 || differ(b.Shape[len(b.Shape)-1], graph.Const(n)) {
		return nil, fmt.Sprintf("the addend %s%v is not a bias of %d", b.Name, b.Shape, n)
	}
	if !only(prod, add) {
		return nil, fmt.Sprintf("the product %s is read by %s", prod.Name, readers(prod))
	}
	y := add.Outputs[0]
	at := add.Name + "/Gemm"
	mt := &match{kind: MatMulBias, root: add, fused: at, interior: []*graph.Node{mm, add},
		detail: fmt.Sprintf("%s times %s plus %s", a.Name, w.Name, b.Name)}
	mt.add = mt.gemmOverRows(at, a, y, n, []string{w.Name, b.Name}, graph.NewAttributes())
	return mt, ""
}
