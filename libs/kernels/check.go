package kernels

import (
	"fmt"
	"math"
	"slices"

	"carve.dev/libs/graph"
)

// The node checks every backend's Select makes the same way, so that backends accept exactly the
// same nodes: the axis, broadcast, arity and output rules of the ONNX operators, and each op's
// arity, attributes and shapes (here and in check_*.go, a file an op family). A backend then
// refuses only what its kernels are not built for (types, ranks, sizes).

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

// gqaRefused checks what every backend's com.microsoft.GroupQueryAttention refuses or requires
// before looking at shapes: the arity, seqlens_k and total_sequence_length present, and none of
// smooth_softmax, qk_output, sliding_window_cache, quantized keys or values, inputs past
// position_ids' and attention_bias' (head_sink, KV scales, QK norms) or the output_qk output.
func gqaRefused(n *Node) error {
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

// CheckONNXAttentionArity checks the inputs and outputs of an ONNX Attention node (ai.onnx,
// opset 23) for every backend: Q, K and V, then attn_mask, past_key and past_value, then
// carve's relative bias (inputs 7 to 10, CheckRelBias); not opset 24's nonpad_kv_seqlen
// (input 6) nor the qk_matmul_output (output 3).
func CheckONNXAttentionArity(n *Node) error {
	if err := CheckArity(n, 3, graph.AttnRelP2CIndex+1, 1, 3); err != nil {
		return fmt.Errorf("%w (the qk_matmul_output is not supported)", err)
	}
	if _, ok := n.Input(6); ok {
		return fmt.Errorf("nonpad_kv_seqlen (input 6) is not supported")
	}
	return nil
}

// RelTable is one table of an ONNX Attention node's relative-position bias (graph.AttnRelC2P
// or graph.AttnRelP2C): Rows rows (the queries, or the keys) of R terms per batch and head,
// at element strides SB and SH (0 where the table broadcasts over batch or heads).
type RelTable struct {
	Present    bool
	Rows, R    int64
	SB, SH     int64
	Index, Tab int // the node's inputs holding the index and the table
}

// RelBias is an ONNX Attention node's relative-position bias (graph.AttnRelC2P): the score of
// query i for key j gets C2P's term (row i) and P2C's term (row j), each the one its own int32
// index picks at entry i - j + T - 1.
type RelBias struct{ C2P, P2C RelTable }

// Present reports whether the node has either table.
func (r RelBias) Present() bool { return r.C2P.Present || r.P2C.Present }

// CheckRelBias checks the relative-bias inputs of an ONNX Attention node n for every backend,
// against scores [b, hq, s, t] of type dt with p past keys: each table [b or 1, hq or 1, s (C2P)
// or t (P2C), R >= 1] of type dt with its int32 index [s + t - 1], and no past. The index
// entries are data, read at run time (RelIndexError).
func CheckRelBias(n *Node, dt graph.DType, b, hq, s, t, p int64) (RelBias, error) {
	var rb RelBias
	for _, x := range []struct {
		rt       *RelTable
		tab, idx int
		name     string
		rows     int64
	}{{&rb.C2P, graph.AttnRelC2P, graph.AttnRelC2PIndex, "rel_c2p", s}, {&rb.P2C, graph.AttnRelP2C, graph.AttnRelP2CIndex, "rel_p2c", t}} {
		tb, okT := n.Input(x.tab)
		ix, okI := n.Input(x.idx)
		if !okT && !okI {
			continue
		}
		if okT != okI {
			return RelBias{}, fmt.Errorf("%s (input %d) and its index (input %d) go together", x.name, x.tab, x.idx)
		}
		if p > 0 {
			return RelBias{}, fmt.Errorf("%s: a relative bias takes no past keys", x.name)
		}
		want := []int64{b, hq, x.rows}
		if tb.DType != dt || len(tb.Shape) != 4 || tb.Shape[2] != x.rows || tb.Shape[3] < 1 ||
			(tb.Shape[0] != b && tb.Shape[0] != 1) || (tb.Shape[1] != hq && tb.Shape[1] != 1) {
			return RelBias{}, fmt.Errorf("%s is %v, want %v[%d or 1, %d or 1, %d, R >= 1]", x.name, tb, dt, want[0], want[1], want[2])
		}
		if n := s + t - 1; ix.DType != graph.Int32 || len(ix.Shape) != 1 || ix.Shape[0] != n {
			return RelBias{}, fmt.Errorf("the index of %s is %v, want int32[%d] (queries + keys - 1)", x.name, ix, n)
		}
		r := tb.Shape[3]
		*x.rt = RelTable{Present: true, Rows: x.rows, R: r, SH: x.rows * r, Index: x.idx, Tab: x.tab}
		x.rt.SB = tb.Shape[1] * x.rt.SH
		if tb.Shape[0] == 1 {
			x.rt.SB = 0
		}
		if tb.Shape[1] == 1 {
			x.rt.SH = 0
		}
	}
	return rb, nil
}

// RelIndexError is an entry of a relative-bias index outside [-R, R).
type RelIndexError struct {
	Table string // rel_c2p or rel_p2c
	At    int    // the entry
	Value int32
	R     int64
}

func (e *RelIndexError) Error() string {
	return fmt.Sprintf("%s index entry %d is %d, outside [-%d, %d)", e.Table, e.At, e.Value, e.R, e.R)
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

// ConvGeom is the geometry of a Conv, ConvTranspose or pool node at concrete shapes: batch N,
// input channels C, output channels M, Group, and per spatial dim the input and output sizes,
// the kernel, strides, dilations and the pads at each end (SAME padding resolved).
type ConvGeom struct {
	N, C, M, Group     int64
	In, Out, Kernel    []int64
	Strides, Dilations []int64
	PadBegin, PadEnd   []int64
	Bias               bool
	// com.microsoft.FusedConv's epilogue: Sum, its input Z (the output's shape) added to the
	// convolution; Relu, its activation "Relu" applied last.
	Sum, Relu bool
}

// window parses n's window attributes over x's spatial dims and resolves the output dims with
// graph.Window, the arithmetic shape inference uses.
func (g *ConvGeom) window(n *Node, x Value, kernel []int64, transpose bool) error {
	if len(x.Shape) < 3 {
		return fmt.Errorf("input %v has rank %d, want 3 or more [N, C, D1, ...]", x.Shape, len(x.Shape))
	}
	w, err := graph.ParseWindow(n.Attrs, len(x.Shape)-2, kernel, transpose)
	if err != nil {
		return err
	}
	g.N, g.C, g.In = x.Shape[0], x.Shape[1], x.Shape[2:]
	g.Kernel, g.Strides, g.Dilations = w.Kernel, w.Strides, w.Dilations
	g.Out, g.PadBegin, g.PadEnd, err = w.OutConst(g.In)
	return err
}

// checkConvFloat checks that x's dtype is a float type, that w and the bias have it, and the
// bias's shape [m].
func (g *ConvGeom) checkOperands(n *Node, w Value, biasLen int64) error {
	x := n.Inputs[0]
	if x.DType != graph.Float32 && x.DType != graph.Float16 && x.DType != graph.BFloat16 && x.DType != graph.Float64 {
		return fmt.Errorf("input is %v, want a float type", x.DType)
	}
	if w.DType != x.DType {
		return fmt.Errorf("weight is %v, input %v: want one type", w.DType, x.DType)
	}
	if b, ok := n.Input(2); ok {
		if b.DType != x.DType || len(b.Shape) != 1 || b.Shape[0] != biasLen {
			return fmt.Errorf("bias is %v, want %v[%d] (one per output channel)", b, x.DType, biasLen)
		}
		g.Bias = true
	}
	return nil
}

// CheckConv checks a Conv node (X [N, C, D...], W [M, C/group, K...], optional B [M]) for every
// backend: arity, one float dtype, the weight's rank and channels, group dividing C and M, the
// window attributes, and the output [N, M, out...] of graph.Window's arithmetic. It checks
// onnxruntime's com.microsoft.FusedConv too, a Conv with an optional fourth input Z of the
// output's shape and type, added to the convolution (bias included), and an activation applied
// last: "Relu", or none (the attribute absent or empty); other activations are refused.
func CheckConv(n *Node) (ConvGeom, error) {
	var g ConvGeom
	maxIn := 3
	fused := n.Domain == DomainMicrosoft && n.Op == "FusedConv"
	if fused {
		maxIn = 4
		switch a := n.Attrs.String("activation", ""); a {
		case "":
		case "Relu":
			g.Relu = true
		default:
			return g, fmt.Errorf("FusedConv activation %q is not supported: Relu or none", a)
		}
	}
	if err := CheckArity(n, 2, maxIn, 1, 1); err != nil {
		return g, err
	}
	x, w := n.Inputs[0], n.Inputs[1]
	if len(w.Shape) != len(x.Shape) || len(x.Shape) < 3 {
		return g, fmt.Errorf("weight %v and input %v: want one rank, 3 or more (W [M, C/group, K...])", w.Shape, x.Shape)
	}
	g.Group = n.Attrs.Int("group", 1)
	g.M = w.Shape[0]
	switch {
	case g.Group < 1:
		return g, fmt.Errorf("group %d, want 1 or more", g.Group)
	case x.Shape[1]%g.Group != 0 || g.M%g.Group != 0:
		return g, fmt.Errorf("group %d does not divide the input channels %d and the output channels %d", g.Group, x.Shape[1], g.M)
	case w.Shape[1]*g.Group != x.Shape[1]:
		return g, fmt.Errorf("weight %v has %d channels per group, want %d (input channels %d / group %d)", w.Shape, w.Shape[1], x.Shape[1]/g.Group, x.Shape[1], g.Group)
	}
	if err := g.checkOperands(n, w, g.M); err != nil {
		return g, err
	}
	if err := g.window(n, x, w.Shape[2:], false); err != nil {
		return g, err
	}
	out := append([]int64{g.N, g.M}, g.Out...)
	if z, ok := n.Input(3); ok {
		if z.DType != x.DType || !slices.Equal(z.Shape, out) {
			return g, fmt.Errorf("Z is %v, want %v%v (the output's type and shape)", z, x.DType, out)
		}
		g.Sum = true
	}
	return g, CheckOutput(n, 0, x.DType, out)
}

// CheckConvTranspose checks a ConvTranspose node (X [N, C, D...], W [C, M/group, K...],
// optional B [M]) for every backend, as CheckConv does; the output size is graph.Window's
// (output_padding, output_shape and SAME resolved), pads are those that size implies.
func CheckConvTranspose(n *Node) (ConvGeom, error) {
	var g ConvGeom
	if err := CheckArity(n, 2, 3, 1, 1); err != nil {
		return g, err
	}
	x, w := n.Inputs[0], n.Inputs[1]
	if len(w.Shape) != len(x.Shape) || len(x.Shape) < 3 {
		return g, fmt.Errorf("weight %v and input %v: want one rank, 3 or more (W [C, M/group, K...])", w.Shape, x.Shape)
	}
	g.Group = n.Attrs.Int("group", 1)
	switch {
	case g.Group < 1:
		return g, fmt.Errorf("group %d, want 1 or more", g.Group)
	case x.Shape[1]%g.Group != 0:
		return g, fmt.Errorf("group %d does not divide the input channels %d", g.Group, x.Shape[1])
	case w.Shape[0] != x.Shape[1]:
		return g, fmt.Errorf("weight %v has %d input channels, want the input's %d", w.Shape, w.Shape[0], x.Shape[1])
	}
	g.M = w.Shape[1] * g.Group
	if err := g.checkOperands(n, w, g.M); err != nil {
		return g, err
	}
	if err := g.window(n, x, w.Shape[2:], true); err != nil {
		return g, err
	}
	return g, CheckOutput(n, 0, x.DType, append([]int64{g.N, g.M}, g.Out...))
}

// CheckPool checks a MaxPool or AveragePool node for every backend: one input of a float type,
// the window attributes (kernel_shape required), and output 0 [N, C, out...]. MaxPool's optional
// Indices output (int64 of the output's shape) is checked when present, then refused: no
// backend's kernel writes it.
func CheckPool(n *Node) (g ConvGeom, err error) {
	maxOut := 1
	if n.Op == "MaxPool" {
		maxOut = 2
	}
	if err := CheckArity(n, 1, 1, 1, maxOut); err != nil {
		return g, err
	}
	x := n.Inputs[0]
	if !isFloatType(x.DType) {
		return g, fmt.Errorf("input is %v, want a float type", x.DType)
	}
	if err := g.window(n, x, nil, false); err != nil {
		return g, err
	}
	g.M = g.C
	out := append([]int64{g.N, g.C}, g.Out...)
	if err := CheckOutput(n, 0, x.DType, out); err != nil {
		return g, err
	}
	if _, ok := n.Output(1); ok {
		if err := CheckOutput(n, 1, graph.Int64, out); err != nil {
			return g, err
		}
		return g, fmt.Errorf("MaxPool's Indices output is not supported: drop it from the node (torch: return_indices=False)")
	}
	return g, nil
}

func isFloatType(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float16 || dt == graph.BFloat16 || dt == graph.Float64
}

// CheckGlobalPool checks GlobalAveragePool and GlobalMaxPool: a float input of rank 3 or more,
// output [N, C, 1, ...].
func CheckGlobalPool(n *Node) error {
	if err := CheckArity(n, 1, 1, 1, 1); err != nil {
		return err
	}
	x := n.Inputs[0]
	if len(x.Shape) < 3 || !isFloatType(x.DType) {
		return fmt.Errorf("input is %v, want a float tensor of rank 3 or more [N, C, D1, ...]", x)
	}
	out := slices.Clone(x.Shape)
	for i := 2; i < len(out); i++ {
		out[i] = 1
	}
	return CheckOutput(n, 0, x.DType, out)
}

// CheckChannelNorm checks BatchNormalization (inference form: X, scale, B, mean, var; training
// outputs and training_mode refused), InstanceNormalization (X, scale, B) and
// GroupNormalization (X, scale, bias; num_groups dividing C; scale and bias per channel from
// opset 21, per group before) for every backend: a float X of rank 2 or more [N, C, ...], the
// parameters 1-D of X's dtype (BatchNormalization's may be float32 for 16-bit X), the output of
// X's shape. It returns the parameters' length per input.
func CheckChannelNorm(n *Node) (groups int64, err error) {
	nin := 3
	if n.Op == "BatchNormalization" {
		nin = 5
		if n.Attrs.Int("training_mode", 0) != 0 {
			return 0, fmt.Errorf("training_mode 1 is not supported: export the model in eval mode")
		}
	}
	if err := CheckArity(n, nin, nin, 1, 1); err != nil {
		if n.Op == "BatchNormalization" {
			return 0, fmt.Errorf("%w (the training outputs running_mean and running_var are not supported)", err)
		}
		return 0, err
	}
	x := n.Inputs[0]
	if len(x.Shape) < 2 || !isFloatType(x.DType) {
		return 0, fmt.Errorf("input is %v, want a float tensor of rank 2 or more [N, C, ...]", x)
	}
	c := x.Shape[1]
	groups, plen := c, c
	if n.Op == "GroupNormalization" {
		groups = n.Attrs.Int("num_groups", 0)
		if groups < 1 || c%groups != 0 {
			return 0, fmt.Errorf("num_groups %d does not divide the channels %d", groups, c)
		}
		if n.Opset != 0 && n.Opset < 21 {
			plen = groups // opset 18: scale and bias per group
		}
	}
	for i := 1; i < nin; i++ {
		p := n.Inputs[i]
		okType := p.DType == x.DType || n.Op == "BatchNormalization" && p.DType == graph.Float32
		if !okType || len(p.Shape) != 1 || p.Shape[0] != plen {
			return 0, fmt.Errorf("input %d is %v, want %v[%d]", i, p, x.DType, plen)
		}
	}
	return groups, CheckOutput(n, 0, x.DType, x.Shape)
}

// PadNode is what CheckPad resolves of a Pad node.
type PadNode struct {
	Mode     string  // constant, reflect, edge or wrap
	AttrPads []int64 // the pads attribute before opset 11, nil from opset 11 (the pads input)
}

// CheckPad checks a Pad node for every backend: arity (x, pads, constant_value, axes from opset
// 11; x alone before), the mode, pads and axes of int64 (axes int32 or int64), a constant_value
// of x's dtype holding one element, and an output of x's dtype and rank. Where the pads (and
// axes) are known at Select (Value.Const, or the attribute), the output's shape is checked
// against them too; else the kernel checks it at run time.
func CheckPad(n *Node) (PadNode, error) {
	var p PadNode
	p.Mode = n.Attrs.String("mode", "constant")
	switch p.Mode {
	case "constant", "reflect", "edge", "wrap":
	default:
		return p, fmt.Errorf("mode %q is not one of constant, reflect, edge, wrap", p.Mode)
	}
	old := n.Opset != 0 && n.Opset < 11
	maxIn := 4
	if old {
		maxIn = 1
	}
	if err := CheckArity(n, 1, maxIn, 1, 1); err != nil {
		return p, err
	}
	x := n.Inputs[0]
	if err := CheckOutput(n, 0, x.DType, n.Outputs[0].Shape); err != nil {
		return p, err
	}
	if len(n.Outputs[0].Shape) != len(x.Shape) {
		return p, fmt.Errorf("output has rank %d, input %d", len(n.Outputs[0].Shape), len(x.Shape))
	}
	var pads, axes []int64
	known := true
	if old {
		p.AttrPads = n.Attrs.Ints("pads")
		pads = p.AttrPads
	} else {
		pv, ok := n.Input(1)
		if !ok || pv.DType != graph.Int64 || len(pv.Shape) != 1 {
			return p, fmt.Errorf("pads (input 1) is %v, want a 1-D int64 tensor", pv)
		}
		if cv, ok := n.Input(2); ok {
			if c, err := NumElements(cv.Shape); cv.DType != x.DType || err != nil || c != 1 {
				return p, fmt.Errorf("constant_value (input 2) is %v, want one %v element", cv, x.DType)
			}
		}
		if av, ok := n.Input(3); ok {
			if (av.DType != graph.Int64 && av.DType != graph.Int32) || len(av.Shape) != 1 || 2*av.Shape[0] != pv.Shape[0] {
				return p, fmt.Errorf("axes (input 3) is %v, want a 1-D int tensor of half the pads' %d values", av, pv.Shape[0])
			}
			if av.Const == nil {
				known = false
			} else if axes, known = intsOf(av); !known {
				return p, fmt.Errorf("axes (input 3) is %v, want int32 or int64", av)
			}
		} else if pv.Shape[0] != 2*int64(len(x.Shape)) {
			return p, fmt.Errorf("pads has %d values, want %d (begin and end of each of %d dims)", pv.Shape[0], 2*len(x.Shape), len(x.Shape))
		}
		if pv.Const == nil {
			known = false
		} else {
			pads, _ = intsOf(pv)
		}
	}
	if !known {
		return p, nil
	}
	full, err := graph.PadAmounts(pads, axes, len(x.Shape))
	if err != nil {
		return p, err
	}
	r := len(x.Shape)
	for i, d := range x.Shape {
		if want := d + full[i] + full[r+i]; want != n.Outputs[0].Shape[i] || want < 0 {
			return p, fmt.Errorf("output %v is not the input %v padded by %v", n.Outputs[0].Shape, x.Shape, full)
		}
	}
	return p, nil
}

// intsOf decodes a known int32 or int64 value.
func intsOf(v Value) ([]int64, bool) {
	switch v.DType {
	case graph.Int64:
		return append([]int64(nil), ViewAs[int64](v.Const)...), true
	case graph.Int32:
		var out []int64
		for _, x := range ViewAs[int32](v.Const) {
			out = append(out, int64(x))
		}
		return out, true
	}
	return nil, false
}

// ResizeNode is what CheckResize resolves of a Resize or Upsample node.
type ResizeNode struct {
	Mode        string // nearest or linear
	Coord       string // coordinate_transformation_mode
	Nearest     string // nearest_mode
	ScalesInput int    // the scales input's index, -1 when the node has none (the scales attribute)
	AttrScales  []float32
	Axes        []int // the dims scales and sizes cover, in order
}

// CheckResize checks Resize (opset 10 to 21) and Upsample (opset 7 to 9) for every backend:
// arity, modes nearest and linear (cubic refused), coordinate_transformation_mode half_pixel,
// half_pixel_symmetric, pytorch_half_pixel, align_corners or asymmetric (tf_crop_and_resize
// refused), nearest_mode, antialias 0, keep_aspect_ratio_policy stretch, the axes attribute, and
// an output of the input's dtype and rank. Upsample is asymmetric with floor rounding.
func CheckResize(n *Node) (ResizeNode, error) {
	var r ResizeNode
	x := n.Inputs[0]
	rank := len(x.Shape)
	r.Mode = n.Attrs.String("mode", "nearest")
	r.Coord = n.Attrs.String("coordinate_transformation_mode", "half_pixel")
	r.Nearest = n.Attrs.String("nearest_mode", "round_prefer_floor")
	switch {
	case n.Op == "Upsample":
		if err := CheckArity(n, 1, 2, 1, 1); err != nil {
			return r, err
		}
		r.Coord, r.Nearest, r.ScalesInput = "asymmetric", "floor", 1
		if _, ok := n.Input(1); !ok {
			r.ScalesInput, r.AttrScales = -1, n.Attrs.Floats("scales")
			if len(r.AttrScales) != rank {
				return r, fmt.Errorf("scales attribute %v has %d values, want %d", r.AttrScales, len(r.AttrScales), rank)
			}
		}
	case n.Opset == 10:
		if err := CheckArity(n, 2, 2, 1, 1); err != nil {
			return r, err
		}
		r.Coord, r.ScalesInput = "asymmetric", 1
		r.Nearest = "floor"
	default:
		if err := CheckArity(n, 1, 4, 1, 1); err != nil {
			return r, err
		}
		r.ScalesInput = 2
	}
	if r.Mode == "bilinear" || r.Mode == "trilinear" {
		r.Mode = "linear" // Upsample's older names
	}
	if r.Mode != "nearest" && r.Mode != "linear" {
		return r, fmt.Errorf("mode %q is not supported (nearest, linear)", r.Mode)
	}
	switch r.Coord {
	case "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric":
	default:
		return r, fmt.Errorf("coordinate_transformation_mode %q is not supported (half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric)", r.Coord)
	}
	switch r.Nearest {
	case "round_prefer_floor", "round_prefer_ceil", "floor", "ceil":
	default:
		return r, fmt.Errorf("nearest_mode %q is not one of round_prefer_floor, round_prefer_ceil, floor, ceil", r.Nearest)
	}
	if n.Attrs.Int("antialias", 0) != 0 {
		return r, fmt.Errorf("antialias 1 is not supported")
	}
	if p := n.Attrs.String("keep_aspect_ratio_policy", "stretch"); p != "stretch" {
		return r, fmt.Errorf("keep_aspect_ratio_policy %q is not supported (only stretch)", p)
	}
	if x.DType != graph.Float32 && x.DType != graph.Float16 && x.DType != graph.BFloat16 {
		return r, fmt.Errorf("input is %v, want a float type", x.DType)
	}
	out := n.Outputs[0]
	if err := CheckOutput(n, 0, x.DType, out.Shape); err != nil {
		return r, err
	}
	if len(out.Shape) != rank {
		return r, fmt.Errorf("output has rank %d, input %d", len(out.Shape), rank)
	}
	if ax := n.Attrs.Ints("axes"); ax != nil {
		for _, a := range ax {
			i, err := NormAxis(a, rank)
			if err != nil {
				return r, fmt.Errorf("axes: %w", err)
			}
			r.Axes = append(r.Axes, i)
		}
	} else {
		for i := range rank {
			r.Axes = append(r.Axes, i)
		}
	}
	if r.ScalesInput >= 0 {
		if s, ok := n.Input(r.ScalesInput); ok {
			c, _ := NumElements(s.Shape)
			if s.DType != graph.Float32 || len(s.Shape) != 1 || c != 0 && c != int64(len(r.Axes)) {
				return r, fmt.Errorf("scales (input %d) is %v, want float32[%d]", r.ScalesInput, s, len(r.Axes))
			}
			if c == 0 {
				r.ScalesInput = -1
			} else if s.Const != nil {
				for i, v := range ViewAs[float32](s.Const) {
					a := r.Axes[i]
					if !(v > 0) || graph.ResizeOut(x.Shape[a], float64(v)) != out.Shape[a] {
						return r, fmt.Errorf("scale %v of dim %d gives %d, output has %d", v, a, graph.ResizeOut(x.Shape[a], float64(v)), out.Shape[a])
					}
				}
			}
		} else {
			r.ScalesInput = -1
		}
	}
	if r.Mode == "linear" {
		for i := range rank - 2 {
			if x.Shape[i] != out.Shape[i] {
				return r, fmt.Errorf("linear mode resizes dim %d (%d to %d): only the last two dims may change", i, x.Shape[i], out.Shape[i])
			}
		}
	}
	return r, nil
}
