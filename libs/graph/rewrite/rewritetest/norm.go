package rewritetest

import (
	"encoding/binary"
	"math"

	"carve.dev/libs/graph"
)

// Norm is a norm written out op by op over x [Rows, H] (float32, or DType with the float32
// computation between casts), as exporters write RMSNorm and LayerNorm.
type Norm struct {
	Rows, H int
	Layer   bool        // LayerNorm (mean subtracted); else RMSNorm
	Weight  bool        // multiply by a [H] weight
	Bias    bool        // LayerNorm: add a [H] bias
	Div     bool        // x / sqrt(...) instead of x * Reciprocal(sqrt(...))
	Square  bool        // Mul(x, x) instead of Pow(x, 2)
	DType   graph.DType // float32, or bfloat16 cast to float32 and back (RMSNorm)
	Eps     float32
}

// Spec builds the norm: input x, output y.
func (n Norm) Spec() graph.Spec {
	b := &builder{s: graph.Spec{Opsets: map[string]int64{"": 18}}}
	dt := n.DType
	if dt == graph.Undefined {
		dt = graph.Float32
	}
	x := b.input("x", dt, n.Rows, n.H)
	if dt != graph.Float32 {
		x = b.op("Cast", []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Float32)}}, x)
	}
	last := b.ints(-1)
	mean := func(v string) string {
		return b.op("ReduceMean", []graph.Attribute{{Name: "keepdims", Kind: graph.AttrInt, Int: 1}}, v, last)
	}
	sq := func(v string) string {
		if n.Square {
			return b.op("Mul", nil, v, v)
		}
		return b.op("Pow", nil, v, b.scalar(2))
	}
	c := x
	if n.Layer {
		c = b.op("Sub", nil, x, mean(x))
	}
	root := b.op("Sqrt", nil, b.op("Add", nil, mean(sq(c)), b.scalar(n.Eps)))
	var y string
	if n.Div {
		y = b.op("Div", nil, c, root)
	} else {
		y = b.op("Mul", nil, c, b.op("Reciprocal", nil, root))
	}
	if dt != graph.Float32 {
		y = b.op("Cast", []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(dt)}}, y)
	}
	param := func(seed float64) string {
		var d []byte
		for i := 0; i < n.H; i++ {
			v := float32(1 + 0.5*math.Sin(seed*float64(i+1)))
			switch dt {
			case graph.Float32:
				d = binary.LittleEndian.AppendUint32(d, math.Float32bits(v))
			default:
				d = binary.LittleEndian.AppendUint16(d, uint16(math.Float32bits(v)>>16)) // bfloat16, truncated
			}
		}
		return b.init(dt, []int64{int64(n.H)}, d)
	}
	if n.Weight {
		y = b.op("Mul", nil, param(0.7), y)
	}
	if n.Bias {
		y = b.op("Add", nil, y, param(1.3))
	}
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "out", OpType: "Identity", Inputs: []string{y}, Outputs: []string{"y"}})
	b.s.Outputs = []string{"y"}
	return b.s
}

// SiLU builds y = x * sigmoid(x) * up over inputs x and up [Rows, H].
func SiLU(rows, h int) graph.Spec {
	b := &builder{s: graph.Spec{Opsets: map[string]int64{"": 18}}}
	x, up := b.input("x", graph.Float32, rows, h), b.input("up", graph.Float32, rows, h)
	s := b.op("Mul", nil, x, b.op("Sigmoid", nil, x))
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "gate", OpType: "Mul", Inputs: []string{s, up}, Outputs: []string{"y"}})
	b.s.Outputs = []string{"y"}
	return b.s
}

// Linear is a linear layer with a bias as exporters write it, Add(MatMul(x, W), b), over x
// [2, rows, k] of dtype dt (float32, float16 or bfloat16), with W [k, n] and b [n] weights of
// small deterministic values: output y [2, rows, n].
func Linear(dt graph.DType, rows, k, n int) graph.Spec {
	b := &builder{s: graph.Spec{Opsets: map[string]int64{"": 18}}}
	x := b.input("x", dt, 2, rows, k)
	w := b.init(dt, []int64{int64(k), int64(n)}, vals(dt, k*n, 0.0625, 0))
	bias := b.init(dt, []int64{int64(n)}, vals(dt, n, 0.5, 0))
	p := b.op("MatMul", nil, x, w)
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "bias", OpType: "Add", Inputs: []string{p, bias}, Outputs: []string{"y"}})
	b.s.Outputs = []string{"y"}
	return b.s
}

// GatedMLP is a SiLU-gated MLP's gate as exporters write it, gate = MatMul(x, Wg), up =
// MatMul(x, Wu), y = gate * Sigmoid(gate) * up, over x [2, rows, k] of dtype dt (float32,
// float16 or bfloat16), with Wg and Wu [k, n] weights of small deterministic values (named c0
// and c1): output y [2, rows, n].
func GatedMLP(dt graph.DType, rows, k, n int) graph.Spec {
	b := &builder{s: graph.Spec{Opsets: map[string]int64{"": 18}}}
	x := b.input("x", dt, 2, rows, k)
	wg := b.init(dt, []int64{int64(k), int64(n)}, vals(dt, k*n, 0.0625, 0))
	wu := b.init(dt, []int64{int64(k), int64(n)}, vals(dt, k*n, 0.125, 5))
	gate, up := b.op("MatMul", nil, x, wg), b.op("MatMul", nil, x, wu)
	s := b.op("Mul", nil, gate, b.op("Sigmoid", nil, gate))
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "gate", OpType: "Mul", Inputs: []string{s, up}, Outputs: []string{"y"}})
	b.s.Outputs = []string{"y"}
	return b.s
}

// vals is count small multiples of scale in dtype dt (exact in float16 and bfloat16), from a
// pattern of period 13 that shift rotates.
func vals(dt graph.DType, count int, scale float32, shift int) []byte {
	var d []byte
	for i := range count {
		f := scale * float32((i*7+shift)%13-6)
		switch dt {
		case graph.Float32:
			d = binary.LittleEndian.AppendUint32(d, math.Float32bits(f))
		case graph.BFloat16:
			d = binary.LittleEndian.AppendUint16(d, uint16(math.Float32bits(f)>>16)) // exact: few bits
		default:
			d = binary.LittleEndian.AppendUint16(d, float16(f))
		}
	}
	return d
}

// float16 is f's IEEE half bits, for the small multiples of 1/16 Linear uses (exact).
func float16(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	if f == 0 {
		return sign
	}
	exp := int((bits>>23)&0xff) - 127 + 15
	return sign | uint16(exp)<<10 | uint16((bits>>13)&0x3ff)
}
