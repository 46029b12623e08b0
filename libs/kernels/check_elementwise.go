package kernels

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// The checks of the elementwise ops (binary, variadic, unary, their contrib and carve forms):
// the ONNX rules on arity, operand types, attributes and the broadcast output. Each backend
// then refuses what its kernels are not built for (the CUDA kernels take fewer types).

// isInt reports whether dt is one of ONNX's integer types.
func isInt(dt graph.DType) bool {
	switch dt {
	case graph.Int8, graph.Int16, graph.Int32, graph.Int64, graph.Uint8, graph.Uint16, graph.Uint32, graph.Uint64:
		return true
	}
	return false
}

// isNumeric reports whether dt is one of ONNX's integer or float types.
func isNumeric(dt graph.DType) bool { return isFloatType(dt) || isInt(dt) }

// isFloatKernelType reports whether dt is one of the float types the float-only kernels (norms,
// softmax, the fused activations) are built for: float32, float16 and bfloat16.
func isFloatKernelType(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float16 || dt == graph.BFloat16
}

// BinaryKind is the operand rule of a two-operand elementwise op.
type BinaryKind uint8

const (
	// BinaryArith is Add, Sub, Mul, Div and Mod: numeric operands, an output of their type.
	BinaryArith BinaryKind = iota
	// BinaryCompare is Equal, Less, LessOrEqual, Greater and GreaterOrEqual: numeric operands
	// (bool too for Equal), a bool output.
	BinaryCompare
	// BinaryLogical is And, Or and Xor: bool operands and output.
	BinaryLogical
)

// CheckBinary checks a broadcast elementwise op of two operands for every backend: the arity,
// one operand type that kind allows, Mod's fmod (required for float operands), and the output's
// dtype and broadcast shape. It returns the output's shape and whether Mod takes C fmod
// semantics.
func CheckBinary(n *Node, kind BinaryKind) (shape []int64, fmod bool, err error) {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return nil, false, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if a.DType != b.DType {
		return nil, false, fmt.Errorf("operands are %v and %v, want one type", a.DType, b.DType)
	}
	dt, outDT := a.DType, a.DType
	switch kind {
	case BinaryLogical:
		if dt != graph.Bool {
			return nil, false, fmt.Errorf("operands are %v, want bool", dt)
		}
	case BinaryCompare:
		if !isNumeric(dt) && !(dt == graph.Bool && n.Op == "Equal") {
			return nil, false, fmt.Errorf("cannot compare %v", dt)
		}
		outDT = graph.Bool
	default:
		if !isNumeric(dt) {
			return nil, false, fmt.Errorf("operands are %v, want a numeric type", dt)
		}
	}
	if n.Op == "Mod" {
		fmod = n.Attrs.Int("fmod", 0) != 0
		if isFloatType(dt) && !fmod {
			return nil, false, fmt.Errorf("Mod of %v needs fmod=1", dt)
		}
	}
	if shape, err = BroadcastShapes(a.Shape, b.Shape); err != nil {
		return nil, false, err
	}
	if err := CheckOutput(n, 0, outDT, shape); err != nil {
		return nil, false, err
	}
	return shape, fmod, nil
}

// CheckVariadic checks Max, Min, Sum and Mean for every backend: one or more present inputs of
// one numeric type (a float type for Mean) and the output of that type and their broadcast
// shape, which it returns.
func CheckVariadic(n *Node) ([]int64, error) {
	if err := CheckArity(n, 1, 1<<20, 1, 1); err != nil {
		return nil, err
	}
	dt := n.Inputs[0].DType
	shapes := make([][]int64, len(n.Inputs))
	for i, v := range n.Inputs {
		if !v.Present() || v.DType != dt {
			return nil, fmt.Errorf("input %d is %v, want %v", i, v, dt)
		}
		shapes[i] = v.Shape
	}
	if !isNumeric(dt) {
		return nil, fmt.Errorf("inputs are %v, want a numeric type", dt)
	}
	if n.Op == "Mean" && !isFloatType(dt) {
		return nil, fmt.Errorf("Mean of %v is not supported", dt)
	}
	shape, err := BroadcastShapes(shapes...)
	if err != nil {
		return nil, err
	}
	if err := CheckOutput(n, 0, dt, shape); err != nil {
		return nil, err
	}
	return shape, nil
}

// CheckPow checks Pow(X, Y) for every backend: numeric X and Y (of any two types) and the
// output of X's type and their broadcast shape, which it returns.
func CheckPow(n *Node) ([]int64, error) {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return nil, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if !isNumeric(a.DType) || !isNumeric(b.DType) {
		return nil, fmt.Errorf("Pow of %v by %v", a.DType, b.DType)
	}
	shape, err := BroadcastShapes(a.Shape, b.Shape)
	if err != nil {
		return nil, err
	}
	if err := CheckOutput(n, 0, a.DType, shape); err != nil {
		return nil, err
	}
	return shape, nil
}

// CheckWhere checks Where(cond, X, Y) for every backend: a bool condition, branches of one
// type with a size, and the output of that type and the three-way broadcast shape, which it
// returns.
func CheckWhere(n *Node) ([]int64, error) {
	if err := CheckArity(n, 3, 3, 1, 1); err != nil {
		return nil, err
	}
	c, x, y := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if c.DType != graph.Bool {
		return nil, fmt.Errorf("condition is %v, want bool", c.DType)
	}
	if x.DType != y.DType || x.DType.Size() == 0 {
		return nil, fmt.Errorf("branches are %v and %v", x.DType, y.DType)
	}
	shape, err := BroadcastShapes(c.Shape, x.Shape, y.Shape)
	if err != nil {
		return nil, err
	}
	if err := CheckOutput(n, 0, x.DType, shape); err != nil {
		return nil, err
	}
	return shape, nil
}

// UnaryAttrs are the attributes of a one-operand activation, defaulted as ONNX defaults them.
type UnaryAttrs struct {
	// Alpha is LeakyRelu's, Elu's, HardSigmoid's and QuickGelu's alpha; Beta is HardSigmoid's
	// beta.
	Alpha, Beta float32
	// Tanh is Gelu's approximate "tanh" (false: "none", the erf form).
	Tanh bool
}

// unaryInts are the one-operand ops defined on integers as well as floats.
var unaryInts = []string{"Abs", "Neg", "Sign", "Relu"}

// CheckUnary checks a one-operand elementwise op (Abs, Relu, Exp, Gelu, LeakyRelu, ...) for
// every backend: a float input (an integer one too for Abs, Neg, Sign and Relu), the output of
// its type and shape, and Gelu's approximate ("none" or "tanh"). It returns the attributes.
func CheckUnary(n *Node) (UnaryAttrs, error) {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return UnaryAttrs{}, err
	}
	x := n.Inputs[0]
	if !isFloatType(x.DType) && !(isInt(x.DType) && slices.Contains(unaryInts, n.Op)) {
		return UnaryAttrs{}, fmt.Errorf("input is %v, not supported", x.DType)
	}
	if err := CheckOutput(n, 0, x.DType, x.Shape); err != nil {
		return UnaryAttrs{}, err
	}
	var u UnaryAttrs
	at := n.Attrs
	switch n.Op {
	case "LeakyRelu":
		u.Alpha = at.Float("alpha", 0.01)
	case "Elu":
		u.Alpha = at.Float("alpha", 1)
	case "HardSigmoid":
		u.Alpha, u.Beta = at.Float("alpha", 0.2), at.Float("beta", 0.5)
	case "QuickGelu":
		u.Alpha = at.Float("alpha", 1.702)
	case "Gelu":
		switch ap := at.String("approximate", "none"); ap {
		case "none":
		case "tanh":
			u.Tanh = true
		default:
			return UnaryAttrs{}, fmt.Errorf("unknown approximate %q", ap)
		}
	}
	return u, nil
}

// CheckPredicate checks Not (a bool input), IsNaN and IsInf (a float input) for every backend:
// a bool output of the input's shape.
func CheckPredicate(n *Node) error {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return err
	}
	x := n.Inputs[0]
	if n.Op == "Not" && x.DType != graph.Bool || n.Op != "Not" && !isFloatType(x.DType) {
		return fmt.Errorf("input is %v", x.DType)
	}
	return CheckOutput(n, 0, graph.Bool, x.Shape)
}

// CheckCast checks Cast (the to attribute) and CastLike (the second input's type) for every
// backend: a numeric or bool input and target, and the output of the target type and the
// input's shape. It returns the target type.
func CheckCast(n *Node) (graph.DType, error) {
	maxIn := 1
	if n.Op == "CastLike" {
		maxIn = 2
	}
	if err := CheckArity(n, 1, maxIn, 1, 1); err != nil {
		return graph.Undefined, err
	}
	x := n.Inputs[0]
	to := graph.DType(n.Attrs.Int("to", 0))
	if n.Op == "CastLike" {
		to = n.Inputs[1].DType
	}
	castable := func(dt graph.DType) bool { return isNumeric(dt) || dt == graph.Bool }
	if !castable(x.DType) || !castable(to) {
		return graph.Undefined, fmt.Errorf("cast from %v to %v is not supported", x.DType, to)
	}
	if err := CheckOutput(n, 0, to, x.Shape); err != nil {
		return graph.Undefined, err
	}
	return to, nil
}

// CheckBiasAct checks com.microsoft BiasGelu (bias required) and FastGelu (bias optional) for
// every backend: a float32, float16 or bfloat16 input of rank 1 or more, a bias of its type
// holding one element per last-dim position, and the output of the input's type and shape. It
// returns the last dim's size and whether the bias is present.
func CheckBiasAct(n *Node) (h int64, bias bool, err error) {
	minIn := 1
	if n.Op == "BiasGelu" {
		minIn = 2
	}
	if err := CheckArity(n, minIn, 2, 1, 1); err != nil {
		return 0, false, err
	}
	x := n.Inputs[0]
	if !isFloatKernelType(x.DType) || len(x.Shape) == 0 {
		return 0, false, fmt.Errorf("input is %v, want float32, float16 or bfloat16 of rank >= 1", x)
	}
	h = x.Shape[len(x.Shape)-1]
	if b, ok := n.Input(1); ok {
		c, err := NumElements(b.Shape)
		if err != nil || b.DType != x.DType || c != h || len(b.Shape) > len(x.Shape) {
			return 0, false, fmt.Errorf("bias %v, want %v[%d]", b, x.DType, h)
		}
		bias = true
	}
	if err := CheckOutput(n, 0, x.DType, x.Shape); err != nil {
		return 0, false, err
	}
	return h, bias, nil
}

// CheckBiasAdd checks com.microsoft.BiasAdd (Y = X + bias + skip) for every backend: X and skip
// [B, S, C] and bias [C] of one float32, float16 or bfloat16 type, and the output of X's type
// and shape.
func CheckBiasAdd(n *Node) error {
	if err := CheckArity(n, 3, 3, 1, 1); err != nil {
		return err
	}
	x, b, s := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if !isFloatKernelType(x.DType) || len(x.Shape) != 3 || b.DType != x.DType || s.DType != x.DType ||
		!slices.Equal(s.Shape, x.Shape) || !slices.Equal(b.Shape, x.Shape[2:]) {
		return fmt.Errorf("inputs %v, %v, %v: want X and skip [B, S, C] and bias [C] of one float type", x, b, s)
	}
	return CheckOutput(n, 0, x.DType, x.Shape)
}

// CheckSwish checks ONNX Swish (opset 24: X) and carve's SwiGLU (A and B of one type and one
// shape, no broadcast) for every backend: a float32, float16 or bfloat16 input and the output
// of its type and shape. It returns the alpha attribute (1 when absent) and whether the node is
// the gated SwiGLU.
func CheckSwish(n *Node) (alpha float32, gated bool, err error) {
	gated = n.Op == "SwiGLU"
	arity := 1
	if gated {
		arity = 2
	}
	if err := CheckArity(n, arity, arity, 1, 1); err != nil {
		return 0, false, err
	}
	a := n.Inputs[0]
	name := "X"
	if gated {
		name = "A"
	}
	if !isFloatKernelType(a.DType) {
		return 0, false, fmt.Errorf("%s is %v; want one of float32, float16, bfloat16", name, a.DType)
	}
	if gated {
		if b := n.Inputs[1]; b.DType != a.DType || !slices.Equal(a.Shape, b.Shape) {
			return 0, false, fmt.Errorf("A is %v%v and B %v%v; want one dtype and one shape (SwiGLU does not broadcast)", a.DType, a.Shape, b.DType, b.Shape)
		}
	}
	if err := CheckOutput(n, 0, a.DType, a.Shape); err != nil {
		return 0, false, err
	}
	return n.Attrs.Float("alpha", 1), gated, nil
}
