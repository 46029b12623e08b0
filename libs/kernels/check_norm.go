package kernels

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// The checks of the row normalizations and Softmax: the layer-normalization family
// (LayerNormalization, SimplifiedLayerNormalization and ONNX's RMSNormalization, com.microsoft
// SkipLayerNormalization and SkipSimplifiedLayerNormalization), Softmax and LogSoftmax.

// NormNode is a layer-normalization node as CheckNorm reads it: rows of H elements normalized
// one at a time, and where each operand is (an input or output index, -1 when absent).
type NormNode struct {
	// Simplified is the RMS form: no mean subtracted, no bias added.
	Simplified bool
	// Rows and H are the row count and row length: X's dims before the normalized axis and
	// from it on (the last dim for the Skip forms).
	Rows, H int64
	// Axis is the first normalized dim.
	Axis int
	// Eps is the epsilon attribute (1e-5 when absent).
	Eps float32
	// Skip is the Skip forms' skip input and SkipRows its row count (it broadcasts over the
	// rows of X, a whole number of times); AddBias is the bias they add before normalizing.
	Skip, AddBias int
	SkipRows      int64
	// Scale and Bias are the inputs applied after normalizing.
	Scale, Bias int
	// MeanOut and InvOut are the statistics outputs, SumOut the Skip forms'
	// input_skip_bias_sum.
	MeanOut, InvOut, SumOut int
}

// CheckNorm checks a layer-normalization node for every backend: the arity of its form,
// stash_type (float32 or the input's type; float32 or float64 for RMSNormalization) and the
// axis, the Skip forms' skip input fitting X and their scale and biases of H elements, the other
// forms' scale and bias broadcasting to the normalized dims, one float32, float16 or bfloat16
// type for X and every input, the output and input_skip_bias_sum of X's type and shape, and
// statistics outputs of Rows elements, float32 or X's type. It returns the node's geometry and
// operands.
func CheckNorm(n *Node) (NormNode, error) {
	g := NormNode{Skip: -1, AddBias: -1, Scale: -1, Bias: -1, MeanOut: -1, InvOut: -1, SumOut: -1}
	at, x := n.Attrs, n.Inputs
	g.Eps = at.Float("epsilon", 1e-5)
	switch n.Op {
	case "LayerNormalization", "SimplifiedLayerNormalization", "RMSNormalization":
		g.Simplified = n.Op != "LayerNormalization"
		maxIn, maxOut := 3, 3
		switch n.Op {
		case "SimplifiedLayerNormalization":
			maxIn, maxOut = 2, 2
		case "RMSNormalization":
			maxIn, maxOut = 2, 1
		}
		if err := CheckArity(n, 2, maxIn, 1, maxOut); err != nil {
			return NormNode{}, err
		}
		// stash_type picks the precision of the statistics (ONNX's RMSNormalization: float32 or
		// float64); the Mean and InvStdDev outputs take the dtype the node gives them
		st := graph.DType(at.Int("stash_type", 1))
		if n.Op == "RMSNormalization" {
			if st != graph.Float32 && st != graph.Float64 {
				return NormNode{}, fmt.Errorf("stash_type %v is not float32 or float64", st)
			}
		} else if st != graph.Float32 && st != x[0].DType {
			return NormNode{}, fmt.Errorf("stash_type %v is neither float32 nor the input's type", st)
		}
		axis, err := NormAxis(at.Int("axis", -1), len(x[0].Shape))
		if err != nil {
			return NormNode{}, err
		}
		g.Axis = axis
		g.Scale = 1
		if !g.Simplified {
			if _, ok := n.Input(2); ok {
				g.Bias = 2
			}
			if _, ok := n.Output(1); ok {
				g.MeanOut = 1
			}
			if _, ok := n.Output(2); ok {
				g.InvOut = 2
			}
		} else if _, ok := n.Output(1); ok {
			g.InvOut = 1
		}
		// scale and bias hold the normalized dims' elements or broadcast to them
		norm := x[0].Shape[axis:]
		h, err := NumElements(norm)
		if err != nil {
			return NormNode{}, err
		}
		for _, i := range []int{g.Scale, g.Bias} {
			if i < 0 {
				continue
			}
			c, err := NumElements(x[i].Shape)
			if err != nil {
				return NormNode{}, err
			}
			if b, err := BroadcastShapes(x[i].Shape, norm); c != h && (err != nil || !slices.Equal(b, norm)) {
				return NormNode{}, fmt.Errorf("%s (input %d) has shape %v, which does not broadcast to the normalized dims %v", []string{1: "scale", 2: "bias"}[i], i, x[i].Shape, norm)
			}
		}
	case "SkipLayerNormalization", "SkipSimplifiedLayerNormalization":
		g.Simplified = n.Op == "SkipSimplifiedLayerNormalization"
		maxIn := 5
		if g.Simplified {
			maxIn = 4
		}
		if err := CheckArity(n, 3, maxIn, 1, 4); err != nil {
			return NormNode{}, err
		}
		r := len(x[0].Shape)
		if r < 2 {
			return NormNode{}, fmt.Errorf("input rank %d, want >= 2", r)
		}
		g.Axis = r - 1
		h := x[0].Shape[r-1]
		g.Skip, g.Scale = 1, 2
		sk := x[1].Shape
		if len(sk) < 2 || len(sk) > r || sk[len(sk)-1] != h {
			return NormNode{}, fmt.Errorf("skip shape %v does not fit input %v", sk, x[0].Shape)
		}
		for i := 1; i <= len(sk); i++ {
			if sk[len(sk)-i] != x[0].Shape[r-i] && !(sk[len(sk)-i] == 1 && i == len(sk)) {
				return NormNode{}, fmt.Errorf("skip shape %v does not fit input %v", sk, x[0].Shape)
			}
		}
		if g.Simplified {
			if _, ok := n.Input(3); ok {
				g.AddBias = 3
			}
		} else {
			if _, ok := n.Input(3); ok {
				g.Bias = 3
			}
			if _, ok := n.Input(4); ok {
				g.AddBias = 4
			}
		}
		if _, ok := n.Output(1); ok {
			g.MeanOut = 1
		}
		if _, ok := n.Output(2); ok {
			g.InvOut = 2
		}
		if _, ok := n.Output(3); ok {
			g.SumOut = 3
		}
		for _, i := range []int{g.Scale, g.Bias, g.AddBias} {
			if i < 0 {
				continue
			}
			if c, err := NumElements(x[i].Shape); err != nil || c != h {
				return NormNode{}, fmt.Errorf("input %d has shape %v, want [%d]", i, x[i].Shape, h)
			}
		}
	default:
		return NormNode{}, fmt.Errorf("%s is not a layer normalization", n.Op)
	}
	var err error
	if g.Rows, err = NumElements(x[0].Shape[:g.Axis]); err != nil {
		return NormNode{}, err
	}
	if g.H, err = NumElements(x[0].Shape[g.Axis:]); err != nil {
		return NormNode{}, err
	}
	if g.Skip >= 0 {
		sk, err := NumElements(x[g.Skip].Shape)
		if err != nil {
			return NormNode{}, err
		}
		g.SkipRows = max(sk/max(g.H, 1), 1)
		if g.Rows%g.SkipRows != 0 {
			return NormNode{}, fmt.Errorf("skip shape %v does not fit input %v", x[g.Skip].Shape, x[0].Shape)
		}
	}
	if g.SumOut >= 0 {
		if err := CheckOutput(n, g.SumOut, x[0].DType, x[0].Shape); err != nil {
			return NormNode{}, err
		}
	}
	dt := x[0].DType
	if !isFloatKernelType(dt) {
		return NormNode{}, fmt.Errorf("input is %v, want float32, float16 or bfloat16", dt)
	}
	for i := 1; i < len(x); i++ {
		if x[i].Present() && x[i].DType != dt {
			return NormNode{}, fmt.Errorf("input %d is %v, want %v", i, x[i].DType, dt)
		}
	}
	if err := CheckOutput(n, 0, dt, x[0].Shape); err != nil {
		return NormNode{}, err
	}
	for _, o := range []int{g.MeanOut, g.InvOut} {
		if o < 0 {
			continue
		}
		v := n.Outputs[o]
		if c, err := NumElements(v.Shape); err != nil || c != g.Rows || (v.DType != graph.Float32 && v.DType != dt) {
			return NormNode{}, fmt.Errorf("output %d is %v, want %d float32 statistics", o, v, g.Rows)
		}
	}
	return g, nil
}

// SoftmaxGeom is a Softmax's rows: Outer * Inner rows of Dim elements, Inner apart.
type SoftmaxGeom struct{ Outer, Dim, Inner int64 }

// CheckSoftmax checks Softmax and LogSoftmax for every backend: a float32, float16 or bfloat16
// input of rank 1 or more, the output of its type and shape, and the axis (defaulting to -1;
// from opset 13 on the op runs along it, before over the flattened dims from it on, the axis
// defaulting to 1). It returns the rows.
func CheckSoftmax(n *Node) (SoftmaxGeom, error) {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return SoftmaxGeom{}, err
	}
	x := n.Inputs[0]
	if !isFloatKernelType(x.DType) {
		return SoftmaxGeom{}, fmt.Errorf("input is %v, want float32, float16 or bfloat16", x.DType)
	}
	if err := CheckOutput(n, 0, x.DType, x.Shape); err != nil {
		return SoftmaxGeom{}, err
	}
	r := len(x.Shape)
	legacy := n.Opset > 0 && n.Opset < 13
	def := int64(-1)
	if legacy {
		def = 1
	}
	if r == 0 {
		return SoftmaxGeom{}, fmt.Errorf("softmax of a scalar")
	}
	axis, err := NormAxis(n.Attrs.Int("axis", def), r)
	if err != nil {
		return SoftmaxGeom{}, err
	}
	var g SoftmaxGeom
	if g.Outer, err = NumElements(x.Shape[:axis]); err != nil {
		return SoftmaxGeom{}, err
	}
	if legacy {
		g.Dim, err = NumElements(x.Shape[axis:])
		g.Inner = 1
	} else {
		g.Dim = x.Shape[axis]
		g.Inner, err = NumElements(x.Shape[axis+1:])
	}
	if err != nil {
		return SoftmaxGeom{}, err
	}
	return g, nil
}
