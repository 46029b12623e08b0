package cuda

import (
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

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

func geluOps() []*op {
	ms := kernels.DomainMicrosoft
	return []*op{
		directOp(ms, "BiasGelu", selectBiasAct(ewBiasGelu)),
		directOp(ms, "FastGelu", selectBiasAct(ewBiasGeluTanh)),
		directOp(ms, "BiasAdd", selectBiasAdd),
	}
}
