package kernels

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// The checks of the indexing ops (Gather, GatherElements, GatherND, ScatterND).

// CheckGather checks Gather for every backend: int32 or int64 indices, data of rank 1 or more,
// the axis, and the output of the data's type and shape data[:axis] + indices + data[axis+1:].
// It returns the normalized axis.
func CheckGather(n *Node) (int, error) {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return 0, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	if !isIndexType(idx.DType) {
		return 0, fmt.Errorf("indices are %v, want int32 or int64", idx.DType)
	}
	if len(data.Shape) == 0 {
		return 0, fmt.Errorf("cannot gather from a scalar")
	}
	axis, err := NormAxis(n.Attrs.Int("axis", 0), len(data.Shape))
	if err != nil {
		return 0, err
	}
	out := slices.Concat(data.Shape[:axis], idx.Shape, data.Shape[axis+1:])
	if err := CheckOutput(n, 0, data.DType, out); err != nil {
		return 0, err
	}
	return axis, nil
}

// CheckGatherND checks GatherND for every backend: int32 or int64 indices, batch_dims below
// both ranks with equal batch dims, index tuples of length 1 to the data's rank past them, and
// the output of the data's type and shape indices[:-1] + data[batch_dims+m:]. It returns
// batch_dims and the tuple length m.
func CheckGatherND(n *Node) (b, m int, err error) {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return 0, 0, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	if !isIndexType(idx.DType) {
		return 0, 0, fmt.Errorf("indices are %v, want int32 or int64", idx.DType)
	}
	bd := n.Attrs.Int("batch_dims", 0)
	r, q := len(data.Shape), len(idx.Shape)
	if q < 1 || r < 1 || bd < 0 || bd >= int64(min(r, q)) {
		return 0, 0, fmt.Errorf("batch_dims %d for data rank %d and indices rank %d", bd, r, q)
	}
	b = int(bd)
	tl := idx.Shape[q-1]
	if tl < 1 || tl > int64(r-b) {
		return 0, 0, fmt.Errorf("index tuples of length %d for data rank %d with batch_dims %d", tl, r, b)
	}
	m = int(tl)
	if !slices.Equal(data.Shape[:b], idx.Shape[:b]) {
		return 0, 0, fmt.Errorf("batch dims of data %v and indices %v differ", data.Shape, idx.Shape)
	}
	out := slices.Concat(idx.Shape[:q-1], data.Shape[b+m:])
	if err := CheckOutput(n, 0, data.DType, out); err != nil {
		return 0, 0, err
	}
	return b, m, nil
}

// ScatterReductions are ScatterND's reduction attribute's values.
var ScatterReductions = []string{"none", "add", "mul", "max", "min"}

// CheckScatterND checks ScatterND(data, indices, updates) for every backend: int32 or int64
// indices, index tuples of length 1 to the data's rank, updates of the data's type and shape
// indices[:-1] + data[m:], the output of the data's type and shape, and a known reduction. It
// returns the tuple length m and the reduction.
func CheckScatterND(n *Node) (m int, reduction string, err error) {
	if err := CheckArity(n, 3, 3, 1, 1); err != nil {
		return 0, "", err
	}
	data, idx, upd := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if !isIndexType(idx.DType) {
		return 0, "", fmt.Errorf("indices are %v, want int32 or int64", idx.DType)
	}
	r, q := len(data.Shape), len(idx.Shape)
	if q < 1 || r < 1 {
		return 0, "", fmt.Errorf("indices rank %d, data rank %d", q, r)
	}
	if tl := idx.Shape[q-1]; tl < 1 || tl > int64(r) {
		return 0, "", fmt.Errorf("index tuples of length %d for data rank %d", tl, r)
	}
	m = int(idx.Shape[q-1])
	if want := slices.Concat(idx.Shape[:q-1], data.Shape[m:]); !slices.Equal(upd.Shape, want) || upd.DType != data.DType {
		return 0, "", fmt.Errorf("updates are %v, want %v%v", upd, data.DType, want)
	}
	if err := CheckOutput(n, 0, data.DType, data.Shape); err != nil {
		return 0, "", err
	}
	reduction = n.Attrs.String("reduction", "none")
	if !slices.Contains(ScatterReductions, reduction) {
		return 0, "", fmt.Errorf("unknown reduction %q", reduction)
	}
	return m, reduction, nil
}

// CheckGatherElements checks ONNX's GatherElements(data, indices) and carve's
// GatherElements(data, indices, shape) (the indices broadcast to shape, read where they
// broadcast instead of expanded) for every backend: int32 or int64 indices of the data's rank
// (not 0), carve's shape input 1-D int64, the axis, the indices (as broadcast) within the data
// on every other axis, and the output of the data's type. It returns the normalized axis and
// the output's shape: the indices' for ONNX's, their broadcast with the shape input for carve's.
func CheckGatherElements(n *Node) (axis int, out []int64, err error) {
	expanded := n.Domain == DomainCarve
	ins := 2
	if expanded {
		ins = 3
	}
	if err := CheckArity(n, ins, ins, 1, 1); err != nil {
		return 0, nil, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	out = idx.Shape
	if expanded {
		shp := n.Inputs[2]
		if shp.DType != graph.Int64 || len(shp.Shape) != 1 {
			return 0, nil, fmt.Errorf("shape input is %v, want 1-D int64", shp)
		}
		out = n.Outputs[0].Shape
		if want, err := BroadcastShapes(idx.Shape, out); err != nil || !slices.Equal(want, out) {
			return 0, nil, fmt.Errorf("output %v is not the broadcast of indices %v with the shape input", out, idx.Shape)
		}
	}
	if (idx.DType != graph.Int32 && idx.DType != graph.Int64) || len(out) != len(data.Shape) || len(data.Shape) == 0 {
		return 0, nil, fmt.Errorf("indices %v for data %v", idx, data)
	}
	if axis, err = NormAxis(n.Attrs.Int("axis", 0), len(data.Shape)); err != nil {
		return 0, nil, err
	}
	for i := range data.Shape {
		if i != axis && out[i] > data.Shape[i] {
			return 0, nil, fmt.Errorf("indices shape %v exceeds data shape %v on axis %d", out, data.Shape, i)
		}
	}
	if err := CheckOutput(n, 0, data.DType, out); err != nil {
		return 0, nil, err
	}
	return axis, out, nil
}
