package cuda

import (
	"fmt"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// ewOp is an op code of the elementwise kernels, the numbers of csrc/ops.cuh.
type ewOp int

const (
	ewAbs          ewOp = 0
	ewNeg          ewOp = 1
	ewSign         ewOp = 2
	ewRelu         ewOp = 3
	ewSqrt         ewOp = 4
	ewRecip        ewOp = 5
	ewExp          ewOp = 6
	ewLog          ewOp = 7
	ewTanh         ewOp = 8
	ewSigmoid      ewOp = 9
	ewSin          ewOp = 10
	ewCos          ewOp = 11
	ewTan          ewOp = 12
	ewAtan         ewOp = 13
	ewErf          ewOp = 14
	ewFloor        ewOp = 15
	ewCeil         ewOp = 16
	ewRound        ewOp = 17
	ewSoftplus     ewOp = 18
	ewSoftsign     ewOp = 19
	ewGelu         ewOp = 20
	ewGeluTanh     ewOp = 21
	ewLeakyRelu    ewOp = 22
	ewElu          ewOp = 23
	ewHardSigmoid  ewOp = 24
	ewQuickGelu    ewOp = 25
	ewSilu         ewOp = 26
	ewHardSwish    ewOp = 27
	ewIdentity     ewOp = 28
	ewScale        ewOp = 29
	ewAdd          ewOp = 64
	ewSub          ewOp = 65
	ewMul          ewOp = 66
	ewDiv          ewOp = 67
	ewMod          ewOp = 68
	ewFmod         ewOp = 69
	ewMax          ewOp = 70
	ewMin          ewOp = 71
	ewPow          ewOp = 72
	ewBiasGelu     ewOp = 73
	ewBiasGeluTanh ewOp = 74
	ewAdd3         ewOp = 96
	ewClip         ewOp = 97
	ewEq           ewOp = 128
	ewLt           ewOp = 129
	ewLe           ewOp = 130
	ewGt           ewOp = 131
	ewGe           ewOp = 132
	ewIsNaN        ewOp = 133
	ewIsInf        ewOp = 134
	ewAnd          ewOp = 160
	ewOr           ewOp = 161
	ewXor          ewOp = 162
	ewNot          ewOp = 163
)

// ewOpNames maps the csrc/ops.cuh names to the codes, for the test that keeps them in step.
var ewOpNames = map[string]ewOp{
	"EW_ABS": ewAbs, "EW_NEG": ewNeg, "EW_SIGN": ewSign, "EW_RELU": ewRelu, "EW_SQRT": ewSqrt,
	"EW_RECIP": ewRecip, "EW_EXP": ewExp, "EW_LOG": ewLog, "EW_TANH": ewTanh, "EW_SIGMOID": ewSigmoid,
	"EW_SIN": ewSin, "EW_COS": ewCos, "EW_TAN": ewTan, "EW_ATAN": ewAtan, "EW_ERF": ewErf,
	"EW_FLOOR": ewFloor, "EW_CEIL": ewCeil, "EW_ROUND": ewRound, "EW_SOFTPLUS": ewSoftplus,
	"EW_SOFTSIGN": ewSoftsign, "EW_GELU": ewGelu, "EW_GELU_TANH": ewGeluTanh,
	"EW_LEAKY_RELU": ewLeakyRelu, "EW_ELU": ewElu, "EW_HARD_SIGMOID": ewHardSigmoid,
	"EW_QUICK_GELU": ewQuickGelu, "EW_SILU": ewSilu, "EW_HARD_SWISH": ewHardSwish,
	"EW_IDENTITY": ewIdentity, "EW_SCALE": ewScale, "EW_ADD": ewAdd, "EW_SUB": ewSub, "EW_MUL": ewMul,
	"EW_DIV": ewDiv, "EW_MOD": ewMod, "EW_FMOD": ewFmod, "EW_MAX": ewMax, "EW_MIN": ewMin,
	"EW_POW": ewPow, "EW_BIAS_GELU": ewBiasGelu, "EW_BIAS_GELU_TANH": ewBiasGeluTanh,
	"EW_ADD3": ewAdd3, "EW_CLIP": ewClip, "EW_EQ": ewEq, "EW_LT": ewLt, "EW_LE": ewLe, "EW_GT": ewGt,
	"EW_GE": ewGe, "EW_ISNAN": ewIsNaN, "EW_ISINF": ewIsInf, "EW_AND": ewAnd, "EW_OR": ewOr,
	"EW_XOR": ewXor, "EW_NOT": ewNot,
}

func (o ewOp) compare() bool { return o >= ewEq && o <= ewGe }
func (o ewOp) logical() bool { return o >= ewAnd }

// operand is an input of an elementwise launch: where it is and its shape, broadcast to the
// output's. An absent operand (absent()) reads as a null pointer.
type operand struct {
	ref   param
	shape []int64
}

func absent() operand { return operand{ref: nullp(), shape: []int64{}} }

// ewSteps is one launch of an elementwise kernel over an output of dtype-class dt and the given
// shape: out = op(a, b, c). bdt, when not Undefined, is b's dtype where it differs from a's
// (Pow's exponent).
func ewSteps(dt graph.DType, op ewOp, bdt graph.DType, shape []int64, out param, a, b, c operand, alpha, beta float32, t kernels.Target) ([]step, error) {
	l, err := broadcastLayout(shape, a.shape, b.shape, c.shape)
	if err != nil {
		return nil, err
	}
	n := numel(shape)
	if n == 0 {
		return nil, nil
	}
	kernel := "carve_ew_bool"
	if dt != graph.Bool {
		if dtName(dt) == "" {
			return nil, errDType("the operand type", dt, "float32, float16, bfloat16, int64, int32 or bool")
		}
		kernel = "carve_ew_" + dtName(dt)
	}
	opx := int(op)
	if bdt != graph.Undefined {
		opx |= int(bdt) << 16
	}
	per := int64(1)
	if l.rank == 1 && dt != graph.Bool {
		per = 16 / dt.Size()
	}
	ps := append([]param{out, a.ref, b.ref, c.ref, i64p(n), i32p(opx), f32p(alpha), f32p(beta)}, l.params()...)
	return []step{{kernel: kernel, grid: grid1(n, per, t), block: block1, params: ps}}, nil
}

// ---------------------------------------------------------------- binary and variadic ops

func selectBinary(kop ewOp) func(n *kernels.Node, t kernels.Target) (plan, error) {
	kind := kernels.BinaryArith
	switch {
	case kop.logical():
		kind = kernels.BinaryLogical
	case kop.compare():
		kind = kernels.BinaryCompare
	}
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		op := kop // per node: Mod picks its form below
		shape, fmod, err := kernels.CheckBinary(n, kind)
		if err != nil {
			return plan{}, err
		}
		a, b := n.Inputs[0], n.Inputs[1]
		dt := a.DType
		switch {
		case op.logical():
		case op.compare():
			if !isFloat(dt) && !isInt(dt) && dt != graph.Bool {
				return plan{}, errDType("the operands' type", dt, "float32, float16, bfloat16, int64 or int32 (bool for Equal)")
			}
		default:
			if !isFloat(dt) && !isInt(dt) {
				return plan{}, errDType("the operands' type", dt, "float32, float16, bfloat16, int64 or int32")
			}
		}
		if fmod {
			op = ewFmod
		}
		steps, err := ewSteps(dt, op, graph.Undefined, shape, outp(0), operand{inp(0), a.Shape}, operand{inp(1), b.Shape}, absent(), 0, 0, t)
		if err != nil {
			return plan{}, err
		}
		return plan{tactic: "direct", prog: steps}, nil
	}
}

// selectVariadic is Max, Min, Sum and Mean over one or more broadcast operands: the first two are
// combined into the output and every further operand is folded into it in place; Mean then
// scales by 1/n.
func selectVariadic(op ewOp, mean bool) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		shape, err := kernels.CheckVariadic(n)
		if err != nil {
			return plan{}, err
		}
		dt := n.Inputs[0].DType
		if !isFloat(dt) && !isInt(dt) {
			return plan{}, errDType("the inputs' type", dt, "float32, float16, bfloat16, int64 or int32")
		}
		shapes := make([][]int64, len(n.Inputs))
		for i, v := range n.Inputs {
			shapes[i] = v.Shape
		}
		var prog program
		if len(shapes) == 1 {
			st, err := broadcastStrides(shape, shapes[0])
			if err != nil {
				return plan{}, err
			}
			l, err := newLayout(shape, st, stridesOf(shape))
			if err != nil {
				return plan{}, err
			}
			steps, err := copySteps(l, dt.Size(), inp(0), outp(0), t)
			if err != nil {
				return plan{}, err
			}
			prog = append(prog, steps...)
		} else {
			steps, err := ewSteps(dt, op, graph.Undefined, shape, outp(0), operand{inp(0), shapes[0]}, operand{inp(1), shapes[1]}, absent(), 0, 0, t)
			if err != nil {
				return plan{}, err
			}
			prog = append(prog, steps...)
			for k := 2; k < len(shapes); k++ {
				steps, err := ewSteps(dt, op, graph.Undefined, shape, outp(0), operand{outp(0), shape}, operand{inp(k), shapes[k]}, absent(), 0, 0, t)
				if err != nil {
					return plan{}, err
				}
				prog = append(prog, steps...)
			}
		}
		if mean {
			steps, err := ewSteps(dt, ewScale, graph.Undefined, shape, outp(0), operand{outp(0), shape}, absent(), absent(), float32(1/float64(len(shapes))), 0, t)
			if err != nil {
				return plan{}, err
			}
			prog = append(prog, steps...)
		}
		return plan{tactic: "direct", prog: prog}, nil
	}
}

// selectPow is Pow(X, Y): X float or integer, Y float or integer, broadcast.
func selectPow(n *kernels.Node, t kernels.Target) (plan, error) {
	shape, err := kernels.CheckPow(n)
	if err != nil {
		return plan{}, err
	}
	a, b := n.Inputs[0], n.Inputs[1]
	if !isFloat(a.DType) && !isInt(a.DType) || !isFloat(b.DType) && !isInt(b.DType) {
		return plan{}, errDType(fmt.Sprintf("Pow of %v by", a.DType), b.DType, "float32, float16, bfloat16, int64 or int32 operands")
	}
	bdt := graph.Undefined
	if b.DType != a.DType {
		bdt = b.DType
	}
	steps, err := ewSteps(a.DType, ewPow, bdt, shape, outp(0), operand{inp(0), a.Shape}, operand{inp(1), b.Shape}, absent(), 0, 0, t)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", prog: steps}, nil
}

// selectWhere is Where(cond, X, Y) with three-way broadcasting, moving elements by size.
func selectWhere(n *kernels.Node, t kernels.Target) (plan, error) {
	shape, err := kernels.CheckWhere(n)
	if err != nil {
		return plan{}, err
	}
	c, x, y := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	es := x.DType.Size()
	if es != 1 && es != 2 && es != 4 && es != 8 {
		return plan{}, errDType("the branches' type", x.DType, "a type of 1, 2, 4 or 8 bytes")
	}
	l, err := broadcastLayout(shape, c.Shape, x.Shape, y.Shape)
	if err != nil {
		return plan{}, err
	}
	total := numel(shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	ps := append([]param{outp(0), inp(0), inp(1), inp(2), i64p(total)}, l.params()...)
	st := step{kernel: fmt.Sprintf("carve_where_%d", es), grid: grid1(total, 1, t), block: block1, params: ps}
	if ve := 16 / es; l.rank > 0 && l.dims[l.rank-1]%ve == 0 {
		if contig, ok := innerContig(l); ok {
			base := st
			rows := append([]param{outp(0), inp(0), inp(1), inp(2), i64p(total), i32p(contig)}, l.params()...)
			st = step{kernel: fmt.Sprintf("carve_where_rows_%d", es), grid: grid1(total, ve, t), block: block1, params: rows,
				align: 16, alignOnly: []int{0, 2, 3}, fallback: &base}
		}
	}
	return plan{tactic: "direct", prog: program{st}}, nil
}

// innerContig reports whether every operand of l is contiguous (stride 1) or broadcast (stride
// 0) along the innermost dim, and which are contiguous: bit k for operand k.
func innerContig(l layout) (contig int, ok bool) {
	if l.rank == 0 {
		return 0, false
	}
	for k := range 3 {
		switch l.st[k][l.rank-1] {
		case 1:
			contig |= 1 << k
		case 0:
		default:
			return 0, false
		}
	}
	return contig, true
}

// ---------------------------------------------------------------- unary ops

func selectUnary(kop ewOp) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		op := kop // per node: Gelu picks its form below
		a, err := kernels.CheckUnary(n)
		if err != nil {
			return plan{}, err
		}
		x := n.Inputs[0]
		switch {
		case isFloat(x.DType):
		case isInt(x.DType) && op <= ewRelu:
		default:
			return plan{}, errDType("the input", x.DType, "float32, float16 or bfloat16 (int64 and int32 for Abs, Neg, Sign, Relu)")
		}
		alpha, beta := a.Alpha, a.Beta
		if a.Tanh {
			op = ewGeluTanh
		}
		steps, err := ewSteps(x.DType, op, graph.Undefined, x.Shape, outp(0), operand{inp(0), x.Shape}, absent(), absent(), alpha, beta, t)
		if err != nil {
			return plan{}, err
		}
		return plan{tactic: "direct", prog: steps}, nil
	}
}

// selectPredicate is Not, IsNaN and IsInf: bool output.
func selectPredicate(name string) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		if err := kernels.CheckPredicate(n); err != nil {
			return plan{}, err
		}
		x := n.Inputs[0]
		if name != "Not" && !isFloat(x.DType) {
			return plan{}, errDType("the input", x.DType, "float32, float16 or bfloat16 for IsNaN and IsInf")
		}
		op := ewNot
		var alpha, beta float32
		switch name {
		case "IsNaN":
			op = ewIsNaN
		case "IsInf":
			op = ewIsInf
			alpha, beta = float32(n.Attrs.Int("detect_negative", 1)), float32(n.Attrs.Int("detect_positive", 1))
		}
		steps, err := ewSteps(x.DType, op, graph.Undefined, x.Shape, outp(0), operand{inp(0), x.Shape}, absent(), absent(), alpha, beta, t)
		if err != nil {
			return plan{}, err
		}
		return plan{tactic: "direct", prog: steps}, nil
	}
}

// selectCast is Cast and CastLike: C conversion semantics, anything to bool is x != 0.
func selectCast(n *kernels.Node, t kernels.Target) (plan, error) {
	to, err := kernels.CheckCast(n)
	if err != nil {
		return plan{}, err
	}
	x := n.Inputs[0] // carve_cast reads and writes every type kernels.CheckCast allows
	total := numel(x.Shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	if x.DType == to {
		l, err := contiguous(total)
		if err != nil {
			return plan{}, err
		}
		steps, err := copySteps(l, to.Size(), inp(0), outp(0), t)
		return plan{tactic: "direct", prog: steps}, err
	}
	st := step{kernel: "carve_cast", grid: grid1(total, 1, t), block: block1,
		params: []param{outp(0), inp(0), i64p(total), i32p(int(x.DType)), i32p(int(to))}}
	return plan{tactic: "direct", prog: program{st}}, nil
}

// ---------------------------------------------------------------- contrib activations

// selectBiasAct is com.microsoft BiasGelu (erf GELU of A + B) and FastGelu (tanh GELU of X +
// bias, bias optional); the bias is broadcast over the last dim.
func selectBiasAct(kop ewOp) func(n *kernels.Node, t kernels.Target) (plan, error) {
	return func(n *kernels.Node, t kernels.Target) (plan, error) {
		op := kop // per node: without a bias, the plain activation
		h, bias, err := kernels.CheckBiasAct(n)
		if err != nil {
			return plan{}, err
		}
		x := n.Inputs[0]
		b := absent()
		if bias {
			b = operand{inp(1), []int64{h}}
		} else {
			op = map[ewOp]ewOp{ewBiasGelu: ewGelu, ewBiasGeluTanh: ewGeluTanh}[op]
		}
		steps, err := ewSteps(x.DType, op, graph.Undefined, x.Shape, outp(0), operand{inp(0), x.Shape}, b, absent(), 0, 0, t)
		if err != nil {
			return plan{}, err
		}
		return plan{tactic: "direct", prog: steps}, nil
	}
}

// selectBiasAdd is com.microsoft.BiasAdd: Y = X + bias + skip, X and skip [B, S, C], bias [C].
func selectBiasAdd(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckBiasAdd(n); err != nil {
		return plan{}, err
	}
	x, b, s := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	steps, err := ewSteps(x.DType, ewAdd3, graph.Undefined, x.Shape, outp(0), operand{inp(0), x.Shape}, operand{inp(1), b.Shape}, operand{inp(2), s.Shape}, 0, 0, t)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", prog: steps}, nil
}

// selectSwiGLU is carve's SwiGLU (gated: Y = A * sigmoid(alpha A) * B, A and B of one shape;
// ONNX's SwiGLU of opset 28) and ONNX Swish (opset 24: Y = X * sigmoid(alpha X)), alpha 1 by
// default: one launch of carve_swiglu, B null for Swish.
func selectSwiGLU(n *kernels.Node, t kernels.Target) (plan, error) {
	alpha, gated, err := kernels.CheckSwish(n)
	if err != nil {
		return plan{}, err
	}
	a := n.Inputs[0]
	b := nullp()
	if gated {
		b = inp(1)
	}
	total := numel(a.Shape)
	if total == 0 {
		return plan{tactic: "direct"}, nil
	}
	st := step{kernel: "carve_swiglu_" + dtName(a.DType), grid: grid1(total, 16/a.DType.Size(), t), block: block1,
		params: []param{outp(0), inp(0), b, i64p(total), f32p(alpha)}, dependent: true}
	return plan{tactic: "direct", prog: program{st}}, nil
}

func elementwiseOps() []*op {
	mk := func(domain, name string, sel func(*kernels.Node, kernels.Target) (plan, error)) *op {
		return &op{key: kernels.Key(domain, name), tactics: direct, sel: sel}
	}
	ms := kernels.DomainMicrosoft
	return []*op{
		mk("", "Add", selectBinary(ewAdd)), mk("", "Sub", selectBinary(ewSub)), mk("", "Mul", selectBinary(ewMul)),
		mk("", "Div", selectBinary(ewDiv)), mk("", "Mod", selectBinary(ewMod)),
		mk("", "Equal", selectBinary(ewEq)), mk("", "Less", selectBinary(ewLt)), mk("", "LessOrEqual", selectBinary(ewLe)),
		mk("", "Greater", selectBinary(ewGt)), mk("", "GreaterOrEqual", selectBinary(ewGe)),
		mk("", "And", selectBinary(ewAnd)), mk("", "Or", selectBinary(ewOr)), mk("", "Xor", selectBinary(ewXor)),
		mk("", "Max", selectVariadic(ewMax, false)), mk("", "Min", selectVariadic(ewMin, false)),
		mk("", "Sum", selectVariadic(ewAdd, false)), mk("", "Mean", selectVariadic(ewAdd, true)),
		mk("", "Pow", selectPow), mk("", "Where", selectWhere),
		mk("", "Abs", selectUnary(ewAbs)), mk("", "Neg", selectUnary(ewNeg)), mk("", "Sign", selectUnary(ewSign)),
		mk("", "Relu", selectUnary(ewRelu)), mk("", "Sqrt", selectUnary(ewSqrt)), mk("", "Reciprocal", selectUnary(ewRecip)),
		mk("", "Exp", selectUnary(ewExp)), mk("", "Log", selectUnary(ewLog)), mk("", "Tanh", selectUnary(ewTanh)),
		mk("", "Sigmoid", selectUnary(ewSigmoid)), mk("", "Sin", selectUnary(ewSin)), mk("", "Cos", selectUnary(ewCos)),
		mk("", "Tan", selectUnary(ewTan)), mk("", "Atan", selectUnary(ewAtan)), mk("", "Erf", selectUnary(ewErf)),
		mk("", "Floor", selectUnary(ewFloor)), mk("", "Ceil", selectUnary(ewCeil)), mk("", "Round", selectUnary(ewRound)),
		mk("", "Softplus", selectUnary(ewSoftplus)), mk("", "Softsign", selectUnary(ewSoftsign)),
		mk("", "Gelu", selectUnary(ewGelu)), mk("", "LeakyRelu", selectUnary(ewLeakyRelu)), mk("", "Elu", selectUnary(ewElu)),
		mk("", "HardSigmoid", selectUnary(ewHardSigmoid)), mk("", "HardSwish", selectUnary(ewHardSwish)),
		mk(ms, "Gelu", selectUnary(ewGelu)), mk(ms, "QuickGelu", selectUnary(ewQuickGelu)),
		mk("", "Swish", selectSwiGLU), mk(kernels.DomainCarve, "SwiGLU", selectSwiGLU),
		mk("", "Not", selectPredicate("Not")), mk("", "IsNaN", selectPredicate("IsNaN")), mk("", "IsInf", selectPredicate("IsInf")),
		mk("", "Cast", selectCast), mk("", "CastLike", selectCast),
		mk(ms, "BiasGelu", selectBiasAct(ewBiasGelu)), mk(ms, "FastGelu", selectBiasAct(ewBiasGeluTanh)),
		mk(ms, "BiasAdd", selectBiasAdd),
	}
}
