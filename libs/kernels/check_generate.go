package kernels

import (
	"fmt"

	"carve.dev/libs/graph"
)

// The checks of the ops that generate values from shapes and attributes (Shape, Size,
// ConstantOfShape, Range, CumSum, Trilu); Constant's are ConstantValue's.

// ShapeDims checks Shape (its start and end attributes clamped as ONNX clamps them) for every
// backend, with an int64 output of one element per dim kept, and returns those dims of the
// input's shape.
func ShapeDims(n *Node) ([]int64, error) {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return nil, err
	}
	s := n.Inputs[0].Shape
	r := int64(len(s))
	clampEnd := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return min(max(v, 0), r)
	}
	start, end := clampEnd(n.Attrs.Int("start", 0)), clampEnd(n.Attrs.Int("end", r))
	dims := []int64{}
	if end > start {
		dims = s[start:end]
	}
	if err := CheckOutput(n, 0, graph.Int64, []int64{int64(len(dims))}); err != nil {
		return nil, err
	}
	return dims, nil
}

// CheckSize checks Size for every backend: one input and an int64 scalar output.
func CheckSize(n *Node) error {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return err
	}
	return CheckOutput(n, 0, graph.Int64, nil)
}

// ConstantOfShapeValue checks ConstantOfShape for every backend: a 1-D int64 shape input, a
// value attribute of one element when present, and the output of the value's type (float32
// when absent) and of the rank the shape input gives (its values, which the graph inferred the
// output from, are the run's to check). It returns the value's type and its element's bytes.
func ConstantOfShapeValue(n *Node) (graph.DType, []byte, error) {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return graph.Undefined, nil, err
	}
	if v := n.Inputs[0]; v.DType != graph.Int64 || len(v.Shape) != 1 {
		return graph.Undefined, nil, fmt.Errorf("shape input is %v, want 1-D int64", v)
	}
	dt, elem := graph.Float32, make([]byte, 4)
	if t, ok := n.Attrs.Tensor("value"); ok {
		if len(t.Data) != int(t.DType.Size()) || t.DType.Size() == 0 {
			return graph.Undefined, nil, fmt.Errorf("value must hold one element, has %v with %d bytes", t.Shape, len(t.Data))
		}
		dt, elem = t.DType, t.Data
	}
	if out := n.Outputs[0]; out.DType != dt || int64(len(out.Shape)) != n.Inputs[0].Shape[0] {
		return graph.Undefined, nil, fmt.Errorf("output is %v, want %v of rank %d", out, dt, n.Inputs[0].Shape[0])
	}
	return dt, elem, nil
}

// CheckRangeOp checks the Range op (start, limit, delta) for every backend: three one-element
// inputs of one type and a 1-D output of that type (its length, which the graph inferred from
// the values, is the run's to check). Which types a backend's kernel takes is its own.
func CheckRangeOp(n *Node) error {
	if err := CheckArity(n, 3, 3, 1, 1); err != nil {
		return err
	}
	dt := n.Inputs[0].DType
	for i, v := range n.Inputs {
		if c, err := NumElements(v.Shape); err != nil || v.DType != dt || c != 1 {
			return fmt.Errorf("input %d is %v, want a %v scalar", i, v, dt)
		}
	}
	if o := n.Outputs[0]; o.DType != dt || len(o.Shape) != 1 {
		return fmt.Errorf("output is %v, want 1-D %v", o, dt)
	}
	return nil
}

// CheckCumSum checks CumSum(x, axis) for every backend: a numeric x of rank 1 or more, an
// int32 or int64 axis of one element, and the output of x's type and shape.
func CheckCumSum(n *Node) error {
	if err := CheckArity(n, 2, 2, 1, 1); err != nil {
		return err
	}
	x, ax := n.Inputs[0], n.Inputs[1]
	if c, err := NumElements(ax.Shape); err != nil || !isNumeric(x.DType) || !isIndexType(ax.DType) || c != 1 || len(x.Shape) == 0 {
		return fmt.Errorf("CumSum of %v along %v", x, ax)
	}
	return CheckOutput(n, 0, x.DType, x.Shape)
}

// CheckTrilu checks Trilu for every backend: an input of rank 2 or more, k an int64 scalar
// when present, and the output of the input's type and shape.
func CheckTrilu(n *Node) error {
	if err := CheckArity(n, 1, 2, 1, 1); err != nil {
		return err
	}
	x := n.Inputs[0]
	if len(x.Shape) < 2 {
		return fmt.Errorf("input rank %d, want >= 2", len(x.Shape))
	}
	if k, ok := n.Input(1); ok {
		if c, err := NumElements(k.Shape); err != nil || k.DType != graph.Int64 || c != 1 {
			return fmt.Errorf("k is %v, want an int64 scalar", k)
		}
	}
	return CheckOutput(n, 0, x.DType, x.Shape)
}
