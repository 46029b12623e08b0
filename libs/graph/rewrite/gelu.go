package rewrite

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
)

// GELU as exporters write it, op by op:
//
//	tanh form (GPT-2's gelu_new):  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * Pow(x, 3))))
//	erf form (BERT's gelu):        0.5 * x * (1 + Erf(x / sqrt(2)))
//
// becomes ONNX's Gelu(x) (opset 20), approximate "tanh" or "none". The exported form is seven or
// eight elementwise ops over the MLP's widest activation, each a pass over memory (and on the CPU
// a parallel loop): the fused op is one. The 0.5, the x and the 1 + ... may be multiplied in any
// order and association, and the scale inside may be a Mul or a Div by a constant; the
// constants must be GELU's to float32 precision.

// geluCandidate: every Tanh and every Erf.
func geluCandidate(n *graph.Node) bool { return is(n, "Tanh") || is(n, "Erf") }

// geluRel is how far, relatively, a constant may be from GELU's and still match (float32
// rounding of the exporter's constants, and of their products).
const geluRel = 1e-5

func near(got, want float64) bool { return math.Abs(got-want) <= geluRel*math.Abs(want) }

// matchGelu matches the GELU whose Tanh or Erf is act, in model m.
func matchGelu(m *graph.Model, act *graph.Node) (*match, string) {
	arg := act.Inputs[0]
	if !isFloat(arg.DType) {
		return nil, fmt.Sprintf("%s is %s", arg.Name, arg.DType)
	}
	// Inside: the scaled argument, and x under it.
	inner, scale, chain, _ := scaleChain(m, arg, act, true)
	interior := append([]*graph.Node{act}, chain...)
	var x *graph.Value
	approx := "none"
	if is(act, "Erf") {
		if !near(scale, 1/math.Sqrt2) {
			return nil, fmt.Sprintf("%s's argument is its input scaled by %s, not 1/sqrt(2)", act.Name, f32(scale))
		}
		x = inner
	} else {
		approx = "tanh"
		if !near(scale, math.Sqrt(2/math.Pi)) {
			return nil, fmt.Sprintf("%s's argument is scaled by %s, not sqrt(2/pi)", act.Name, f32(scale))
		}
		var nodes []*graph.Node
		var why string
		if x, nodes, why = cubicOf(m, inner, lastOr(chain, act)); x == nil {
			return nil, why
		}
		interior = append(interior, nodes...)
	}
	if x == nil || x.DType != arg.DType || !sameShape(x, arg) {
		return nil, fmt.Sprintf("%s's argument is not an elementwise function of one value", act.Name)
	}
	// Outside: 1 + act, then the product with x and 0.5.
	a := act.Outputs[0]
	if len(a.Consumers) != 1 || a.Output || !is(a.Consumers[0], "Add") {
		return nil, fmt.Sprintf("%s is read by %s, not by one Add", a.Name, readers(a))
	}
	plus := a.Consumers[0]
	if one, ok := scalar(other(plus, a)); !ok || one != 1 {
		return nil, fmt.Sprintf("%s adds %s to %s, not 1", plus.Name, producerLabel(other(plus, a)), a.Name)
	}
	interior = append(interior, plus)
	root, nodes, why := halfTimes(plus, x)
	if root == nil {
		return nil, why
	}
	interior = append(interior, nodes...)
	y := root.Outputs[0]
	if y.DType != x.DType || !sameShape(y, x) {
		return nil, fmt.Sprintf("%s is %s%v, not %s's %s%v", y.Name, y.DType, y.Shape, x.Name, x.DType, x.Shape)
	}
	name := root.Name + "/Gelu"
	return &match{
		kind: Gelu, root: root, interior: interior,
		add: []graph.NodeSpec{{Name: name, OpType: "Gelu", Inputs: []string{x.Name}, Outputs: []string{y.Name},
			Attrs: graph.NewAttributes(graph.Attribute{Name: "approximate", Kind: graph.AttrString, String: approx})}},
		opsets: map[string]int64{"": 20},
		detail: "approximate " + approx,
	}, ""
}

// cubicOf returns x when v = x + 0.044715 * x^3 (Add in either order; x^3 as Pow(x, 3) or
// x*x*x, scaled by Mul or Div by scalars), read by next alone, with the nodes that compute it.
func cubicOf(m *graph.Model, v *graph.Value, next *graph.Node) (*graph.Value, []*graph.Node, string) {
	add := from(v, "Add")
	if add == nil || !only(v, next) {
		return nil, nil, fmt.Sprintf("the tanh's argument %s is not x + 0.044715 x^3 read by it alone", v.Name)
	}
	for i := range 2 {
		x, t := add.Inputs[i], add.Inputs[1-i]
		cube, k, chain, _ := scaleChain(m, t, add, true)
		if !near(k, 0.044715) || !only(cube, lastOr(chain, add)) {
			continue
		}
		if nodes := cubeOf(cube, x); nodes != nil {
			return x, append(append([]*graph.Node{add}, chain...), nodes...), ""
		}
	}
	return nil, nil, fmt.Sprintf("%s (%s) is not x + 0.044715 x^3", add.Name, opLabel(add))
}

// cubeOf returns the nodes computing v = x^3 (Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x),
// x)), or nil.
func cubeOf(v, x *graph.Value) []*graph.Node {
	if p := from(v, "Pow"); p != nil && p.Inputs[0] == x {
		if e, ok := scalar(p.Inputs[1]); ok && e == 3 {
			return []*graph.Node{p}
		}
		return nil
	}
	m := from(v, "Mul")
	if m == nil || len(m.Inputs) != 2 {
		return nil
	}
	sq := other(m, x)
	if sq == nil || sq == x {
		return nil
	}
	if s := from(sq, "Mul"); s != nil && only(sq, m) && s.Inputs[0] == x && s.Inputs[1] == x {
		return []*graph.Node{m, s}
	}
	return nil
}

// halfTimes follows u = 1 + act forward through the Muls that multiply it by x and by 0.5 (in
// any order, the x possibly pre-multiplied by constants: Mul(Mul(x, 0.5), u)) and returns the
// last Mul, with the nodes of the product.
func halfTimes(plus *graph.Node, x *graph.Value) (*graph.Node, []*graph.Node, string) {
	cur, factor, seenX := plus.Outputs[0], 1.0, false
	var nodes []*graph.Node
	for range 3 {
		if len(cur.Consumers) != 1 || cur.Output || !is(cur.Consumers[0], "Mul") {
			return nil, nil, fmt.Sprintf("%s is read by %s, not by one Mul of GELU's product", cur.Name, readers(cur))
		}
		m := cur.Consumers[0]
		o := other(m, cur)
		switch c, ok := scalar(o); {
		case o == nil:
			return nil, nil, fmt.Sprintf("%s multiplies %s by itself", m.Name, cur.Name)
		case ok:
			factor *= c
		case !seenX:
			f, chain, ok := scaledFrom(o, x)
			if !ok {
				return nil, nil, fmt.Sprintf("%s multiplies by %s, not by %s or a constant", m.Name, o.Name, x.Name)
			}
			seenX, factor = true, factor*f
			if only(o, m) {
				nodes = append(nodes, chain...)
			}
		default:
			return nil, nil, fmt.Sprintf("%s multiplies by %s after %s", m.Name, o.Name, x.Name)
		}
		nodes = append(nodes, m)
		cur = m.Outputs[0]
		if seenX && near(factor, 0.5) {
			return m, nodes, ""
		}
	}
	return nil, nil, fmt.Sprintf("%s is not 0.5 * %s * (1 + ...)", cur.Name, x.Name)
}

// scaledFrom returns f when v = f * x through at most two Muls by constants (v == x: f = 1),
// with the Muls' nodes, and whether v is so.
func scaledFrom(v, x *graph.Value) (float64, []*graph.Node, bool) {
	f := 1.0
	var chain []*graph.Node
	for v != x {
		m := from(v, "Mul")
		if m == nil || len(m.Inputs) != 2 {
			return 0, nil, false
		}
		c, ok := scalar(m.Inputs[1])
		next := m.Inputs[0]
		if !ok {
			c, ok = scalar(m.Inputs[0])
			next = m.Inputs[1]
		}
		if !ok || len(chain) == 2 {
			return 0, nil, false
		}
		f, v, chain = f*c, next, append(chain, m)
	}
	return f, chain, true
}

// lastOr returns the last node of chain, or n when chain is empty.
func lastOr(chain []*graph.Node, n *graph.Node) *graph.Node {
	if len(chain) == 0 {
		return n
	}
	return chain[len(chain)-1]
}
