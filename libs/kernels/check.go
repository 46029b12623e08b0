package kernels

import (
	"fmt"
	"math"
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

// MoEActivation is the activation com.microsoft.MoE applies to its first product.
type MoEActivation int

// The activations of com.microsoft.MoE (attribute activation_type), in onnxruntime's order.
const (
	MoERelu     MoEActivation = iota // max(x, 0)
	MoEGelu                          // GELU, tanh approximation
	MoESilu                          // x * sigmoid(x)
	MoEIdentity                      // x
	MoESwiGLU                        // gated: fc1's outputs are gate and linear halves (swiglu_fusion)
)

var moeActivationNames = [...]string{MoERelu: "relu", MoEGelu: "gelu", MoESilu: "silu", MoEIdentity: "identity", MoESwiGLU: "swiglu"}

func (a MoEActivation) String() string {
	if a < 0 || int(a) >= len(moeActivationNames) {
		return fmt.Sprintf("MoEActivation(%d)", int(a))
	}
	return moeActivationNames[a]
}

// MoE is a com.microsoft.MoE node (onnxruntime's mixture of experts) as CheckMoE reads it. Every
// row of the input is routed to K of the Experts by router_probs (logits, despite the name):
// softmax over all experts, the K most probable (ties to the larger index), weighted by their
// probabilities (divided by their sum with Normalize). Each route computes
// act(x W1[e]^T + b1[e]) W2[e]^T + b2[e] and the row's output is the weighted sum of its routes.
type MoE struct {
	DType   graph.DType // T: input, router_probs, weights, biases and output
	Rows    int64       // num_rows: the product of the input's leading dims
	Hidden  int64       // the input's last dim
	Inter   int64       // inter_size: fc2's elements / Hidden
	FC1Out  int64       // fc1's output features: 2*Inter for swiglu, else Inter
	Experts int64       // num_experts: router_probs' last dim
	K       int64       // experts per row
	// Legacy is onnxruntime's legacy weight layout, fc1 [E, Hidden, FC1Out], fc2 [E, Inter,
	// Hidden], fc3 [E, Hidden, Inter]; else fc1 [E, FC1Out, Hidden], fc2 [E, Hidden, Inter], fc3
	// [E, Inter, Hidden] (weights [out, in], used as x W^T). MoELegacy decides it.
	Legacy bool
	Act    MoEActivation
	// Fusion is swiglu_fusion for swiglu: 1, fc1's outputs interleaved (gate 2i, linear 2i+1); 2,
	// concatenated (gate i, linear Inter+i). 0 for the other activations.
	Fusion    int64
	Normalize bool    // normalize_routing_weights == 1
	Limit     float32 // swiglu_limit: gate <= Limit, -Limit <= linear <= Limit
	Alpha     float32 // activation_alpha: swiglu's gate * sigmoid(Alpha * gate)
	Beta      float32 // activation_beta: swiglu's (linear + Beta)
	FC1Bias   bool
	FC2Bias   bool
	// FC3 (inputs 6 and 7, not with swiglu): a gated first layer, act(x W1^T + b1) * (x W3^T + b3)
	// as onnxruntime's CUDA kernel computes it (its CPU kernel refuses fc3).
	FC3     bool
	FC3Bias bool
}

// Routes is the number of (row, expert) pairs: Rows * K.
func (m MoE) Routes() int64 { return m.Rows * m.K }

// MoELegacy is onnxruntime's rule (moe_helper.h) for the legacy weight layout: when the hidden and
// inter sizes differ, fc2 [E, Inter, Hidden]; when they are equal, a fused swiglu whose fc1 is
// [E, Hidden, 2*Inter].
func MoELegacy(hidden, inter, fc1Dim1, fc2Dim1 int64, swiglu bool) bool {
	return hidden != inter && fc2Dim1 == inter || hidden == inter && swiglu && fc1Dim1 == hidden
}

// moeAttrs reads com.microsoft.MoE's attributes into m, refusing what no backend computes.
func moeAttrs(at graph.Attributes) (MoE, error) {
	var m MoE
	if !at.Has("k") {
		return m, fmt.Errorf("attribute k (experts per row) is required")
	}
	m.K = at.Int("k", 0)
	if m.K < 1 {
		return m, fmt.Errorf("k %d: want at least 1 expert per row", m.K)
	}
	if !at.Has("activation_type") {
		return m, fmt.Errorf("attribute activation_type is required (relu, gelu, silu, identity or swiglu)")
	}
	name := at.String("activation_type", "")
	act := slices.Index(moeActivationNames[:], name)
	if act < 0 {
		return m, fmt.Errorf("activation_type %q is not supported; want relu, gelu, silu, identity or swiglu", name)
	}
	m.Act = MoEActivation(act)
	if at.Int("use_sparse_mixer", 0) == 1 {
		return m, fmt.Errorf("use_sparse_mixer 1 (sparse-mixer routing) is not supported; only softmax top-k routing (use_sparse_mixer 0) is")
	}
	if m.Act == MoESwiGLU {
		m.Fusion = at.Int("swiglu_fusion", 0)
		if m.Fusion != 1 && m.Fusion != 2 {
			return m, fmt.Errorf("activation_type swiglu with swiglu_fusion %d is not supported; want 1 (fc1's outputs interleaved: gate, linear) or 2 (concatenated: [gate | linear])", m.Fusion)
		}
	}
	m.Normalize = at.Int("normalize_routing_weights", 0) == 1
	m.Limit = at.Float("swiglu_limit", float32(math.Inf(1)))
	m.Alpha = at.Float("activation_alpha", 1)
	m.Beta = at.Float("activation_beta", 0)
	return m, nil
}

// moeInputNames names com.microsoft.MoE's inputs in errors.
var moeInputNames = [...]string{"input", "router_probs", "fc1_experts_weights", "fc1_experts_bias",
	"fc2_experts_weights", "fc2_experts_bias", "fc3_experts_weights", "fc3_experts_bias"}

// CheckMoE checks a com.microsoft.MoE node for every backend, as onnxruntime's CheckInputs
// (moe_helper.h) does, and returns its configuration: the arity; the attributes (k at least 1 and
// at most the experts, a known activation_type, use_sparse_mixer 0, swiglu_fusion 1 or 2 for
// swiglu); one dtype T for the input, router_probs, weights, biases and output; an input of rank 2
// or 3, router_probs [num_rows, num_experts], and every weight and bias of the shape the layout
// (MoELegacy) gives; fc3 only with an activation other than swiglu, and its bias only with it; an
// output of the input's shape. Which dtypes a backend computes is its own check.
func CheckMoE(n *Node) (MoE, error) {
	if err := CheckArity(n, 3, 8, 1, 1); err != nil {
		return MoE{}, err
	}
	m, err := moeAttrs(n.Attrs)
	if err != nil {
		return MoE{}, err
	}
	fc2, ok := n.Input(4)
	if !ok {
		return MoE{}, fmt.Errorf("required input 4 (fc2_experts_weights) is missing")
	}
	x, router, fc1 := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	m.DType = x.DType
	for i := range moeInputNames {
		if v, ok := n.Input(i); ok && v.DType != x.DType {
			return MoE{}, fmt.Errorf("%s (input %d) is %v, the input %v: the input, router_probs, weights and biases have one type", moeInputNames[i], i, v.DType, x.DType)
		}
	}
	if len(x.Shape) != 2 && len(x.Shape) != 3 {
		return MoE{}, fmt.Errorf("input has shape %v, want [num_rows, hidden] or [batch, seq, hidden]", x.Shape)
	}
	if len(router.Shape) != 2 {
		return MoE{}, fmt.Errorf("router_probs has shape %v, want [num_rows, num_experts]", router.Shape)
	}
	if len(fc1.Shape) != 3 || len(fc2.Shape) != 3 {
		return MoE{}, fmt.Errorf("fc1_experts_weights %v and fc2_experts_weights %v: want 3-D weights [num_experts, out, in]", fc1.Shape, fc2.Shape)
	}
	m.Rows = x.Shape[0]
	if len(x.Shape) == 3 {
		m.Rows *= x.Shape[1]
	}
	m.Hidden, m.Experts = x.Shape[len(x.Shape)-1], router.Shape[1]
	if m.Hidden == 0 || m.Experts == 0 {
		return MoE{}, fmt.Errorf("hidden size %d and %d experts: want both positive", m.Hidden, m.Experts)
	}
	m.Inter = fc2.Shape[1] * fc2.Shape[2] / m.Hidden
	if m.Inter == 0 {
		return MoE{}, fmt.Errorf("fc2_experts_weights %v holds no [hidden %d, inter] matrices", fc2.Shape, m.Hidden)
	}
	swiglu := m.Act == MoESwiGLU
	m.FC1Out = m.Inter
	if swiglu {
		m.FC1Out = 2 * m.Inter
	}
	m.Legacy = MoELegacy(m.Hidden, m.Inter, fc1.Shape[1], fc2.Shape[1], swiglu)
	e := m.Experts
	layout := "[num_experts, out, in]"
	want := map[int][]int64{2: {e, m.FC1Out, m.Hidden}, 4: {e, m.Hidden, m.Inter}, 6: {e, m.Inter, m.Hidden}}
	if m.Legacy {
		layout = "[num_experts, in, out] (onnxruntime's legacy layout)"
		want = map[int][]int64{2: {e, m.Hidden, m.FC1Out}, 4: {e, m.Inter, m.Hidden}, 6: {e, m.Hidden, m.Inter}}
	}
	want[1] = []int64{m.Rows, e}
	want[3], want[5], want[7] = []int64{e, m.FC1Out}, []int64{e, m.Hidden}, []int64{e, m.Inter}
	for i := 1; i < len(moeInputNames); i++ {
		v, ok := n.Input(i)
		if !ok || slices.Equal(v.Shape, want[i]) {
			continue
		}
		what := ""
		if i == 2 || i == 4 || i == 6 {
			what = ", layout " + layout
		}
		return MoE{}, fmt.Errorf("%s (input %d) has shape %v, want %v (hidden %d, inter %d, fc1 outputs %d, %d experts%s)",
			moeInputNames[i], i, v.Shape, want[i], m.Hidden, m.Inter, m.FC1Out, e, what)
	}
	if m.K > e {
		return MoE{}, fmt.Errorf("k %d is more than the %d experts", m.K, e)
	}
	_, m.FC1Bias = n.Input(3)
	_, m.FC2Bias = n.Input(5)
	_, m.FC3 = n.Input(6)
	_, m.FC3Bias = n.Input(7)
	if m.FC3Bias && !m.FC3 {
		return MoE{}, fmt.Errorf("fc3_experts_bias (input 7) needs fc3_experts_weights (input 6)")
	}
	if m.FC3 && swiglu {
		return MoE{}, fmt.Errorf("fc3_experts_weights with activation_type swiglu is not supported: swiglu takes its gate and linear parts from fc1 (swiglu_fusion); fc3 gates relu, gelu, silu or identity")
	}
	if err := CheckOutput(n, 0, x.DType, x.Shape); err != nil {
		return MoE{}, err
	}
	return m, nil
}

// MoEBound is CheckMoE's configuration for workspace bounds over r: the attributes, and every
// size at the most the range allows (Rows, Hidden, Experts at their range's high ends; Inter at
// fc2's largest elements over the smallest hidden size), so that a recipe that grows with each
// size covers the range at these. exact reports that the weights' and the hidden size's dims are
// fixed: the layout (Legacy) and Inter are then those of every node in r (with a fixed Rows, the
// configuration is every node's); otherwise a backend whose recipe depends on the layout takes
// the larger of both.
func MoEBound(r *NodeRange) (m MoE, exact bool, err error) {
	if m, err = moeAttrs(r.Attrs); err != nil {
		return MoE{}, false, err
	}
	x, okX := r.Input(0)
	router, okR := r.Input(1)
	fc1, ok1 := r.Input(2)
	fc2, ok2 := r.Input(4)
	if !okX || !okR || !ok1 || !ok2 || (len(x.Dims) != 2 && len(x.Dims) != 3) || len(router.Dims) != 2 || len(fc1.Dims) != 3 || len(fc2.Dims) != 3 {
		return MoE{}, false, fmt.Errorf("MoE needs input [num_rows, hidden] or [batch, seq, hidden], router_probs [num_rows, num_experts] and 3-D fc1 and fc2 weights")
	}
	m.DType = x.DType
	m.Rows = x.Dims[0].Hi
	if len(x.Dims) == 3 {
		if m.Rows, err = Product(x.Dims[0].Hi, x.Dims[1].Hi); err != nil {
			return MoE{}, false, err
		}
	}
	hid := x.Dims[len(x.Dims)-1]
	m.Hidden = hid.Hi
	m.Experts = max(router.Dims[1].Hi, fc1.Dims[0].Hi)
	f2, err := Product(fc2.Dims[1].Hi, fc2.Dims[2].Hi)
	if err != nil {
		return MoE{}, false, err
	}
	m.Inter = f2 / max(hid.Lo, 1)
	m.FC1Out = m.Inter
	if m.Act == MoESwiGLU {
		m.FC1Out = 2 * m.Inter
	}
	exact = hid.Lo == hid.Hi
	for _, v := range r.Inputs[2:] {
		for _, d := range v.Dims {
			exact = exact && d.Lo == d.Hi
		}
	}
	if exact {
		m.Legacy = MoELegacy(m.Hidden, m.Inter, fc1.Dims[1].Hi, fc2.Dims[1].Hi, m.Act == MoESwiGLU)
	}
	_, m.FC1Bias = r.Input(3)
	_, m.FC2Bias = r.Input(5)
	_, m.FC3 = r.Input(6)
	_, m.FC3Bias = r.Input(7)
	return m, exact, nil
}

// CheckGatherElements checks ONNX's GatherElements(data, indices) and carve's
// GatherElements(data, indices, shape) (the indices broadcast to shape, read where they
// broadcast instead of expanded) for every backend, and returns the output's shape: the
// indices' for ONNX's, their broadcast with the shape input for carve's.
func CheckGatherElements(n *Node) ([]int64, error) {
	expanded := n.Domain == DomainCarve
	ins := 2
	if expanded {
		ins = 3
	}
	if err := CheckArity(n, ins, ins, 1, 1); err != nil {
		return nil, err
	}
	data, idx := n.Inputs[0], n.Inputs[1]
	out := idx.Shape
	if expanded {
		shp := n.Inputs[2]
		if shp.DType != graph.Int64 || len(shp.Shape) != 1 {
			return nil, fmt.Errorf("shape input is %v, want 1-D int64", shp)
		}
		out = n.Outputs[0].Shape
		if want, err := BroadcastShapes(idx.Shape, out); err != nil || !slices.Equal(want, out) {
			return nil, fmt.Errorf("output %v is not the broadcast of indices %v with the shape input", out, idx.Shape)
		}
	}
	if (idx.DType != graph.Int32 && idx.DType != graph.Int64) || len(out) != len(data.Shape) || len(data.Shape) == 0 {
		return nil, fmt.Errorf("indices %v for data %v", idx, data)
	}
	return out, nil
}
