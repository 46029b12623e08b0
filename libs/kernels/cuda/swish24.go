package cuda

import "carve.dev/libs/kernels"

// selectSwish is carve's SwiGLU (gated: Y = A * sigmoid(alpha A) * B, A and B of one shape;
// ONNX's SwiGLU of opset 28) and ONNX Swish (opset 24: Y = X * sigmoid(alpha X)), alpha 1 by
// default: one launch of carve_swiglu, B null for Swish.
func selectSwish(n *kernels.Node, t kernels.Target) (plan, error) {
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

func onnxSwishOps() []*op {
	return []*op{directOp("", "Swish", selectSwish), directOp(kernels.DomainCarve, "SwiGLU", selectSwish)}
}
