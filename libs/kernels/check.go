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

// BroadcastShapes is the multidirectional (numpy) broadcast of shapes (graph.BroadcastShapes).
func BroadcastShapes(shapes ...[]int64) ([]int64, error) { return graph.BroadcastShapes(shapes...) }

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

// ConstantValue decodes a Constant node's value attribute (value, value_float(s) or
// value_int(s)), checks it against the node's output (dtype, shape and byte count) and returns
// its bytes.
func ConstantValue(n *Node) ([]byte, error) {
	if err := CheckArity(n, 0, 0, 1, 1); err != nil {
		return nil, err
	}
	at := n.Attrs
	var dt graph.DType
	var shape []int64
	var data []byte
	switch {
	case at.Has("value"):
		t, ok := at.Tensor("value")
		if !ok {
			return nil, fmt.Errorf("value attribute is not a tensor")
		}
		dt, shape, data = t.DType, t.Shape, t.Data
	case at.Has("value_float"):
		dt, data = graph.Float32, BytesOf([]float32{at.Float("value_float", 0)})
	case at.Has("value_floats"):
		v := at.Floats("value_floats")
		dt, shape, data = graph.Float32, []int64{int64(len(v))}, BytesOf(v)
	case at.Has("value_int"):
		dt, data = graph.Int64, BytesOf([]int64{at.Int("value_int", 0)})
	case at.Has("value_ints"):
		v := at.Ints("value_ints")
		dt, shape, data = graph.Int64, []int64{int64(len(v))}, BytesOf(v)
	default:
		return nil, fmt.Errorf("no supported value attribute (value, value_float(s), value_int(s))")
	}
	if err := CheckOutput(n, 0, dt, shape); err != nil {
		return nil, err
	}
	if want, err := ByteSize(dt, shape); err != nil || int64(len(data)) != want {
		return nil, fmt.Errorf("value holds %d bytes for %v%v", len(data), dt, shape)
	}
	return data, nil
}

// TransposePerm reads a Transpose node's perm (the reversed dims when absent), checks that it
// permutes the input's dims and that the output has the permuted shape, and returns both.
func TransposePerm(n *Node) (perm, outShape []int64, err error) {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return nil, nil, err
	}
	in := n.Inputs[0]
	r := len(in.Shape)
	perm = n.Attrs.Ints("perm")
	if perm == nil {
		perm = make([]int64, r)
		for i := range perm {
			perm[i] = int64(r - 1 - i)
		}
	}
	if len(perm) != r {
		return nil, nil, fmt.Errorf("perm %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	outShape = make([]int64, r)
	for i, p := range perm {
		if p < 0 || int(p) >= r || seen[p] {
			return nil, nil, fmt.Errorf("perm %v is not a permutation", perm)
		}
		seen[p] = true
		outShape[i] = in.Shape[p]
	}
	if err := CheckOutput(n, 0, in.DType, outShape); err != nil {
		return nil, nil, err
	}
	return perm, outShape, nil
}

// CheckView checks an op whose output holds the input's elements in the same order (Reshape,
// Flatten, Squeeze, Unsqueeze, Identity, Dropout at inference) for every backend: the arity,
// one dtype, one element count, and Dropout's optional bool mask output (of the input's shape)
// and bool training_mode input. mask reports that Dropout's mask output is present.
func CheckView(n *Node, minIn, maxIn int) (mask bool, err error) {
	maxOut := 1
	if n.Op == "Dropout" {
		maxOut = 2
	}
	if err := CheckArity(n, minIn, maxIn, 1, maxOut); err != nil {
		return false, err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if in.DType != out.DType {
		return false, fmt.Errorf("output is %v, input %v", out.DType, in.DType)
	}
	count := func(shape []int64) int64 {
		c := int64(1)
		for _, d := range shape {
			c *= d
		}
		return c
	}
	if count(in.Shape) != count(out.Shape) {
		return false, fmt.Errorf("output %v has a different element count than input %v", out.Shape, in.Shape)
	}
	if n.Op != "Dropout" {
		return false, nil
	}
	if v, ok := n.Output(1); ok {
		if v.DType != graph.Bool || !slices.Equal(v.Shape, in.Shape) {
			return false, fmt.Errorf("mask output is %v, want bool%v", v, in.Shape)
		}
		mask = true
	}
	if tm, ok := n.Input(2); ok && tm.DType != graph.Bool {
		return false, fmt.Errorf("training_mode is %v, want bool", tm.DType)
	}
	return mask, nil
}

// CheckGQA checks what every backend's com.microsoft.GroupQueryAttention refuses or requires
// before looking at shapes: the arity, seqlens_k and total_sequence_length present, and none of
// smooth_softmax, qk_output, sliding_window_cache, quantized keys or values, inputs past
// position_ids' and attention_bias' (head_sink, KV scales, QK norms) or the output_qk output.
func CheckGQA(n *Node) error {
	if err := CheckArity(n, 1, 11, 1, 3); err != nil {
		return err
	}
	for _, i := range []int{5, 6} {
		if _, ok := n.Input(i); !ok {
			return fmt.Errorf("required input %d (seqlens_k, total_sequence_length) is missing", i)
		}
	}
	for _, name := range []string{"smooth_softmax", "qk_output", "sliding_window_cache"} {
		if n.Attrs.Int(name, 0) != 0 {
			return fmt.Errorf("attribute %s is not supported", name)
		}
	}
	for _, name := range []string{"k_quant_type", "v_quant_type"} {
		if q := n.Attrs.String(name, "NONE"); q != "NONE" {
			return fmt.Errorf("%s %q is not supported", name, q)
		}
	}
	for i := 11; i < len(n.Inputs); i++ {
		if _, ok := n.Input(i); ok {
			return fmt.Errorf("input %d (head_sink, KV scales, QK norms) is not supported", i)
		}
	}
	if _, ok := n.Output(3); ok {
		return fmt.Errorf("output_qk is not supported")
	}
	return nil
}

// CheckClip checks a Clip node (opset 11 and later) for every backend: the input, then min and
// max, either of which may be absent, each holding one element of the input's dtype (shape []
// or [1], as onnxruntime takes them), and one output of the input's dtype and shape. Which
// dtypes a backend computes is its own check.
func CheckClip(n *Node) error {
	if err := CheckArity(n, 1, 3, 1, 1); err != nil {
		return err
	}
	x := n.Inputs[0]
	for i, what := range []string{1: "min", 2: "max"} {
		b, ok := n.Input(i)
		if i == 0 || !ok {
			continue
		}
		if c, err := NumElements(b.Shape); b.DType != x.DType || len(b.Shape) > 1 || err != nil || c != 1 {
			return fmt.Errorf("%s (input %d) is %v, want a %v scalar", what, i, b, x.DType)
		}
	}
	return CheckOutput(n, 0, x.DType, x.Shape)
}
