package cuda

import (
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

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
		// In place as the binary ops.
		return plan{tactic: "direct", prog: steps, inPlace: kernels.ElementwiseInPlace(n, 0)}, nil
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

func unaryOps() []*op {
	mk := func(name string, o ewOp) *op { return directOp("", name, selectUnary(o)) }
	ms := func(name string, o ewOp) *op { return directOp(kernels.DomainMicrosoft, name, selectUnary(o)) }
	pr := func(name string) *op { return directOp("", name, selectPredicate(name)) }
	return []*op{
		mk("Abs", ewAbs), mk("Neg", ewNeg), mk("Sign", ewSign), mk("Relu", ewRelu), mk("Sqrt", ewSqrt),
		mk("Reciprocal", ewRecip), mk("Exp", ewExp), mk("Log", ewLog), mk("Tanh", ewTanh),
		mk("Sigmoid", ewSigmoid), mk("Sin", ewSin), mk("Cos", ewCos), mk("Tan", ewTan), mk("Atan", ewAtan),
		mk("Erf", ewErf), mk("Floor", ewFloor), mk("Ceil", ewCeil), mk("Round", ewRound),
		mk("Softplus", ewSoftplus), mk("Softsign", ewSoftsign), mk("Gelu", ewGelu), mk("LeakyRelu", ewLeakyRelu),
		mk("Elu", ewElu), mk("HardSigmoid", ewHardSigmoid), mk("HardSwish", ewHardSwish),
		ms("Gelu", ewGelu), ms("QuickGelu", ewQuickGelu),
		pr("Not"), pr("IsNaN"), pr("IsInf"),
		directOp("", "Cast", selectCast), directOp("", "CastLike", selectCast),
	}
}
