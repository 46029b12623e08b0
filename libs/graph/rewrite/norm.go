package rewrite

import (
	"encoding/binary"
	"fmt"
	"math"

	"carve.dev/libs/graph"
)

// RMSNorm as exporters write it (HuggingFace's LlamaRMSNorm and its copies), over the last
// axis:
//
//	y = x * Reciprocal(Sqrt(ReduceMean(Pow(x, 2)) + eps))   or   x / Sqrt(...)
//	out = w * y                                              w of shape [hidden], optional
//
// Half-precision models compute it in float32 between Cast(x) and Cast(y) back; then x is
// the half input and the fused op rounds once. It becomes ONNX's RMSNormalization(x, w)
// (opset 23) with epsilon eps (w of ones when the model has none).
//
// LayerNorm written out:
//
//	d = x - ReduceMean(x);  y = d / Sqrt(ReduceMean(Pow(d, 2)) + eps)   (or d * Reciprocal(...))
//	out = y * w + b                                                       w, b optional
//
// becomes LayerNormalization(x, w, b) with epsilon eps.

// squareOf returns x when v is Pow(x, 2) or Mul(x, x).
func squareOf(v *graph.Value) *graph.Value {
	if p := from(v, "Pow"); p != nil {
		if e, ok := scalar(p.Inputs[1]); ok && e == 2 {
			return p.Inputs[0]
		}
	}
	if m := from(v, "Mul"); m != nil && m.Inputs[0] == m.Inputs[1] {
		return m.Inputs[0]
	}
	return nil
}

func rmsNormCandidate(n *graph.Node) bool {
	return is(n, "ReduceMean") && squareOf(n.Inputs[0]) != nil
}

// meanOverLast checks that rm averages the last axis and keeps it.
func meanOverLast(rm *graph.Node) string {
	r := len(rm.Inputs[0].Shape)
	if axes, ok := axesOf(rm); !ok || !isLastAxis(axes, r) {
		return fmt.Sprintf("%s does not average exactly the last axis", rm.Name)
	}
	if rm.Attrs.Int("keepdims", 1) != 1 {
		return fmt.Sprintf("%s does not keep the reduced axis", rm.Name)
	}
	return ""
}

// rsqrtOf follows a mean of squares ms through Add(eps), Sqrt and the division of num by the
// root: it returns eps, the division's node and the chain's nodes, or why not.
func rsqrtOf(ms *graph.Value, num *graph.Value) (eps float64, div *graph.Node, chain []*graph.Node, why string) {
	if len(ms.Consumers) != 1 || ms.Output {
		return 0, nil, nil, fmt.Sprintf("the mean of squares %s is read by %s", ms.Name, readers(ms))
	}
	add := ms.Consumers[0]
	e := other(add, ms)
	var ok bool
	if eps, ok = scalar(e); !is(add, "Add") || !ok || eps < 0 {
		return 0, nil, nil, fmt.Sprintf("the mean of squares %s is read by %s (%s), not by an Add of a non-negative constant epsilon", ms.Name, add.Name, opLabel(add))
	}
	a := add.Outputs[0]
	if len(a.Consumers) != 1 || !is(a.Consumers[0], "Sqrt") || a.Output {
		return 0, nil, nil, fmt.Sprintf("%s is read by %s, not by one Sqrt", a.Name, readers(a))
	}
	sq := a.Consumers[0]
	root := sq.Outputs[0]
	if len(root.Consumers) != 1 || root.Output {
		return 0, nil, nil, fmt.Sprintf("the root %s is read by %s", root.Name, readers(root))
	}
	switch n := root.Consumers[0]; {
	case is(n, "Div") && n.Inputs[0] == num && n.Inputs[1] == root:
		return eps, n, []*graph.Node{add, sq, n}, ""
	case is(n, "Reciprocal"):
		inv := n.Outputs[0]
		if len(inv.Consumers) != 1 || inv.Output {
			return 0, nil, nil, fmt.Sprintf("the reciprocal root %s is read by %s", inv.Name, readers(inv))
		}
		m := inv.Consumers[0]
		if !is(m, "Mul") || other(m, inv) != num {
			return 0, nil, nil, fmt.Sprintf("the reciprocal root %s multiplies %s, not %s", inv.Name, producerLabel(m.Outputs[0]), num.Name)
		}
		return eps, m, []*graph.Node{add, sq, n, m}, ""
	default:
		return 0, nil, nil, fmt.Sprintf("the root %s is read by %s (%s), not by a division of %s", root.Name, n.Name, opLabel(n), num.Name)
	}
}

// affine follows y into an optional Mul by a [hidden] weight and, with shift, an optional Add
// of a [hidden] bias. It returns the weight and bias values (nil if none) and the nodes
// passed, in order.
func affine(y *graph.Value, shift bool) (w, b *graph.Value, nodes []*graph.Node) {
	h := y.Shape[len(y.Shape)-1]
	param := func(p *graph.Value) bool {
		return p != nil && p != y && p.DType == y.DType && len(p.Shape) == 1 && p.Shape[0].Equal(h)
	}
	if len(y.Consumers) == 1 && !y.Output {
		if m := y.Consumers[0]; is(m, "Mul") && param(other(m, y)) {
			w, y = other(m, y), m.Outputs[0]
			nodes = append(nodes, m)
		}
	}
	if shift && len(y.Consumers) == 1 && !y.Output {
		if a := y.Consumers[0]; is(a, "Add") && param(other(a, y)) {
			b = other(a, y)
			nodes = append(nodes, a)
		}
	}
	return w, b, nodes
}

// ones is a [h] weight of ones of type dt, for norms without a weight.
func ones(dt graph.DType, h graph.Dim) (*graph.Tensor, string) {
	n, ok := h.Value()
	if !ok {
		return nil, fmt.Sprintf("the norm has no weight and its hidden size %s is not a constant", h)
	}
	var b []byte
	for range n {
		switch dt {
		case graph.Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(1))
		case graph.Float16:
			b = binary.LittleEndian.AppendUint16(b, 0x3c00)
		case graph.BFloat16:
			b = binary.LittleEndian.AppendUint16(b, 0x3f80)
		}
	}
	t, err := graph.NewTensor(fmt.Sprintf("rewrite.ones.%s.%d", dt, n), dt, []int64{n}, b)
	if err != nil {
		return nil, err.Error()
	}
	return t, ""
}

func epsAttr(eps float64) graph.Attribute {
	return graph.Attribute{Name: "epsilon", Kind: graph.AttrFloat, Float: float32(eps)}
}

var lastAxis = graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: -1}

// matchRMSNorm matches the RMSNorm whose ReduceMean is rm.
func matchRMSNorm(rm *graph.Node) (*match, string) {
	sq := rm.Inputs[0]
	x := squareOf(sq)
	if why := meanOverLast(rm); why != "" {
		return nil, why
	}
	if why := exclusive(sq, rm, "the square"); why != "" {
		return nil, why
	}
	if len(x.Shape) == 0 || !isFloat(x.DType) {
		return nil, fmt.Sprintf("%s is %s", x.Name, x)
	}
	eps, div, chain, why := rsqrtOf(rm.Outputs[0], x)
	if why != "" {
		return nil, why
	}
	mt := &match{kind: RMSNorm, interior: append([]*graph.Node{sq.Producer, rm}, chain...)}
	in, last, y := x, div, div.Outputs[0]
	detail := ""
	// a half model: Cast(x) to float32 before, Cast back after
	if c := from(x, "Cast"); c != nil && x.DType == graph.Float32 && (c.Inputs[0].DType == graph.Float16 || c.Inputs[0].DType == graph.BFloat16) {
		xh := c.Inputs[0]
		if len(y.Consumers) == 1 && !y.Output && is(y.Consumers[0], "Cast") && graph.DType(y.Consumers[0].Attrs.Int("to", 0)) == xh.DType {
			last = y.Consumers[0]
			y, in = last.Outputs[0], xh
			mt.interior = append(mt.interior, last)
			detail = fmt.Sprintf(", computed in float32 between casts from and to %s", xh.DType)
		}
	}
	w, _, tail := affine(y, false)
	mt.interior = append(mt.interior, tail...)
	if len(tail) > 0 {
		last = tail[len(tail)-1]
	}
	mt.root = last
	wName := ""
	if w != nil {
		wName = w.Name
		detail = fmt.Sprintf("weight %s, epsilon %s", w.Name, f32(eps)) + detail
	} else {
		t, why := ones(in.DType, in.Shape[len(in.Shape)-1])
		if why != "" {
			return nil, why
		}
		mt.inits, wName = []*graph.Tensor{t}, t.Name
		detail = fmt.Sprintf("no weight, epsilon %s", f32(eps)) + detail
	}
	mt.opsets = map[string]int64{"": 23}
	mt.add = []graph.NodeSpec{{Name: last.Name + "/RMSNormalization", OpType: "RMSNormalization",
		Inputs: []string{in.Name, wName}, Outputs: []string{last.Outputs[0].Name},
		Attrs: graph.NewAttributes(lastAxis, epsAttr(eps), graph.Attribute{Name: "stash_type", Kind: graph.AttrInt, Int: int64(graph.Float32)})}}
	mt.detail = detail
	return mt, ""
}

func layerNormCandidate(n *graph.Node) bool {
	if !is(n, "ReduceMean") {
		return false
	}
	for _, c := range n.Outputs[0].Consumers {
		if is(c, "Sub") && c.Inputs[0] == n.Inputs[0] && c.Inputs[1] == n.Outputs[0] {
			return true
		}
	}
	return false
}

// matchLayerNorm matches the LayerNorm whose first ReduceMean (the mean) is mu.
func matchLayerNorm(mu *graph.Node) (*match, string) {
	x := mu.Inputs[0]
	if why := meanOverLast(mu); why != "" {
		return nil, why
	}
	if len(x.Shape) == 0 || !isFloat(x.DType) {
		return nil, fmt.Sprintf("%s is %s", x.Name, x)
	}
	m := mu.Outputs[0]
	if len(m.Consumers) != 1 || m.Output {
		return nil, fmt.Sprintf("the mean %s is read by %s, not by the Sub alone", m.Name, readers(m))
	}
	sub := m.Consumers[0]
	d := sub.Outputs[0]
	if d.Output || len(d.Consumers) != 2 {
		return nil, fmt.Sprintf("the centered %s is read by %s, not by a square and a division", d.Name, readers(d))
	}
	var sqn *graph.Node
	for _, c := range d.Consumers {
		if squareOf(c.Outputs[0]) == d && (is(c, "Pow") || is(c, "Mul")) {
			sqn = c
		}
	}
	if sqn == nil {
		return nil, fmt.Sprintf("the centered %s is not squared", d.Name)
	}
	sq := sqn.Outputs[0]
	if len(sq.Consumers) != 1 || sq.Output || !is(sq.Consumers[0], "ReduceMean") {
		return nil, fmt.Sprintf("the square %s is read by %s, not by one ReduceMean", sq.Name, readers(sq))
	}
	vr := sq.Consumers[0]
	if why := meanOverLast(vr); why != "" {
		return nil, why
	}
	eps, div, chain, why := rsqrtOf(vr.Outputs[0], d)
	if why != "" {
		return nil, why
	}
	mt := &match{kind: LayerNorm, interior: append([]*graph.Node{mu, sub, sqn, vr}, chain...)}
	w, b, tail := affine(div.Outputs[0], true)
	mt.interior = append(mt.interior, tail...)
	last := div
	if len(tail) > 0 {
		last = tail[len(tail)-1]
	}
	mt.root = last
	inputs := []string{x.Name}
	detail := ""
	if w != nil {
		inputs = append(inputs, w.Name)
		detail = "weight " + w.Name
	} else {
		t, why := ones(x.DType, x.Shape[len(x.Shape)-1])
		if why != "" {
			return nil, why
		}
		mt.inits = []*graph.Tensor{t}
		inputs = append(inputs, t.Name)
		detail = "no weight"
	}
	if b != nil {
		inputs = append(inputs, b.Name)
		detail += ", bias " + b.Name
	}
	mt.add = []graph.NodeSpec{{Name: last.Name + "/LayerNormalization", OpType: "LayerNormalization",
		Inputs: inputs, Outputs: []string{last.Outputs[0].Name},
		Attrs: graph.NewAttributes(lastAxis, epsAttr(eps), graph.Attribute{Name: "stash_type", Kind: graph.AttrInt, Int: int64(graph.Float32)})}}
	mt.detail = fmt.Sprintf("%s, epsilon %s", detail, f32(eps))
	return mt, ""
}
