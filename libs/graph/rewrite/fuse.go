package rewrite

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// Kind names a family of fusions.
type Kind string

const (
	LayerNorm Kind = "layer-norm" // mean, variance, normalize, scale, shift -> LayerNormalization
	RMSNorm   Kind = "rms-norm"   // x * rsqrt(mean(x^2) + eps) * w -> RMSNormalization (opset 23)
	SiLU      Kind = "silu"       // x * sigmoid(x) -> Swish (opset 24)
	SwiGLU    Kind = "swiglu"     // swish(gate) * up -> dev.carve.SwiGLU
	// dev.carve.SwiGLU(MatMul(A, Wg), MatMul(A, Wu)), Wg and Wu 2-D weights -> dev.carve.GatedMatMul
	GatedMatMul Kind = "gated-matmul"
	Gelu        Kind = "gelu"      // 0.5 x (1 + tanh(...)) or 0.5 x (1 + erf(x / sqrt 2)) -> Gelu (opset 20)
	Rotary      Kind = "rotary"    // x*cos + rotate_half(x)*sin -> com.microsoft.RotaryEmbedding
	Attention   Kind = "attention" // softmax(Q K^T * scale + mask) V -> Attention (opset 23)
	// Attention over copies of views of one projection (Transposes, Gathers) -> Attention
	// reading the views in place (carve's layouts), the projections about it made over unmoved
	// rows
	AttentionLayout Kind = "attention-layout"
	// MatMul(A, Transpose(W)), W a 2-D weight -> Gemm(transB=1) over views of A
	TransposedWeight Kind = "transposed-weight"
	// Add(MatMul(A, W), b), W a 2-D weight and b its bias -> Gemm(A, W, b) over views of A
	MatMulBias Kind = "matmul-bias"
	// GatherElements(x, Expand(i, shape)) -> dev.carve.GatherElements(x, i, shape)
	ExpandedGather Kind = "expanded-gather"
	// BatchNormalization(Conv(x, W, b)) in inference mode -> Conv(x, W', b'), folded at load
	ConvBatchNorm Kind = "conv-batchnorm"
	// Relu(Conv(x, W, b)) -> com.microsoft.FusedConv(x, W, b, activation Relu); Relu(Add(Conv(x,
	// W, b), z)) -> FusedConv(x, W, b, z)
	ConvRelu Kind = "conv-relu"
)

// Kinds lists every kind, in the order Fuse applies them (batch norms folded into their
// convolutions first: nothing else reads them; then the Relus, and residual Adds, after those
// convolutions; norms next: their outputs feed
// the projections of attention; GatedMatMul right after SwiGLU: it matches the SwiGLU nodes
// that pass made; attention after rotary: it reads the rotary outputs; the attention layouts
// after attention, whose Attention nodes they read, and before the products' Gemms, which then
// fuse the projections it makes again).
func Kinds() []Kind {
	return []Kind{ConvBatchNorm, ConvRelu, LayerNorm, RMSNorm, SiLU, SwiGLU, GatedMatMul, Gelu, Rotary, Attention, AttentionLayout, TransposedWeight, MatMulBias, ExpandedGather}
}

// Op is the fused op a kind of fusion produces, so that a program can skip the kinds its kernels
// cannot run (Options.Skip).
func (k Kind) Op() (domain, op string) {
	switch k {
	case LayerNorm:
		return "", "LayerNormalization"
	case RMSNorm:
		return "", "RMSNormalization"
	case SiLU:
		return "", "Swish"
	case SwiGLU:
		return graph.DomainCarve, "SwiGLU"
	case GatedMatMul:
		return graph.DomainCarve, "GatedMatMul"
	case Gelu:
		return "", "Gelu"
	case Rotary:
		return "com.microsoft", "RotaryEmbedding"
	case Attention, AttentionLayout:
		return "", "Attention"
	case TransposedWeight, MatMulBias:
		return "", "Gemm"
	case ExpandedGather:
		return graph.DomainCarve, "GatherElements"
	case ConvBatchNorm:
		return "", "Conv"
	case ConvRelu:
		return "com.microsoft", "FusedConv"
	}
	return "", ""
}

// Options select the fusions.
type Options struct {
	// Skip lists kinds not to apply; their candidates are not reported.
	Skip []Kind
}

// Report says what Fuse did: each fusion, and each candidate left as exported with the
// reason.
type Report struct {
	Fused       []Fusion
	Unfused     []Unfused
	NodesBefore int
	NodesAfter  int
}

// Fusion is one pattern replaced by a fused node.
type Fusion struct {
	Kind     Kind
	Node     string   // the fused node's name
	Op       string   // its op: "Attention", "com.microsoft.RotaryEmbedding", ...
	Output   string   // the value it produces, named as the pattern's last node's output was
	Replaced []string // the exported nodes it removed, in graph order
	Detail   string   // what was recognised, e.g. heads, scale, mask and causality
}

// Unfused is a candidate left as exported.
type Unfused struct {
	Kind   Kind
	Node   string // the node the candidate was found at
	Op     string
	Reason string
}

// Count returns the number of fusions of kind k.
func (r *Report) Count(k Kind) int {
	n := 0
	for _, f := range r.Fused {
		if f.Kind == k {
			n++
		}
	}
	return n
}

// match is one recognised pattern and what replaces it.
type match struct {
	kind Kind
	root *graph.Node // the pattern's last node: the new nodes produce its outputs
	// also are nodes besides root whose outputs the new nodes produce, under the same names
	// (the Shape nodes that read a value the match removes, made over values it keeps)
	also     []*graph.Node
	fused    string        // the new node that does the pattern's work; "" for the one producing root's output
	interior []*graph.Node // nodes that belong to this pattern alone
	add      []graph.NodeSpec
	inits    []*graph.Tensor
	opsets   map[string]int64 // the opsets the new nodes need at least
	detail   string
}

// pass is one kind of fusion: which nodes are candidates and how one is matched. A match
// reads the candidate and the model it is in (for what graph knows of its values before
// binding, see hostScalar) and returns the pattern, or nil and why not.
type pass struct {
	kind      Kind
	candidate func(n *graph.Node) bool
	match     func(m *graph.Model, n *graph.Node) (*match, string)
}

var passes = []pass{
	{ConvBatchNorm, convBatchNormCandidate, nodeOnly(matchConvBatchNorm)},
	{ConvRelu, convReluCandidate, nodeOnly(matchConvRelu)},
	{LayerNorm, layerNormCandidate, nodeOnly(matchLayerNorm)},
	{RMSNorm, rmsNormCandidate, nodeOnly(matchRMSNorm)},
	{SiLU, func(n *graph.Node) bool { return is(n, "Sigmoid") }, nodeOnly(matchSiLU)},
	{SwiGLU, swigluCandidate, nodeOnly(matchSwiGLU)},
	{GatedMatMul, gatedMatMulCandidate, nodeOnly(matchGatedMatMul)},
	{Gelu, geluCandidate, matchGelu},
	{Rotary, rotaryCandidate, nodeOnly(matchRotary)},
	{Attention, func(n *graph.Node) bool { return is(n, "Softmax") }, matchAttention},
	{AttentionLayout, attentionLayoutCandidate, matchAttentionLayout},
	{TransposedWeight, transposedWeightCandidate, nodeOnly(matchTransposedWeight)},
	{MatMulBias, matmulBiasCandidate, nodeOnly(matchMatMulBias)},
	{ExpandedGather, expandedGatherCandidate, nodeOnly(matchExpandedGather)},
}

// nodeOnly adapts a match that reads nothing of the model beyond the candidate's graph.
func nodeOnly(f func(n *graph.Node) (*match, string)) func(*graph.Model, *graph.Node) (*match, string) {
	return func(_ *graph.Model, n *graph.Node) (*match, string) { return f(n) }
}

// Fuse returns a new model with the patterns of the selected kinds fused, and the report.
// m is not modified; when nothing fuses, m itself is returned. An error means a fused graph
// failed validation, which is a bug of this package: the error names the fusion.
func Fuse(m *graph.Model, opts Options) (*graph.Model, *Report, error) {
	rep := &Report{NodesBefore: len(m.Nodes)}
	cur := m
	for _, p := range passes {
		if slices.Contains(opts.Skip, p.kind) {
			continue
		}
		var found []*match
		owner := map[*graph.Node]*match{}
		for _, n := range cur.Nodes {
			if !p.candidate(n) {
				continue
			}
			mt, why := p.match(cur, n)
			if mt == nil {
				rep.Unfused = append(rep.Unfused, Unfused{Kind: p.kind, Node: n.Name, Op: opLabel(n), Reason: why})
				continue
			}
			if o := overlap(owner, mt); o != nil {
				rep.Unfused = append(rep.Unfused, Unfused{Kind: p.kind, Node: n.Name, Op: opLabel(n),
					Reason: fmt.Sprintf("it shares nodes with the %s fused at %s", o.kind, o.root.Name)})
				continue
			}
			for _, in := range append(mt.interior, mt.also...) {
				owner[in] = mt
			}
			found = append(found, mt)
		}
		if len(found) == 0 {
			continue
		}
		next, fused, err := apply(cur, found)
		if err != nil {
			return nil, nil, err
		}
		rep.Fused = append(rep.Fused, fused...)
		cur = next
	}
	rep.NodesAfter = len(cur.Nodes)
	return cur, rep, nil
}

func overlap(owner map[*graph.Node]*match, mt *match) *match {
	for _, n := range append(append([]*graph.Node{mt.root}, mt.also...), mt.interior...) {
		if o := owner[n]; o != nil {
			return o
		}
	}
	return nil
}

// apply builds the model with every match of one pass applied: each root is replaced by the
// match's new nodes, then the nodes that nothing reads any more are removed, walking back
// from the root (so nodes that were dead in the exported graph stay, and a removed node is
// credited to the match whose root it fed).
func apply(m *graph.Model, found []*match) (*graph.Model, []Fusion, error) {
	spec := m.Spec()
	removed := make([]bool, len(m.Nodes))
	reads := map[*graph.Value]int{} // readers left, by value
	for _, n := range m.Nodes {
		for _, v := range distinctInputs(n) {
			reads[v]++
		}
	}
	added := map[string]bool{} // outputs of new nodes, to share identical ones
	existing := func(name string) bool { return added[name] || m.Value(name) != nil }
	fused := make([]Fusion, len(found))
	for i, mt := range found {
		own := map[string]bool{mt.root.Outputs[0].Name: true} // the names the new nodes make again
		for _, n := range append([]*graph.Node{mt.root}, mt.also...) {
			removed[n.Index] = true
			for _, v := range distinctInputs(n) {
				reads[v]--
			}
			for _, o := range n.Outputs {
				if o != nil {
					own[o.Name] = true
				}
			}
		}
		f := &fused[i]
		*f = Fusion{Kind: mt.kind, Detail: mt.detail, Output: mt.root.Outputs[0].Name}
		for _, ns := range mt.add {
			if ns.Name == "" || len(ns.Outputs) == 0 {
				return nil, nil, fmt.Errorf("rewrite: %s at %s: a new node without a name or outputs", mt.kind, mt.root.Name)
			}
			if mt.fused == ns.Name || mt.fused == "" && slices.Contains(ns.Outputs, f.Output) {
				f.Node, f.Op = ns.Name, ns.OpType
				if ns.Domain != "" {
					f.Op = ns.Domain + "." + ns.OpType
				}
			}
			if added[ns.Outputs[0]] {
				continue // the same node, made by an earlier match of this pass
			}
			for _, o := range ns.Outputs {
				if !own[o] && existing(o) {
					return nil, nil, fmt.Errorf("rewrite: %s at %s: new value %q already exists", mt.kind, mt.root.Name, o)
				}
				added[o] = true
			}
			for _, in := range ns.Inputs {
				if v := m.Value(in); v != nil {
					reads[v]++
				}
			}
			spec.Nodes = append(spec.Nodes, ns)
		}
		for _, t := range mt.inits {
			if !existing(t.Name) {
				added[t.Name] = true
				spec.Initializers = append(spec.Initializers, t)
			}
		}
		for d, v := range mt.opsets {
			if spec.Opsets[d] < v {
				spec.Opsets[d] = v
			}
		}
	}
	// Sweep only once every new node counts as a reader, so that no match removes a node
	// another match's new nodes read.
	for i, mt := range found {
		for _, r := range append([]*graph.Node{mt.root}, mt.also...) {
			for _, n := range sweep(r, removed, reads) {
				fused[i].Replaced = append(fused[i].Replaced, n.Name)
			}
		}
	}
	kept := spec.Nodes[:0]
	for i, ns := range spec.Nodes {
		if i >= len(removed) || !removed[i] {
			kept = append(kept, ns)
		}
	}
	spec.Nodes = dropUnreadNew(kept, len(m.Nodes)-countTrue(removed), spec.Outputs)
	spec.Initializers = dropUnread(m, spec)
	out, err := graph.Build(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("rewrite: the fused graph is invalid (a bug in package rewrite): %w", err)
	}
	return out, fused, nil
}

// dropUnreadNew drops the new nodes (those from index old of nodes on) whose outputs no node
// reads and that are no graph outputs, until none is left: a Shape a match made again whose
// readers the sweep removed. The exported nodes are the sweep's to remove.
func dropUnreadNew(nodes []graph.NodeSpec, old int, outputs []string) []graph.NodeSpec {
	for {
		read := map[string]bool{}
		for _, o := range outputs {
			read[o] = true
		}
		for _, ns := range nodes {
			for _, in := range ns.Inputs {
				read[in] = true
			}
		}
		keep := nodes[:old:old]
		for _, ns := range nodes[old:] {
			if slices.ContainsFunc(ns.Outputs, func(o string) bool { return read[o] }) {
				keep = append(keep, ns)
			}
		}
		if len(keep) == len(nodes) {
			return nodes
		}
		nodes = keep
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// dropUnread returns spec's initializers less those that a node of m read and no node of spec
// reads (nor is a graph output): weights a match replaced, such as the convolution weights a
// batch norm was folded into, whose bytes would otherwise stay resident. An initializer the
// exported graph did not read stays, as its nodes do (sweep).
func dropUnread(m *graph.Model, spec graph.Spec) []*graph.Tensor {
	read := map[string]bool{}
	for _, ns := range spec.Nodes {
		for _, in := range ns.Inputs {
			read[in] = true
		}
	}
	for _, o := range spec.Outputs {
		read[o] = true
	}
	keep := spec.Initializers[:0:0]
	for _, t := range spec.Initializers {
		if v := m.Value(t.Name); read[t.Name] || v == nil || len(v.Consumers) == 0 {
			keep = append(keep, t)
		}
	}
	return keep
}

// sweep removes, from root backwards, every node whose outputs nobody reads any more and
// that are no graph outputs, and returns them (root first, then in reverse graph order).
func sweep(root *graph.Node, removed []bool, reads map[*graph.Value]int) []*graph.Node {
	gone := []*graph.Node{root}
	stack := []*graph.Node{root}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range distinctInputs(n) {
			p := v.Producer
			if p == nil || removed[p.Index] || !dead(p, reads) {
				continue
			}
			removed[p.Index] = true
			for _, in := range distinctInputs(p) {
				reads[in]--
			}
			gone = append(gone, p)
			stack = append(stack, p)
		}
	}
	slices.SortFunc(gone[1:], func(a, b *graph.Node) int { return a.Index - b.Index })
	return gone
}

func dead(n *graph.Node, reads map[*graph.Value]int) bool {
	for _, o := range n.Outputs {
		if o != nil && (o.Output || reads[o] > 0) {
			return false
		}
	}
	return true
}

// distinctInputs are n's inputs, each once.
func distinctInputs(n *graph.Node) []*graph.Value {
	var out []*graph.Value
	for _, v := range n.Inputs {
		if v != nil && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
