package cuda

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// The node checks below are those of the CPU kernels (carve.dev/libs/kernels/cpu, shapes.go),
// repeated here rather than exported from there: both backends must accept the same nodes, and
// the tests compare the two on the same node lists.

// numel is the element count of a shape already validated at Select (no overflow possible).
func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// normAxis resolves a possibly negative axis against rank.
func normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// broadcastShape is the multidirectional (numpy) broadcast of shapes.
func broadcastShape(shapes ...[]int64) ([]int64, error) {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make([]int64, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			o := &out[off+i]
			switch {
			case d == *o:
			case *o == 1:
				*o = d
			case d == 1:
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast", shapes)
			}
		}
	}
	return out, nil
}

// stridesOf is the row-major element strides of shape.
func stridesOf(shape []int64) []int64 {
	st := make([]int64, len(shape))
	s := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = s
		s *= shape[i]
	}
	return st
}

// checkOut verifies that output i of n exists with the wanted dtype and shape.
func checkOut(n *kernels.Node, i int, dt graph.DType, shape []int64) error {
	v, ok := n.Output(i)
	if !ok {
		return fmt.Errorf("output %d is missing", i)
	}
	if v.DType != dt {
		return fmt.Errorf("output %d is %v, want %v", i, v.DType, dt)
	}
	if !slices.Equal(v.Shape, shape) {
		return fmt.Errorf("output %d has shape %v, want %v", i, v.Shape, shape)
	}
	return nil
}

// arity checks the number of inputs (absent trailing optional ones may be omitted) and outputs.
func arity(n *kernels.Node, minIn, maxIn, minOut, maxOut int) error {
	in := len(n.Inputs)
	for in > 0 && !n.Inputs[in-1].Present() {
		in--
	}
	if in < minIn || in > maxIn {
		return fmt.Errorf("has %d inputs, want %d to %d", in, minIn, maxIn)
	}
	for i := 0; i < minIn; i++ {
		if !n.Inputs[i].Present() {
			return fmt.Errorf("required input %d is missing", i)
		}
	}
	out := len(n.Outputs)
	for out > 0 && !n.Outputs[out-1].Present() {
		out--
	}
	if out < minOut || out > maxOut {
		return fmt.Errorf("has %d outputs, want %d to %d", out, minOut, maxOut)
	}
	for i := 0; i < minOut; i++ {
		if !n.Outputs[i].Present() {
			return fmt.Errorf("required output %d is missing", i)
		}
	}
	return nil
}

func isFloat(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float16 || dt == graph.BFloat16
}

func isInt(dt graph.DType) bool { return dt == graph.Int64 || dt == graph.Int32 }

func isIndex(dt graph.DType) bool { return dt == graph.Int32 || dt == graph.Int64 }

// dtName is the kernel-name suffix of a float or integer type the CUDA kernels are built for.
func dtName(dt graph.DType) string {
	switch dt {
	case graph.Float32:
		return "f32"
	case graph.Float16:
		return "f16"
	case graph.BFloat16:
		return "bf16"
	case graph.Int64:
		return "i64"
	case graph.Int32:
		return "i32"
	}
	return ""
}

// errDType is the error for a dtype the CUDA kernels of an op are not built for.
func errDType(what string, dt graph.DType, want string) error {
	return fmt.Errorf("%s is %v; the CUDA kernels take %s", what, dt, want)
}

func equalShape(a, b []int64) bool { return slices.Equal(a, b) }

// pick is a range's low or high end.
func pick(d kernels.DimRange, hi bool) int64 {
	if hi {
		return d.Hi
	}
	return d.Lo
}
