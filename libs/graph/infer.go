package graph

import (
	"fmt"
	"sort"
	"strings"
)

// Shape inference. infer walks the nodes in order; for each it checks the operator's arity
// (checkArity, the one check of required inputs) and runs the operator's inference function,
// registered in ops below. The functions live with their family, as in libs/kernels/cpu:
// infer_elementwise.go, infer_shape.go, infer_indexing.go, infer_generate.go, infer_matmul.go,
// infer_norm.go, infer_attention.go, infer_reduce.go and infer_conv.go; infer_context.go holds what they share
// (ictx: inputs, host data, outputs, conditions checked at Bind; broadcasting).

// maxHostElems bounds the size of a value evaluated on the host: shape computations are a
// few dims long, and a bound keeps hostile models (Range to 2^60) from allocating.
const maxHostElems = 4096

// check is a condition that inference could not decide for all dims: Cond must evaluate
// to non-zero at Bind, or the binding does not fit the node.
type check struct {
	node *Node
	cond Dim
	what string
}

// UnsupportedOpError lists the operators of a model that carve cannot infer shapes for.
type UnsupportedOpError struct {
	Ops       []UnsupportedOp
	Supported []string // "OpType" for ai.onnx, "domain.OpType" otherwise, sorted
}

// UnsupportedOp is one unsupported operator and the first node that uses it.
type UnsupportedOp struct {
	OpType, Domain, Node string
	Count                int // nodes using it
}

func (e *UnsupportedOpError) Error() string {
	var b strings.Builder
	b.WriteString("graph: unsupported operators: ")
	for i, o := range e.Ops {
		if i > 0 {
			b.WriteString(", ")
		}
		dom := o.Domain
		if dom == "" {
			dom = "ai.onnx"
		}
		fmt.Fprintf(&b, "%s (domain %s, node %q", o.OpType, dom, o.Node)
		if o.Count > 1 {
			fmt.Fprintf(&b, " and %d more", o.Count-1)
		}
		b.WriteString(")")
	}
	b.WriteString("; supported: ")
	b.WriteString(strings.Join(e.Supported, " "))
	return b.String()
}

type opKey struct{ domain, op string }

type opFunc func(c *ictx) error

// op is one operator's inference and the inputs it takes. infer checks the arity before it
// calls f, so an inference function reads its required inputs with c.in(i) (never nil) and
// checks optional ones for nil itself.
type op struct {
	f     opFunc
	arity arity
}

// arity is how many inputs an operator takes: the first min must be present (optional inputs
// after them may be omitted), and with all set, every input the node lists must be present,
// at least one, and no more than max (unbounded if max < 0).
type arity struct {
	min, max int
	all      bool
}

// inputs is the arity of an operator whose first n inputs are required.
func inputs(n int) arity { return arity{min: n, max: -1} }

// exactly is the arity of an operator that takes n inputs, all present.
func exactly(n int) arity { return arity{min: n, max: n, all: true} }

// variadic is the arity of an operator that takes one or more inputs, all present.
var variadic = arity{min: 1, max: -1, all: true}

// checkArity is the one arity check, made for every node before its operator's inference:
// every required input present, then the count. Errors name the missing input or the count.
func (c *ictx) checkArity(a arity) error {
	n := len(c.n.Inputs)
	present := a.min
	if a.all {
		if n == 0 {
			return c.errf("%s has no inputs", c.n.OpType)
		}
		present = n
	}
	for i := range present {
		if c.in(i) == nil {
			return c.errMissing(i)
		}
	}
	if a.all && (n < a.min || (a.max >= 0 && n > a.max)) {
		return c.errf("%s takes %d inputs, has %d", c.n.OpType, a.min, n)
	}
	return nil
}

// ops maps each supported operator to its shape (and host value) inference.
var ops map[opKey]op

func init() {
	ops = map[opKey]op{}
	reg := func(domain string, f opFunc, a arity, names ...string) {
		for _, n := range names {
			ops[opKey{domain, n}] = op{f: f, arity: a}
		}
	}
	// infer_elementwise.go
	reg("", inferUnary, inputs(1), "Neg", "Sqrt", "Reciprocal", "Tanh", "Sigmoid", "Cos", "Sin", "Erf", "Exp",
		"Log", "Abs", "Relu", "Gelu", "Floor", "Ceil", "Round", "Softplus", "Sign", "HardSigmoid",
		"HardSwish", "LeakyRelu", "Elu", "Identity", "Softmax", "LogSoftmax", "Trilu", "CumSum", "Not",
		"IsNaN", "IsInf", "Dropout", "RotaryEmbedding")
	reg("", inferBinary, exactly(2), "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal",
		"Less", "Greater", "LessOrEqual", "GreaterOrEqual")
	reg("", inferBinary, variadic, "Max", "Min", "Sum", "Mean")
	reg("", inferWhere, inputs(3), "Where")
	reg("", inferClip, inputs(1), "Clip")
	reg("", inferCast, inputs(1), "Cast")
	reg("", inferCast, inputs(2), "CastLike")
	// infer_shape.go
	reg("", inferShape, inputs(1), "Shape")
	reg("", inferSize, inputs(1), "Size")
	reg("", inferReshape, inputs(2), "Reshape")
	reg("", inferFlatten, inputs(1), "Flatten")
	reg("", inferSqueeze, inputs(1), "Squeeze")
	reg("", inferUnsqueeze, inputs(1), "Unsqueeze")
	reg("", inferTranspose, inputs(1), "Transpose")
	reg("", inferConcat, variadic, "Concat")
	reg("", inferSplit, inputs(1), "Split")
	reg("", inferExpand, inputs(2), "Expand")
	reg("", inferTile, inputs(2), "Tile")
	// infer_indexing.go
	reg("", inferSlice, inputs(3), "Slice")
	reg("", inferGather, inputs(2), "Gather")
	reg("", inferGatherElements, inputs(2), "GatherElements")
	reg("", inferGatherND, inputs(2), "GatherND")
	// infer_generate.go
	reg("", inferConstantOfShape, inputs(1), "ConstantOfShape")
	reg("", inferConstant, inputs(0), "Constant")
	reg("", inferRange, inputs(3), "Range")
	// infer_matmul.go
	reg("", inferMatMul, inputs(2), "MatMul")
	reg("", inferGemm, inputs(2), "Gemm")
	// infer_norm.go
	reg("", inferLayerNorm, inputs(1), "LayerNormalization", "SimplifiedLayerNormalization")
	// infer_reduce.go
	reg("", inferReduce, inputs(1), "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare")
	reg("", inferArgReduce, inputs(1), "ArgMax", "ArgMin")
	// infer_conv.go
	reg("", inferConv, inputs(2), "Conv")
	reg("", inferConvTranspose, inputs(2), "ConvTranspose")
	reg("", inferPool, inputs(1), "MaxPool", "AveragePool")
	reg("", inferGlobalPool, inputs(1), "GlobalAveragePool", "GlobalMaxPool")
	reg("", inferChannelNorm, inputs(1), "BatchNormalization", "InstanceNormalization", "GroupNormalization")
	reg("", inferPad, inputs(1), "Pad")
	reg("", inferResize, inputs(1), "Resize", "Upsample")
	// Fusion targets (graph/rewrite): ONNX's Attention, RMSNormalization, Swish and RotaryEmbedding.
	reg("", inferONNXAttention, inputs(3), "Attention")
	reg("", inferLayerNorm, inputs(1), "RMSNormalization")
	reg("", inferUnary, inputs(1), "Swish", "RotaryEmbedding")

	const ms = "com.microsoft"
	reg(ms, inferUnary, inputs(1), "BiasGelu", "FastGelu", "Gelu", "QuickGelu", "RotaryEmbedding", "BiasAdd")
	reg(ms, inferMatMulNBits, inputs(2), "MatMulNBits")
	reg(ms, inferConv, inputs(2), "FusedConv") // Conv (X, W, B), Z added, an activation (graph/rewrite)
	reg(ms, inferMoE, inputs(3), "MoE")
	reg(ms, inferLayerNorm, inputs(1), "SimplifiedLayerNormalization")
	reg(ms, inferSkipLayerNorm, inputs(2), "SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
	// infer_attention.go
	reg(ms, inferAttention, inputs(2), "Attention")
	reg(ms, inferMHA, inputs(1), "MultiHeadAttention")
	reg(ms, inferGQA, inputs(1), "GroupQueryAttention")

	// carve's own fused ops (graph/rewrite), in DomainCarve. SwiGLU takes two inputs of one
	// shape (its kernels check that); the output has their shape. GatedMatMul: infer_matmul.go;
	// GatherElements: infer_indexing.go.
	reg(DomainCarve, inferBinary, exactly(2), "SwiGLU")
	reg(DomainCarve, inferGatedMatMul, exactly(3), "GatedMatMul")
	reg(DomainCarve, inferExpandedGatherElements, exactly(3), "GatherElements")
	reg(DomainCarve, inferCollective, exactly(1), CollectiveOps...) // infer_collective.go
}

// DomainCarve is the operator domain of the fused ops carve's rewrites produce where neither
// ai.onnx (at the opsets carve loads) nor com.microsoft has one:
//   - SwiGLU(A, B) = Swish_alpha(A) * B, ONNX's SwiGLU (opset 28) semantics, where
//     Swish_alpha(x) = x * sigmoid(alpha * x) (attribute alpha, default 1).
//   - GatedMatMul(A, Wg, Wu) = Swish_alpha(A·Wg) * (A·Wu), the gated MLP's gate and up products
//     and SwiGLU in one op: A [..., K] of rank 2 or more, Wg and Wu 2-D [K, N], all of one float
//     type (float32, float16, bfloat16); output A.shape[:-1] + [N] of A's type; attribute alpha
//     as SwiGLU's.
//   - GatherElements(data, indices, shape) = ONNX's GatherElements(data, Expand(indices, shape))
//     (attribute axis as ONNX's): the indices broadcast to shape as Expand broadcasts, without
//     being expanded in memory; output of the data's type and the broadcast shape, which has
//     the data's rank.
//   - AllReduce and AllGather: the collectives of a tensor-parallel split (infer_collective.go).
const DomainCarve = "dev.carve"

// SupportedOps lists the supported operators: "OpType" for ai.onnx, "domain.OpType" otherwise.
func SupportedOps() []string {
	out := make([]string, 0, len(ops))
	for k := range ops {
		if k.domain == "" {
			out = append(out, k.op)
		} else {
			out = append(out, k.domain+"."+k.op)
		}
	}
	sort.Strings(out)
	return out
}

// views are the operators whose output shares its input's bytes.
var views = map[string]bool{"Reshape": true, "Squeeze": true, "Unsqueeze": true, "Flatten": true, "Identity": true}

// IsView reports whether n's output shares its first input's bytes (Reshape, Squeeze,
// Unsqueeze, Flatten, Identity).
func (n *Node) IsView() bool { return n.Domain == "" && views[n.OpType] }

// infer gives every value its dtype and symbolic shape, evaluates what it can on the host,
// and records the conditions that only a binding can decide.
func infer(m *Model) error {
	var unsupported []UnsupportedOp
	seen := map[opKey]int{}
	for _, n := range m.Nodes {
		k := opKey{n.Domain, n.OpType}
		if _, ok := ops[k]; ok {
			continue
		}
		if i, ok := seen[k]; ok {
			unsupported[i].Count++
			continue
		}
		seen[k] = len(unsupported)
		unsupported = append(unsupported, UnsupportedOp{OpType: n.OpType, Domain: n.Domain, Node: n.Name, Count: 1})
	}
	if len(unsupported) > 0 {
		return &UnsupportedOpError{Ops: unsupported, Supported: SupportedOps()}
	}
	m.hostData = make([][]Dim, len(m.Values))
	m.consts = make([]*HostTensor, len(m.Values))
	for _, v := range m.Initializers {
		if !isIntType(v.DType) || v.Init.Size > maxHostElems*8 {
			continue
		}
		if _, ext := v.Init.External(); ext && v.Init.ext.file.size < 0 {
			continue // the file is missing: the data is unknown
		}
		t, err := v.Init.Host()
		if err != nil {
			continue
		}
		vals, err := t.Int64s()
		if err != nil || len(vals) > maxHostElems {
			continue
		}
		m.hostData[v.ID] = constDims(vals)
		m.consts[v.ID] = t
		v.Host = true
	}
	c := &ictx{m: m}
	for _, n := range m.Nodes {
		c.n = n
		op := ops[opKey{n.Domain, n.OpType}]
		err := c.checkArity(op.arity)
		if err == nil {
			err = op.f(c)
		}
		if err != nil {
			var me *ModelError
			if asModelError(err, &me) {
				return err
			}
			return &ModelError{Node: n, Problem: err.Error()}
		}
		for i, o := range n.Outputs {
			if o == nil {
				continue
			}
			if o.DType == Undefined {
				return &ModelError{Node: n, Problem: fmt.Sprintf("output %d (%q) is not produced by %s", i, o.Name, n.OpType)}
			}
			if err := o.Shape.Err(); err != nil {
				return &ModelError{Node: n, Tensor: o.Name, Problem: "impossible shape", Err: err}
			}
			if d := m.hostData[o.ID]; d != nil {
				for _, x := range d {
					if err := x.Err(); err != nil {
						return &ModelError{Node: n, Tensor: o.Name, Problem: "impossible value", Err: err}
					}
				}
				o.Host = true
			}
			if m.consts[o.ID] != nil {
				o.Host = true
			}
		}
	}
	m.checks = c.checks
	return nil
}

func asModelError(err error, target **ModelError) bool {
	me, ok := err.(*ModelError)
	if ok {
		*target = me
	}
	return ok
}
