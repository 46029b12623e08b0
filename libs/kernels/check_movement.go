package kernels

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// The checks of the ops that move elements without computing (Expand, Tile, Concat, Split,
// Slice); Transpose's are TransposePerm's and the views' CheckView's.

// isIndexType reports whether dt is an index type (int32 or int64).
func isIndexType(dt graph.DType) bool { return dt == graph.Int32 || dt == graph.Int64 }

// CheckExpand checks Expand(input, shape) for every backend: a 1-D int64 shape input and the
// output of the input's type whose shape is the input's broadcast with it.
func CheckExpand(n *Node) error {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return err
	}
	in, shp := n.Inputs[0], n.Inputs[1]
	if shp.DType != graph.Int64 || len(shp.Shape) != 1 {
		return fmt.Errorf("shape input is %v, want 1-D int64", shp)
	}
	out := n.Outputs[0].Shape
	if want, err := BroadcastShapes(in.Shape, out); err != nil || !slices.Equal(want, out) {
		return fmt.Errorf("output %v is not the broadcast of input %v with the shape input", out, in.Shape)
	}
	return CheckOutput(n, 0, in.DType, out)
}

// CheckTile checks Tile(input, repeats) for every backend: repeats int64 with one value per
// input dim, and the output of the input's type and rank whose every dim is a whole number of
// the input's (the repeats' values, which the graph inferred the output from, are the run's to
// check). It returns the repeat count of each dim (0 where the input dim is empty).
func CheckTile(n *Node) ([]int64, error) {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return nil, err
	}
	in, rep := n.Inputs[0], n.Inputs[1]
	if rep.DType != graph.Int64 || len(rep.Shape) != 1 || rep.Shape[0] != int64(len(in.Shape)) {
		return nil, fmt.Errorf("repeats is %v, want int64[%d]", rep, len(in.Shape))
	}
	out := n.Outputs[0]
	if out.DType != in.DType || len(out.Shape) != len(in.Shape) {
		return nil, fmt.Errorf("output %v for input %v", out, in)
	}
	reps := make([]int64, len(in.Shape))
	for i, d := range in.Shape {
		if d == 0 && out.Shape[i] != 0 || d != 0 && out.Shape[i]%d != 0 {
			return nil, fmt.Errorf("output %v is not a tiling of input %v", out.Shape, in.Shape)
		}
		if d != 0 {
			reps[i] = out.Shape[i] / d
		}
	}
	return reps, nil
}

// CheckConcat checks Concat for every backend: present inputs of one type and rank (not
// scalars) agreeing on every dim but the axis, and the output of their type whose axis dim is
// their sum. It returns the normalized axis and the output's shape.
func CheckConcat(n *Node) (axis int, out []int64, err error) {
	if err := CheckArity(n, 1, 1<<20, 1, 1); err != nil {
		return 0, nil, err
	}
	first := n.Inputs[0]
	r := len(first.Shape)
	if r == 0 {
		return 0, nil, fmt.Errorf("cannot concatenate scalars")
	}
	if axis, err = NormAxis(n.Attrs.Int("axis", 0), r); err != nil {
		return 0, nil, err
	}
	out = slices.Clone(first.Shape)
	out[axis] = 0
	for i, v := range n.Inputs {
		if !v.Present() || v.DType != first.DType || len(v.Shape) != r {
			return 0, nil, fmt.Errorf("input %d is %v, want %v of rank %d", i, v, first.DType, r)
		}
		for k := range v.Shape {
			if k != axis && v.Shape[k] != first.Shape[k] {
				return 0, nil, fmt.Errorf("input %d has shape %v, incompatible with %v on axis %d", i, v.Shape, first.Shape, axis)
			}
		}
		out[axis] += v.Shape[axis]
	}
	if err := CheckOutput(n, 0, first.DType, out); err != nil {
		return 0, nil, err
	}
	return axis, out, nil
}

// CheckSplit checks Split for every backend: an int32 or int64 split input when present, and
// present outputs of the input's type and shape but for the axis, whose dims there sum to the
// input's (the split sizes are the outputs' shapes). It returns the normalized axis.
func CheckSplit(n *Node) (int, error) {
	if err := CheckArity(n, 1, 2, 1, 1<<20); err != nil {
		return 0, err
	}
	in := n.Inputs[0]
	axis, err := NormAxis(n.Attrs.Int("axis", 0), len(in.Shape))
	if err != nil {
		return 0, err
	}
	if s, ok := n.Input(1); ok && !isIndexType(s.DType) {
		return 0, fmt.Errorf("split input is %v, want int64", s.DType)
	}
	var sum int64
	for i, v := range n.Outputs {
		if !v.Present() {
			return 0, fmt.Errorf("output %d is missing", i)
		}
		if len(v.Shape) != len(in.Shape) {
			return 0, fmt.Errorf("output %d has rank %d, input %d", i, len(v.Shape), len(in.Shape))
		}
		want := slices.Clone(in.Shape)
		want[axis] = v.Shape[axis]
		if err := CheckOutput(n, i, in.DType, want); err != nil {
			return 0, err
		}
		sum += v.Shape[axis]
	}
	if sum != in.Shape[axis] {
		return 0, fmt.Errorf("outputs take %d of axis %d, input has %d", sum, axis, in.Shape[axis])
	}
	return axis, nil
}

// CheckSlice checks Slice(data, starts, ends[, axes[, steps]]) for every backend: starts, ends,
// axes and steps 1-D int32 or int64 tensors of one length, and the output of the data's type
// and rank (the values, which the graph inferred the output from, are the run's to check). It
// returns that length, the number of sliced axes.
func CheckSlice(n *Node) (int64, error) {
	if err := CheckArity(n, 3, 5, 1, 1); err != nil {
		return 0, err
	}
	in := n.Inputs[0]
	k := int64(-1)
	for i := 1; i < 5; i++ {
		v, ok := n.Input(i)
		if !ok {
			continue
		}
		if !isIndexType(v.DType) || len(v.Shape) != 1 {
			return 0, fmt.Errorf("input %d is %v, want a 1-D int32 or int64 tensor", i, v)
		}
		if k >= 0 && v.Shape[0] != k {
			return 0, fmt.Errorf("input %d has %d values, starts %d", i, v.Shape[0], k)
		}
		k = v.Shape[0]
	}
	if out := n.Outputs[0]; out.DType != in.DType || len(out.Shape) != len(in.Shape) {
		return 0, fmt.Errorf("output %v for input %v", out, in)
	}
	return k, nil
}
