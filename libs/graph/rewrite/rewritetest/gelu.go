package rewritetest

import (
	"math"

	"carve.dev/libs/graph"
)

// Gelu is GELU written out op by op over x [Rows, H], in one of the forms exporters write.
type Gelu struct {
	Rows, H int
	Erf     bool // 0.5 x (1 + erf(x / sqrt 2)) (BERT); else the tanh form (GPT-2's gelu_new)
	// Order of the final product: 0 is (x * 0.5) * (1 + act) (PyTorch's dynamo export of
	// gelu_new), 1 is x * ((1 + act) * 0.5), 2 is (x * (1 + act)) * 0.5 (BERT's export).
	Order int
	Cube  bool // x*x*x instead of Pow(x, 3)
	// Scale multiplies the sqrt(2/pi) constant (1 when zero): another value does not fuse.
	Scale float32
}

// Spec builds the GELU: input x, output y.
func (g Gelu) Spec() graph.Spec {
	b := &builder{s: graph.Spec{Opsets: map[string]int64{"": 18}}}
	x := b.input("x", graph.Float32, g.Rows, g.H)
	scale := g.Scale
	if scale == 0 {
		scale = 1
	}
	var act string
	if g.Erf {
		act = b.op("Erf", nil, b.op("Div", nil, x, b.scalar(float32(math.Sqrt2))))
	} else {
		var cube string
		if g.Cube {
			cube = b.op("Mul", nil, b.op("Mul", nil, x, x), x)
		} else {
			cube = b.op("Pow", nil, x, b.scalar(3))
		}
		inner := b.op("Add", nil, x, b.op("Mul", nil, cube, b.scalar(0.044715)))
		act = b.op("Tanh", nil, b.op("Mul", nil, inner, b.scalar(scale*float32(math.Sqrt(2/math.Pi)))))
	}
	one := b.op("Add", nil, act, b.scalar(1))
	var ins []string
	switch g.Order {
	case 0:
		ins = []string{b.op("Mul", nil, x, b.scalar(0.5)), one}
	case 1:
		ins = []string{x, b.op("Mul", nil, one, b.scalar(0.5))}
	default:
		ins = []string{b.op("Mul", nil, x, one), b.scalar(0.5)}
	}
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "gelu", OpType: "Mul", Inputs: ins, Outputs: []string{"y"}})
	b.s.Outputs = []string{"y"}
	return b.s
}
