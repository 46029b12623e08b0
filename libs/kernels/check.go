package kernels

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// The node checks every backend's Select makes the same way, so that backends accept exactly the
// same nodes: the axis, broadcast, arity and output rules of the ONNX operators.

// NormAxis resolves a possibly negative axis against rank.
func NormAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// BroadcastShapes is the multidirectional (numpy) broadcast of shapes.
func BroadcastShapes(shapes ...[]int64) ([]int64, error) {
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

// CheckOutput verifies that output i of n exists with the wanted dtype and shape.
func CheckOutput(n *Node, i int, dt graph.DType, shape []int64) error {
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

// CheckArity checks the number of inputs (absent trailing optional ones may be omitted) and
// outputs, and that the required ones are present.
func CheckArity(n *Node, minIn, maxIn, minOut, maxOut int) error {
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
