package cpu

import (
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/internal/vec"
)

// onnxSwish is ONNX's Swish (ai.onnx, opset 24): Y = X * sigmoid(alpha * X), alpha 1 by
// default (SiLU). float32 is computed in float32 (package vec); for 16-bit types the sigmoid
// is computed in float64, the product in float32, as exporters write SiLU out (Sigmoid, then
// Mul).
//
// Tactic "direct": one pass; no workspace.
//
// SwiGLU (graph.DomainCarve; ONNX's SwiGLU of opset 28) is the same kernel with a second
// input B of A's shape: Y = Swish_alpha(A) * B, rounded once (the exported Swish then Mul
// rounds 16-bit types twice).
type onnxSwish struct {
	dt      graph.DType
	alpha   float64
	gated   bool // SwiGLU: multiply by in[1]
	workers int
}

func selectSwish(n *kernels.Node, d kernels.Target) (plan, error) {
	alpha, gated, err := kernels.CheckSwish(n)
	if err != nil {
		return plan{}, err
	}
	return plan{tactic: "direct", r: &onnxSwish{dt: n.Inputs[0].DType, alpha: float64(alpha), gated: gated, workers: d.Workers}}, nil
}

func (s *onnxSwish) run(in, out []kernels.Tensor, _ wsParts) error {
	if s.dt != graph.Float32 {
		var b []byte
		if s.gated {
			b = in[1].Data
		}
		swish[uint16](s, in[0].Data, b, out[0].Data)
		return nil
	}
	n := len(in[0].Float32s())
	runRanges(s, in, out, (n+parGrainElems-1)/parGrainElems, parGrainElems, weightPlain, s.workers)
	return nil
}

// runRange computes float32 chunks [lo, hi) of parGrainElems elements in float32 (package
// vec's SiLU), in parallel when large.
func (s *onnxSwish) runRange(in, out []kernels.Tensor, lo, hi int) {
	x := in[0].Float32s()
	x = x[lo*parGrainElems : min(hi*parGrainElems, len(x))]
	y := out[0].Float32s()[lo*parGrainElems:][:len(x)]
	vec.SiLU(y, x, float32(s.alpha))
	if s.gated {
		vec.VV(vec.Mul, y, y, in[1].Float32s()[lo*parGrainElems:][:len(x)])
	}
}

// swish is the 16-bit kernel; bb is SwiGLU's B, nil for Swish.
func swish[E elt](s *onnxSwish, xb, bb, yb []byte) {
	bf := s.dt == graph.BFloat16
	x, y := kernels.ViewAs[E](xb), kernels.ViewAs[E](yb)
	y = y[:len(x)]
	var b []E
	if bb != nil {
		b = kernels.ViewAs[E](bb)[:len(x)]
	}
	for i, v := range x {
		f := ld(v, bf)
		f *= float32(1 / (1 + math.Exp(-s.alpha*float64(f))))
		if b != nil {
			f *= ld(b[i], bf)
		}
		y[i] = st[E](f, bf)
	}
}

func onnxSwishOps() []*op {
	return []*op{
		{key: kernels.Key("", "Swish"), sel: selectSwish, tactics: direct},
		{key: kernels.Key(kernels.DomainCarve, "SwiGLU"), sel: selectSwish, tactics: direct},
	}
}
