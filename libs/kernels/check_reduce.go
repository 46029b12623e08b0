package kernels

import (
	"fmt"

	"carve.dev/libs/graph"
)

// ReduceNode is a Reduce* or ArgMax/ArgMin node as CheckReduce reads it.
type ReduceNode struct {
	// Keep is keepdims, NoopEmpty noop_with_empty_axes and SelectLast ArgMax's and ArgMin's
	// select_last_index.
	Keep, NoopEmpty, SelectLast bool
	// AxesInput reports axes that are a tensor read at run time; otherwise Axes are the axes
	// (the axes attribute, ArgMax's and ArgMin's axis, or the axes input's bytes known at
	// Select, Value.Const; none for an empty axes input).
	AxesInput bool
	Axes      []int64
	// Reduced marks the reduced dims and Identity a no-op (no axes with noop_with_empty_axes)
	// when the axes are known.
	Reduced  []bool
	Identity bool
}

// MarkReduced sets red[i] for every dim of a tensor of rank len(red) that axes reduce (every
// dim when there are none) and reports a no-op, no axes with noopEmpty. It checks each axis
// against the rank and allocates nothing.
func MarkReduced(axes []int64, red []bool, noopEmpty bool) (identity bool, err error) {
	if len(axes) == 0 {
		if noopEmpty {
			return true, nil
		}
		for i := range red {
			red[i] = true
		}
		return false, nil
	}
	for _, a := range axes {
		ax, err := NormAxis(a, len(red))
		if err != nil {
			return false, err
		}
		red[ax] = true
	}
	return false, nil
}

// ReducedShape is the output shape of reducing a tensor of shape in over the dims red marks:
// those dims dropped, or kept as 1 with keep; in itself for a no-op.
func ReducedShape(in []int64, red []bool, identity, keep bool) []int64 {
	out := []int64{}
	for i, d := range in {
		switch {
		case identity || !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

// CheckReduce checks ReduceSum, ReduceMean, ... and ArgMax and ArgMin for every backend: a
// numeric input, ArgMax's and ArgMin's axis, an axes input that is 1-D int64, an output of the
// input's type (int64 for ArgMax and ArgMin) and, when the axes are known at Select, of the
// shape they give. It returns the attributes and the axes.
func CheckReduce(n *Node) (ReduceNode, error) {
	if err := CheckArity(n, 1, 2, 1, 1); err != nil {
		return ReduceNode{}, err
	}
	x := n.Inputs[0]
	if !isNumeric(x.DType) {
		return ReduceNode{}, fmt.Errorf("input is %v, want a numeric type", x.DType)
	}
	at := n.Attrs
	r := ReduceNode{Keep: at.Int("keepdims", 1) != 0, NoopEmpty: at.Int("noop_with_empty_axes", 0) != 0}
	outDT := x.DType
	if n.Op == "ArgMax" || n.Op == "ArgMin" {
		outDT = graph.Int64
		ax, err := NormAxis(at.Int("axis", 0), len(x.Shape))
		if err != nil {
			return ReduceNode{}, err
		}
		r.Axes = []int64{int64(ax)}
		r.SelectLast = at.Int("select_last_index", 0) != 0
	} else if v, ok := n.Input(1); ok {
		if v.DType != graph.Int64 || len(v.Shape) != 1 {
			return ReduceNode{}, fmt.Errorf("axes input is %v, want 1-D int64", v)
		}
		switch {
		case v.Shape[0] == 0: // no axes
		case int64(len(v.Const)) == v.Shape[0]*8:
			r.Axes = append([]int64(nil), ViewAs[int64](v.Const)...)
		default:
			r.AxesInput = true
		}
	} else {
		r.Axes = at.Ints("axes")
	}
	if ov, ok := n.Output(0); !ok || ov.DType != outDT {
		return ReduceNode{}, fmt.Errorf("output is %v, want %v", ov, outDT)
	}
	if r.AxesInput {
		return r, nil
	}
	r.Reduced = make([]bool, len(x.Shape))
	var err error
	if r.Identity, err = MarkReduced(r.Axes, r.Reduced, r.NoopEmpty); err != nil {
		return ReduceNode{}, err
	}
	if err := CheckOutput(n, 0, outDT, ReducedShape(x.Shape, r.Reduced, r.Identity, r.Keep)); err != nil {
		return ReduceNode{}, err
	}
	return r, nil
}
