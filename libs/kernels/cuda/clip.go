package cuda

import (
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// Clip (opset 11 and later): y = min(max(x, min), max) elementwise, one carve_ew_* launch of
// EW_CLIP (csrc/elementwise.cu) as the CPU computes it (libs/kernels/cpu/clip.go): a NaN x
// stays NaN, a NaN bound clips nothing, a min above the max gives the max, an absent bound
// clips nothing (infinite, or the integer type's limit). The bounds (kernels.CheckClip) are
// read from device memory by the kernel, so they may be weights, host-evaluated constants or
// values the model computes on the device alike.
func clipOps() []*op {
	return []*op{{key: kernels.Key("", "Clip"), tactics: direct, sel: selectClip}}
}

func selectClip(n *kernels.Node, t kernels.Target) (plan, error) {
	if err := kernels.CheckClip(n); err != nil {
		return plan{}, err
	}
	x := n.Inputs[0]
	if !isFloat(x.DType) && !isInt(x.DType) {
		return plan{}, errDType("the input", x.DType, "float32, float16, bfloat16, int64 or int32")
	}
	bound := func(i int) operand {
		if _, ok := n.Input(i); ok {
			return operand{inp(i), []int64{}} // one element, broadcast: shape [] or [1]
		}
		return absent()
	}
	steps, err := ewSteps(x.DType, ewClip, graph.Undefined, x.Shape, outp(0), operand{inp(0), x.Shape}, bound(1), bound(2), 0, 0, t)
	if err != nil {
		return plan{}, err
	}
	// In place as the elementwise ops (selectBinary).
	return plan{tactic: "direct", prog: steps, inPlace: kernels.ElementwiseInPlace(n, 0)}, nil
}
