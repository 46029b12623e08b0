package cpu

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// onnxSwish is ONNX's Swish (ai.onnx, opset 24): Y = X * sigmoid(alpha * X), alpha 1 by
// default (SiLU). The sigmoid is computed in float64, the product in float32, as exporters
// write SiLU out (Sigmoid, then Mul).
//
// Tactic "direct": one pass; no workspace.
type onnxSwish struct {
	dt    graph.DType
	alpha float64
}

func selectONNXSwish(n *kernels.Node, _ kernels.Target) (plan, error) {
	if err := arity(n, 1, 1, 1, 1); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if !halfOK(x.DType) {
		return plan{}, fmt.Errorf("X is %v; want one of float32, float16, bfloat16", x.DType)
	}
	if err := checkOut(n, 0, x.DType, x.Shape); err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", r: &onnxSwish{dt: x.DType, alpha: float64(n.Attrs.Float("alpha", 1))}}, nil
}

func (s *onnxSwish) run(in, out []kernels.Tensor, _ wsParts) error {
	if s.dt != graph.Float32 {
		swish[uint16](s, in[0].Data, out[0].Data)
		return nil
	}
	x, y := in[0].Float32s(), out[0].Float32s()
	y = y[:len(x)]
	for i, v := range x { // float32 written out: the generic element loads are not inlined
		y[i] = v * float32(1/(1+math.Exp(-s.alpha*float64(v))))
	}
	return nil
}

func swish[E elt](s *onnxSwish, xb, yb []byte) {
	bf := s.dt == graph.BFloat16
	x, y := kernels.ViewAs[E](xb), kernels.ViewAs[E](yb)
	y = y[:len(x)]
	for i, v := range x {
		f := ld(v, bf)
		y[i] = st[E](f*float32(1/(1+math.Exp(-s.alpha*float64(f)))), bf)
	}
}

func onnxSwishOps() []*op {
	return []*op{{key: kernels.Key("", "Swish"), sel: selectONNXSwish, tactics: direct}}
}
