package cuda

import (
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

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
		// In place: a thread reads element i of an operand of the output's shape (its offset is
		// i), then writes element i of the output (csrc/elementwise.cu has no __restrict__).
		return plan{tactic: "direct", prog: steps, inPlace: kernels.ElementwiseInPlace(n)}, nil
	}
}

func binaryOps() []*op {
	mk := func(name string, o ewOp) *op { return directOp("", name, selectBinary(o)) }
	return []*op{
		mk("Add", ewAdd), mk("Sub", ewSub), mk("Mul", ewMul), mk("Div", ewDiv), mk("Mod", ewMod),
		mk("Equal", ewEq), mk("Less", ewLt), mk("LessOrEqual", ewLe), mk("Greater", ewGt),
		mk("GreaterOrEqual", ewGe), mk("And", ewAnd), mk("Or", ewOr), mk("Xor", ewXor),
	}
}
