package graph

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

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

// ops maps each supported operator to its shape (and host value) inference.
var ops map[opKey]opFunc

func init() {
	ops = map[opKey]opFunc{}
	reg := func(domain string, f opFunc, names ...string) {
		for _, n := range names {
			ops[opKey{domain, n}] = f
		}
	}
	reg("", inferUnary, "Neg", "Sqrt", "Reciprocal", "Tanh", "Sigmoid", "Cos", "Sin", "Erf", "Exp",
		"Log", "Abs", "Relu", "Gelu", "Floor", "Ceil", "Round", "Softplus", "Sign", "HardSigmoid",
		"HardSwish", "LeakyRelu", "Elu", "Identity", "Softmax", "LogSoftmax", "Trilu", "CumSum", "Not",
		"IsNaN", "IsInf", "Dropout")
	reg("", inferBinary, "Add", "Sub", "Mul", "Div", "Pow", "Mod", "And", "Or", "Xor", "Equal",
		"Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Max", "Min", "Sum", "Mean")
	reg("", inferWhere, "Where")
	reg("", inferCast, "Cast", "CastLike")
	reg("", inferShape, "Shape")
	reg("", inferSize, "Size")
	reg("", inferReshape, "Reshape")
	reg("", inferFlatten, "Flatten")
	reg("", inferSqueeze, "Squeeze")
	reg("", inferUnsqueeze, "Unsqueeze")
	reg("", inferTranspose, "Transpose")
	reg("", inferConcat, "Concat")
	reg("", inferSplit, "Split")
	reg("", inferSlice, "Slice")
	reg("", inferGather, "Gather")
	reg("", inferGatherElements, "GatherElements")
	reg("", inferGatherND, "GatherND")
	reg("", inferExpand, "Expand")
	reg("", inferConstantOfShape, "ConstantOfShape")
	reg("", inferConstant, "Constant")
	reg("", inferRange, "Range")
	reg("", inferMatMul, "MatMul")
	reg("", inferGemm, "Gemm")
	reg("", inferLayerNorm, "LayerNormalization", "SimplifiedLayerNormalization")
	reg("", inferReduce, "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceSumSquare")
	reg("", inferArgReduce, "ArgMax", "ArgMin")
	reg("", inferTile, "Tile")
	reg("", inferUnary, "RotaryEmbedding")
	reg("", inferONNXAttention, "Attention")
	reg("", inferLayerNorm, "RMSNormalization")
	reg("", inferUnary, "Swish")
	const ms = "com.microsoft"
	reg(ms, inferUnary, "BiasGelu", "FastGelu", "Gelu", "QuickGelu", "RotaryEmbedding", "BiasAdd")
	reg(ms, inferMatMulNBits, "MatMulNBits")
	reg(ms, inferLayerNorm, "SimplifiedLayerNormalization")
	reg(ms, inferSkipLayerNorm, "SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
	reg(ms, inferAttention, "Attention")
	reg(ms, inferMHA, "MultiHeadAttention")
	reg(ms, inferGQA, "GroupQueryAttention")
}

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
		if err := ops[opKey{n.Domain, n.OpType}](c); err != nil {
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

func isIntType(dt DType) bool {
	switch dt {
	case Int64, Int32, Int16, Int8, Uint8, Uint16, Uint32, Uint64, Bool:
		return true
	}
	return false
}

func constDims(vals []int64) []Dim {
	out := make([]Dim, len(vals))
	for i, v := range vals {
		out[i] = Const(v)
	}
	return out
}

// ictx is the inference context of one node.
type ictx struct {
	m      *Model
	n      *Node
	checks []check
}

func (c *ictx) errf(format string, args ...any) error {
	return &ModelError{Node: c.n, Problem: fmt.Sprintf(format, args...)}
}

func (c *ictx) in(i int) *Value { return c.n.Input(i) }

// need returns the i'th input, an error if it is missing.
func (c *ictx) need(i int) (*Value, error) {
	v := c.n.Input(i)
	if v == nil {
		return nil, c.errf("input %d is missing", i)
	}
	return v, nil
}

// data returns the host data of input i, if it has any.
func (c *ictx) data(i int) ([]Dim, bool) {
	v := c.n.Input(i)
	if v == nil {
		return nil, false
	}
	d := c.m.hostData[v.ID]
	return d, d != nil
}

// needData returns the host data of input i, or an error saying it must be computable.
func (c *ictx) needData(i int, what string) ([]Dim, error) {
	v, err := c.need(i)
	if err != nil {
		return nil, err
	}
	d, ok := c.data(i)
	if !ok {
		return nil, c.errf("%s (input %d, %q) is not computable on the host: it depends on runtime data, not only on shapes and constants", what, i, v.Name)
	}
	return d, nil
}

// out sets output i's type; a missing optional output is skipped.
func (c *ictx) out(i int, dt DType, shape Shape) *Value {
	v := c.n.Output(i)
	if v == nil {
		return nil
	}
	v.DType, v.Shape = dt, shape
	return v
}

// outData sets output i's type and host data; data is dropped when the shape is not
// constant or too large, and for non-integer types.
func (c *ictx) outData(i int, dt DType, shape Shape, data []Dim) {
	v := c.out(i, dt, shape)
	if v == nil || data == nil || !isIntType(dt) || !shape.IsConst() {
		return
	}
	n, err := NumElements(constVals(shape))
	if err != nil || n != int64(len(data)) || n > maxHostElems {
		return
	}
	c.m.hostData[v.ID] = data
}

// eq requires a == b: an error now if both are constants, otherwise a check at Bind.
func (c *ictx) eq(a, b Dim, what string) error {
	if a.Equal(b) {
		return nil
	}
	if a.IsConst() && b.IsConst() {
		return c.errf("%s: %s != %s", what, a, b)
	}
	c.checks = append(c.checks, check{node: c.n, cond: eqDim(a, b), what: fmt.Sprintf("%s: %s == %s", what, a, b)})
	return nil
}

// require records a condition to be checked at Bind, or fails now if it is a false constant.
func (c *ictx) require(cond Dim, what string) error {
	if v, ok := cond.Value(); ok {
		if v == 0 {
			return c.errf("%s", what)
		}
		return nil
	}
	c.checks = append(c.checks, check{node: c.n, cond: cond, what: what})
	return nil
}

func axis(a int64, rank int) (int, error) {
	if a < -int64(rank) || a >= int64(rank) {
		return 0, fmt.Errorf("axis %d is out of range for rank %d", a, rank)
	}
	if a < 0 {
		a += int64(rank)
	}
	return int(a), nil
}

func constVals(s Shape) []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i], _ = d.Value()
	}
	return out
}

// dimsConst returns the values of dims that are all constants.
func dimsConst(ds []Dim) ([]int64, bool) {
	out := make([]int64, len(ds))
	for i, d := range ds {
		v, ok := d.Value()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// axesOf returns the axes of Squeeze, Unsqueeze, Reduce*: input idx if present, else the
// "axes" attribute; ok is false when neither is given.
func (c *ictx) axesOf(idx int) ([]int64, bool, error) {
	if c.in(idx) != nil {
		d, err := c.needData(idx, "axes")
		if err != nil {
			return nil, false, err
		}
		vals, ok := dimsConst(d)
		if !ok {
			return nil, false, c.errf("axes depend on dims: %v", d)
		}
		return vals, true, nil
	}
	if c.n.Attrs.Has("axes") {
		return c.n.Attrs.Ints("axes"), true, nil
	}
	return nil, false, nil
}

// broadcast is numpy broadcasting of shapes.
func broadcast(shapes ...Shape) Shape {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make(Shape, r)
	for i := range out {
		out[i] = Const(1)
	}
	for _, s := range shapes {
		off := r - len(s)
		for i, d := range s {
			out[off+i] = broadcastDim(out[off+i], d)
		}
	}
	return out
}

// broadcastData evaluates an elementwise function over host data with numpy broadcasting.
// All shapes must be constant; it returns nil if any input has no data.
func broadcastData(out Shape, ins []Shape, data [][]Dim, fn func(x []Dim) Dim) []Dim {
	for _, d := range data {
		if d == nil {
			return nil
		}
	}
	if !out.IsConst() {
		return nil
	}
	os := constVals(out)
	n, err := NumElements(os)
	if err != nil || n > maxHostElems {
		return nil
	}
	res := make([]Dim, n)
	idx := make([]int64, len(os))
	x := make([]Dim, len(ins))
	for k := range res {
		// idx is the multi-index of k in out.
		rem := int64(k)
		for a := len(os) - 1; a >= 0; a-- {
			if os[a] > 0 {
				idx[a] = rem % os[a]
				rem /= os[a]
			}
		}
		for j, s := range ins {
			is := constVals(s)
			off, stride := int64(0), int64(1)
			for a := len(is) - 1; a >= 0; a-- {
				i := idx[len(os)-len(is)+a]
				if is[a] == 1 {
					i = 0
				}
				off += i * stride
				stride *= is[a]
			}
			x[j] = data[j][off]
		}
		res[k] = fn(x)
	}
	return res
}

// ---- elementwise ----

func inferUnary(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	dt := x.DType
	switch c.n.OpType {
	case "IsNaN", "IsInf":
		dt = Bool
	}
	var data []Dim
	if d, ok := c.data(0); ok && c.n.Domain == "" {
		switch c.n.OpType {
		case "Identity":
			data = d
		case "Neg":
			data = mapDims(d, func(a Dim) Dim { return a.Mul(Const(-1)) })
		case "Not":
			data = mapDims(d, func(a Dim) Dim { return Const(1).Sub(a) })
		case "Abs":
			if vals, ok := dimsConst(d); ok {
				for i, v := range vals {
					vals[i] = max(v, -v)
				}
				data = constDims(vals)
			}
		}
	}
	c.outData(0, dt, x.Shape, data)
	if c.n.OpType == "Dropout" {
		c.out(1, Bool, x.Shape)
	}
	return nil
}

func mapDims(d []Dim, f func(Dim) Dim) []Dim {
	out := make([]Dim, len(d))
	for i, x := range d {
		out[i] = f(x)
	}
	return out
}

func inferBinary(c *ictx) error {
	if len(c.n.Inputs) == 0 {
		return c.errf("no inputs")
	}
	var shapes []Shape
	var data [][]Dim
	for i := range c.n.Inputs {
		v, err := c.need(i)
		if err != nil {
			return err
		}
		shapes = append(shapes, v.Shape)
		d, _ := c.data(i)
		data = append(data, d)
	}
	x := c.n.Inputs[0]
	dt := x.DType
	op := c.n.OpType
	switch op {
	case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual":
		dt = Bool
	}
	if len(shapes) != 2 && op != "Max" && op != "Min" && op != "Sum" && op != "Mean" {
		return c.errf("%s takes 2 inputs, has %d", op, len(shapes))
	}
	out := broadcast(shapes...)
	var res []Dim
	if isIntType(x.DType) {
		fold := func(f func(a, b Dim) Dim) func(x []Dim) Dim {
			return func(x []Dim) Dim {
				acc := x[0]
				for _, y := range x[1:] {
					acc = f(acc, y)
				}
				return acc
			}
		}
		var fn func(x []Dim) Dim
		switch op {
		case "Add", "Sum":
			fn = fold(Dim.Add)
		case "Sub":
			fn = fold(Dim.Sub)
		case "Mul":
			fn = fold(Dim.Mul)
		case "Div":
			fn = fold(truncDiv)
		case "Mod":
			if c.n.Attrs.Int("fmod", 0) == 0 {
				fn = fold(Dim.mod)
			}
		case "Max":
			fn = fold(MaxDim)
		case "Min":
			fn = fold(MinDim)
		case "Equal":
			fn = fold(eqDim)
		case "Less":
			fn = fold(ltDim)
		case "Greater":
			fn = fold(func(a, b Dim) Dim { return ltDim(b, a) })
		case "LessOrEqual":
			fn = fold(func(a, b Dim) Dim { return Const(1).Sub(ltDim(b, a)) })
		case "GreaterOrEqual":
			fn = fold(func(a, b Dim) Dim { return Const(1).Sub(ltDim(a, b)) })
		case "And":
			fn = fold(Dim.Mul)
		case "Or":
			fn = fold(func(a, b Dim) Dim { return a.Add(b).Sub(a.Mul(b)) })
		}
		if fn != nil {
			res = broadcastData(out, shapes, data, fn)
		}
	}
	c.outData(0, dt, out, res)
	return nil
}

// truncDiv is integer division as ONNX runtimes compute it: truncating toward zero. Dims are
// not negative, so for symbolic operands floor division is the same.
func truncDiv(a, b Dim) Dim {
	av, aok := a.Value()
	bv, bok := b.Value()
	if aok && bok && bv != 0 && !(bv == -1 && av == -1<<63) {
		return Const(av / bv)
	}
	return a.FloorDiv(b)
}

func inferWhere(c *ictx) error {
	var shapes []Shape
	var data [][]Dim
	for i := 0; i < 3; i++ {
		v, err := c.need(i)
		if err != nil {
			return err
		}
		shapes = append(shapes, v.Shape)
		d, _ := c.data(i)
		data = append(data, d)
	}
	out := broadcast(shapes...)
	dt := c.n.Inputs[1].DType
	var res []Dim
	if isIntType(dt) {
		res = broadcastData(out, shapes, data, func(x []Dim) Dim { return selectDim(x[0], x[1], x[2]) })
	}
	c.outData(0, dt, out, res)
	return nil
}

func inferCast(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	var to DType
	if c.n.OpType == "CastLike" {
		t, err := c.need(1)
		if err != nil {
			return err
		}
		to = t.DType
	} else {
		if err := c.n.Attrs.requireKind("to", AttrInt); err != nil {
			return c.errf("%v", err)
		}
		to = DType(c.n.Attrs.Int("to", 0))
		if err := checkDType(to); err != nil {
			return c.errf("cast to %v", err)
		}
	}
	var data []Dim
	if d, ok := c.data(0); ok && isIntType(to) {
		data = d
		if to == Bool {
			data = mapDims(d, func(a Dim) Dim { return Const(1).Sub(eqDim(a, Const(0))) })
		}
	}
	c.outData(0, to, x.Shape, data)
	return nil
}

// ---- shape operators ----

func inferShape(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := int64(len(x.Shape))
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return max(0, min(v, r))
	}
	start, end := clamp(c.n.Attrs.Int("start", 0)), clamp(c.n.Attrs.Int("end", r))
	var dims []Dim
	if end > start {
		dims = append(dims, x.Shape[start:end]...)
	}
	c.outData(0, Int64, Shape{Const(int64(len(dims)))}, append([]Dim{}, dims...))
	return nil
}

func inferSize(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	c.outData(0, Int64, Shape{}, []Dim{x.Shape.NumElements()})
	return nil
}

func inferReshape(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	target, err := c.needData(1, "the target shape")
	if err != nil {
		return err
	}
	allowZero := c.n.Attrs.Int("allowzero", 0) != 0
	out := make(Shape, len(target))
	infer := -1
	known := Const(1)
	for i, d := range target {
		v, isConst := d.Value()
		switch {
		case isConst && v == -1:
			if infer >= 0 {
				return c.errf("target shape %v has more than one -1", target)
			}
			infer = i
			continue
		case isConst && v == 0 && !allowZero:
			if i >= len(x.Shape) {
				return c.errf("target shape %v copies dim %d of a rank-%d input", target, i, len(x.Shape))
			}
			out[i] = x.Shape[i]
		case isConst && v < 0:
			return c.errf("target shape %v has a negative dim", target)
		default:
			out[i] = d
		}
		known = known.Mul(out[i])
	}
	total := x.Shape.NumElements()
	if infer >= 0 {
		out[infer] = total.exactDiv(known)
	} else if err := c.eq(total, known, fmt.Sprintf("reshape of %v to %v changes the element count", x.Shape, out)); err != nil {
		return err
	}
	d, _ := c.data(0)
	c.outData(0, x.DType, out, d)
	return nil
}

func inferFlatten(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	a := c.n.Attrs.Int("axis", 1)
	if a < -int64(r) || a > int64(r) {
		return c.errf("axis %d is out of range for rank %d", a, r)
	}
	if a < 0 {
		a += int64(r)
	}
	d, _ := c.data(0)
	c.outData(0, x.DType, Shape{x.Shape[:a].NumElements(), x.Shape[a:].NumElements()}, d)
	return nil
}

func inferSqueeze(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	axes, ok, err := c.axesOf(1)
	if err != nil {
		return err
	}
	drop := make([]bool, len(x.Shape))
	if ok {
		for _, a := range axes {
			i, err := axis(a, len(x.Shape))
			if err != nil {
				return c.errf("%v", err)
			}
			drop[i] = true
			if err := c.eq(x.Shape[i], Const(1), fmt.Sprintf("squeezed dim %d", i)); err != nil {
				return err
			}
		}
	} else {
		for i, d := range x.Shape {
			if v, isConst := d.Value(); isConst {
				drop[i] = v == 1
				continue
			}
			if err := c.require(Const(1).Sub(eqDim(d, Const(1))), fmt.Sprintf("Squeeze without axes keeps dim %d (%s), which must not be 1", i, d)); err != nil {
				return err
			}
		}
	}
	var out Shape
	for i, d := range x.Shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	data, _ := c.data(0)
	c.outData(0, x.DType, out, data)
	return nil
}

func inferUnsqueeze(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	axes, ok, err := c.axesOf(1)
	if err != nil {
		return err
	}
	if !ok {
		return c.errf("Unsqueeze has no axes")
	}
	r := len(x.Shape) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		i, err := axis(a, r)
		if err != nil {
			return c.errf("%v", err)
		}
		if ins[i] {
			return c.errf("axis %d given twice", a)
		}
		ins[i] = true
	}
	out := make(Shape, 0, r)
	j := 0
	for i := 0; i < r; i++ {
		if ins[i] {
			out = append(out, Const(1))
		} else {
			out = append(out, x.Shape[j])
			j++
		}
	}
	data, _ := c.data(0)
	c.outData(0, x.DType, out, data)
	return nil
}

func inferTranspose(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	perm := c.n.Attrs.Ints("perm")
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != r {
		return c.errf("perm %v does not match rank %d", perm, r)
	}
	out := make(Shape, r)
	used := make([]bool, r)
	for i, p := range perm {
		if p < 0 || p >= int64(r) || used[p] {
			return c.errf("perm %v is not a permutation of 0..%d", perm, r-1)
		}
		used[p] = true
		out[i] = x.Shape[p]
	}
	var data []Dim
	if d, ok := c.data(0); ok && r <= 1 {
		data = d
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferConcat(c *ictx) error {
	if len(c.n.Inputs) == 0 {
		return c.errf("Concat has no inputs")
	}
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", 0), r)
	if err != nil {
		return c.errf("%v", err)
	}
	out := slices.Clone(x.Shape)
	allData := true
	for i := range c.n.Inputs {
		v, err := c.need(i)
		if err != nil {
			return err
		}
		if len(v.Shape) != r {
			return c.errf("input %d has rank %d, input 0 rank %d", i, len(v.Shape), r)
		}
		if i > 0 {
			out[a] = out[a].Add(v.Shape[a])
		}
		for k := range v.Shape {
			if k != a {
				if err := c.eq(v.Shape[k], x.Shape[k], fmt.Sprintf("dim %d of input %d", k, i)); err != nil {
					return err
				}
			}
		}
		_, ok := c.data(i)
		allData = allData && ok
	}
	var data []Dim
	if allData && out.IsConst() {
		// Host data: for each index of the dims before axis, the inputs' blocks in turn.
		outer, err := NumElements(constVals(out[:a]))
		if err == nil && outer <= maxHostElems {
			for o := int64(0); o < outer; o++ {
				for i := range c.n.Inputs {
					d, _ := c.data(i)
					block := int64(len(d)) / max(outer, 1)
					data = append(data, d[o*block:(o+1)*block]...)
				}
			}
			if data == nil {
				data = []Dim{}
			}
		}
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferSplit(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", 0), r)
	if err != nil {
		return c.errf("%v", err)
	}
	nOut := len(c.n.Outputs)
	dim := x.Shape[a]
	var sizes []Dim
	switch {
	case c.in(1) != nil:
		sizes, err = c.needData(1, "split sizes")
		if err != nil {
			return err
		}
	case c.n.Attrs.Has("split"):
		sizes = constDims(c.n.Attrs.Ints("split"))
	case c.n.Attrs.Has("num_outputs"):
		k := c.n.Attrs.Int("num_outputs", 0)
		if k <= 0 || k != int64(nOut) {
			return c.errf("num_outputs %d does not match %d outputs", k, nOut)
		}
		chunk := dim.ceilDiv(Const(k))
		for i := 0; i < nOut-1; i++ {
			sizes = append(sizes, chunk)
		}
		sizes = append(sizes, dim.Sub(chunk.Mul(Const(k-1))))
	default:
		for i := 0; i < nOut; i++ {
			sizes = append(sizes, dim.exactDiv(Const(int64(nOut))))
		}
	}
	if len(sizes) != nOut {
		return c.errf("%d split sizes for %d outputs", len(sizes), nOut)
	}
	sum := Const(0)
	for _, s := range sizes {
		sum = sum.Add(s)
	}
	if err := c.eq(sum, dim, "split sizes add up to the split dim"); err != nil {
		return err
	}
	data, hasData := c.data(0)
	off := int64(0)
	for i, s := range sizes {
		out := slices.Clone(x.Shape)
		out[a] = s
		var part []Dim
		if sv, ok := s.Value(); ok && hasData && r == 1 && sv >= 0 && off+sv <= int64(len(data)) {
			part = data[off : off+sv]
			off += sv
		} else {
			hasData = false
		}
		c.outData(i, x.DType, out, part)
	}
	return nil
}

func inferSlice(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	starts, err := c.needData(1, "starts")
	if err != nil {
		return err
	}
	ends, err := c.needData(2, "ends")
	if err != nil {
		return err
	}
	if len(starts) != len(ends) {
		return c.errf("%d starts and %d ends", len(starts), len(ends))
	}
	k := len(starts)
	axes := make([]int, k)
	if c.in(3) != nil {
		d, err := c.needData(3, "axes")
		if err != nil {
			return err
		}
		vals, ok := dimsConst(d)
		if !ok || len(vals) != k {
			return c.errf("axes %v do not match %d starts", d, k)
		}
		for i, v := range vals {
			if axes[i], err = axis(v, r); err != nil {
				return c.errf("%v", err)
			}
		}
	} else {
		if k > r {
			return c.errf("%d starts for rank %d", k, r)
		}
		for i := range axes {
			axes[i] = i
		}
	}
	steps := constDims(slices.Repeat([]int64{1}, k))
	if c.in(4) != nil {
		steps, err = c.needData(4, "steps")
		if err != nil {
			return err
		}
		if len(steps) != k {
			return c.errf("%d steps for %d starts", len(steps), k)
		}
	}
	out := slices.Clone(x.Shape)
	seen := make([]bool, r)
	for i, a := range axes {
		if seen[a] {
			return c.errf("axis %d sliced twice", a)
		}
		seen[a] = true
		if v, ok := steps[i].Value(); ok && v == 0 {
			return c.errf("slice step is 0")
		}
		out[a] = sliceLenDim(x.Shape[a], starts[i], ends[i], steps[i])
	}
	var data []Dim
	if d, ok := c.data(0); ok && r == 1 && k == 1 && x.Shape.IsConst() {
		st, ok1 := starts[0].Value()
		en, ok2 := ends[0].Value()
		sp, ok3 := steps[0].Value()
		if ok1 && ok2 && ok3 {
			data = slice1D(d, st, en, sp)
		}
	}
	c.outData(0, x.DType, out, data)
	return nil
}

// slice1D slices host data like ONNX Slice on one axis.
func slice1D(d []Dim, start, end, step int64) []Dim {
	n := int64(len(d))
	cnt, err := sliceLen(n, start, end, step)
	if err != nil {
		return nil
	}
	norm := func(v int64) int64 {
		if v < 0 {
			if v < -n {
				return -1
			}
			return v + n
		}
		return v
	}
	s := norm(start)
	if step > 0 {
		s = max(0, min(s, n))
	} else {
		s = max(0, min(s, n-1))
	}
	out := make([]Dim, 0, cnt)
	for i := int64(0); i < cnt; i++ {
		out = append(out, d[s+i*step])
	}
	return out
}

func inferGather(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	idx, err := c.need(1)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", 0), r)
	if err != nil {
		return c.errf("%v", err)
	}
	out := append(append(slices.Clone(x.Shape[:a]), idx.Shape...), x.Shape[a+1:]...)
	var data []Dim
	d, ok1 := c.data(0)
	id, ok2 := c.data(1)
	if ok1 && ok2 && r == 1 {
		iv, ok := dimsConst(id)
		if ok {
			n := int64(len(d))
			for _, i := range iv {
				if i < 0 {
					i += n
				}
				if i < 0 || i >= n {
					return c.errf("index %d is out of range for %d elements", i, n)
				}
				data = append(data, d[i])
			}
			if data == nil {
				data = []Dim{}
			}
		}
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferGatherElements(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	idx, err := c.need(1)
	if err != nil {
		return err
	}
	if len(idx.Shape) != len(x.Shape) {
		return c.errf("indices have rank %d, data rank %d", len(idx.Shape), len(x.Shape))
	}
	c.out(0, x.DType, idx.Shape)
	return nil
}

func inferGatherND(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	idx, err := c.need(1)
	if err != nil {
		return err
	}
	b := int(c.n.Attrs.Int("batch_dims", 0))
	if len(idx.Shape) < 1 {
		return c.errf("indices must have rank >= 1")
	}
	last, ok := idx.Shape[len(idx.Shape)-1].Value()
	if !ok {
		return c.errf("the last dim of the indices (%s) must be a constant", idx.Shape[len(idx.Shape)-1])
	}
	if b < 0 || int64(b)+last > int64(len(x.Shape)) || b >= len(idx.Shape) {
		return c.errf("batch_dims %d and index depth %d do not fit data of rank %d", b, last, len(x.Shape))
	}
	out := append(slices.Clone(idx.Shape[:len(idx.Shape)-1]), x.Shape[int64(b)+last:]...)
	c.out(0, x.DType, out)
	return nil
}

func inferExpand(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	target, err := c.needData(1, "the target shape")
	if err != nil {
		return err
	}
	out := broadcast(x.Shape, Shape(target))
	var data []Dim
	if d, ok := c.data(0); ok {
		data = broadcastData(out, []Shape{x.Shape}, [][]Dim{d}, func(v []Dim) Dim { return v[0] })
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferTile(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	reps, err := c.needData(1, "repeats")
	if err != nil {
		return err
	}
	if len(reps) != len(x.Shape) {
		return c.errf("%d repeats for rank %d", len(reps), len(x.Shape))
	}
	out := make(Shape, len(reps))
	for i, r := range reps {
		out[i] = x.Shape[i].Mul(r)
	}
	c.out(0, x.DType, out)
	return nil
}

func inferConstantOfShape(c *ictx) error {
	shape, err := c.needData(0, "the shape")
	if err != nil {
		return err
	}
	for i, d := range shape {
		if err := c.require(Const(1).Sub(ltDim(d, Const(0))), fmt.Sprintf("dim %d (%s) is negative", i, d)); err != nil {
			return err
		}
	}
	dt, fill := Float32, Const(0)
	if t, ok := c.n.Attrs.Tensor("value"); ok {
		dt = t.DType
		if isIntType(dt) {
			vals, err := t.Int64s()
			if err != nil || len(vals) != 1 {
				return c.errf("value must hold one element")
			}
			fill = Const(vals[0])
		}
	}
	var data []Dim
	out := Shape(slices.Clone(shape))
	if out.IsConst() {
		if n, err := NumElements(constVals(out)); err == nil && n <= maxHostElems {
			data = make([]Dim, n)
			for i := range data {
				data[i] = fill
			}
		}
	}
	c.outData(0, dt, out, data)
	return nil
}

func inferConstant(c *ictx) error {
	a := c.n.Attrs
	var t *HostTensor
	switch {
	case a.Has("value"):
		var ok bool
		if t, ok = a.Tensor("value"); !ok {
			return c.errf("attribute value is not a tensor")
		}
	case a.Has("value_int"):
		t = int64Tensor(nil, a.Int("value_int", 0))
	case a.Has("value_ints"):
		vs := a.Ints("value_ints")
		t = int64Tensor([]int64{int64(len(vs))}, vs...)
	case a.Has("value_float"):
		t = float32Tensor(nil, a.Float("value_float", 0))
	case a.Has("value_floats"):
		vs := a.Floats("value_floats")
		t = float32Tensor([]int64{int64(len(vs))}, vs...)
	default:
		return c.errf("Constant has no supported value attribute (value, value_int(s), value_float(s))")
	}
	v := c.out(0, t.DType, ConstShape(t.Shape))
	if v == nil {
		return nil
	}
	c.m.consts[v.ID] = t
	if isIntType(t.DType) {
		if vals, err := t.Int64s(); err == nil && len(vals) <= maxHostElems {
			c.m.hostData[v.ID] = constDims(vals)
		}
	}
	return nil
}

func inferRange(c *ictx) error {
	start, err := c.needData(0, "start")
	if err != nil {
		return err
	}
	limit, err := c.needData(1, "limit")
	if err != nil {
		return err
	}
	delta, err := c.needData(2, "delta")
	if err != nil {
		return err
	}
	if len(start) != 1 || len(limit) != 1 || len(delta) != 1 {
		return c.errf("start, limit and delta must be scalars")
	}
	if v, ok := delta[0].Value(); ok && v == 0 {
		return c.errf("delta is 0")
	}
	n := MaxDim(limit[0].Sub(start[0]).ceilDiv(delta[0]), Const(0))
	var data []Dim
	if nv, ok := n.Value(); ok && nv <= maxHostElems {
		data = make([]Dim, nv)
		for i := range data {
			data[i] = start[0].Add(delta[0].Mul(Const(int64(i))))
		}
	}
	c.outData(0, c.n.Inputs[0].DType, Shape{n}, data)
	return nil
}

// ---- compute operators ----

func inferMatMul(c *ictx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	out, err := c.matmulShape(a.Shape, b.Shape)
	if err != nil {
		return err
	}
	c.out(0, a.DType, out)
	return nil
}

// matmulShape is numpy matmul's shape rule: 1-D operands are promoted and the promoted dim
// removed again; batch dims broadcast; the inner dims must agree.
func (c *ictx) matmulShape(a, b Shape) (Shape, error) {
	if len(a) == 0 || len(b) == 0 {
		return nil, c.errf("MatMul of a scalar")
	}
	aa, bb := a, b
	if len(a) == 1 {
		aa = Shape{Const(1), a[0]}
	}
	if len(b) == 1 {
		bb = Shape{b[0], Const(1)}
	}
	k1, k2 := aa[len(aa)-1], bb[len(bb)-2]
	if err := c.eq(k1, k2, "inner dims of MatMul"); err != nil {
		return nil, err
	}
	out := broadcast(aa[:len(aa)-2], bb[:len(bb)-2])
	if len(a) > 1 {
		out = append(out, aa[len(aa)-2])
	}
	if len(b) > 1 {
		out = append(out, bb[len(bb)-1])
	}
	return out, nil
}

func inferGemm(c *ictx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	b, err := c.need(1)
	if err != nil {
		return err
	}
	if len(a.Shape) != 2 || len(b.Shape) != 2 {
		return c.errf("Gemm needs 2-D operands, has %v and %v", a.Shape, b.Shape)
	}
	m, k := a.Shape[0], a.Shape[1]
	if c.n.Attrs.Int("transA", 0) != 0 {
		m, k = k, m
	}
	k2, n := b.Shape[0], b.Shape[1]
	if c.n.Attrs.Int("transB", 0) != 0 {
		k2, n = n, k2
	}
	if err := c.eq(k, k2, "inner dims of Gemm"); err != nil {
		return err
	}
	out := Shape{m, n}
	if cv := c.in(2); cv != nil {
		if len(cv.Shape) > 2 {
			return c.errf("Gemm bias of rank %d", len(cv.Shape))
		}
		if err := c.eq(broadcast(out, cv.Shape)[1], n, "Gemm bias broadcast"); err != nil {
			return err
		}
	}
	c.out(0, a.DType, out)
	return nil
}

func inferMatMulNBits(c *ictx) error {
	a, err := c.need(0)
	if err != nil {
		return err
	}
	if _, err := c.need(1); err != nil {
		return err
	}
	k, n := c.n.Attrs.Int("K", -1), c.n.Attrs.Int("N", -1)
	if k <= 0 || n <= 0 {
		return c.errf("MatMulNBits needs positive K and N attributes, has K=%d N=%d", k, n)
	}
	if len(a.Shape) == 0 {
		return c.errf("MatMulNBits of a scalar")
	}
	if err := c.eq(a.Shape[len(a.Shape)-1], Const(k), "last dim of A against attribute K"); err != nil {
		return err
	}
	out := append(slices.Clone(a.Shape[:len(a.Shape)-1]), Const(n))
	c.out(0, a.DType, out)
	return nil
}

func inferLayerNorm(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	a, err := axis(c.n.Attrs.Int("axis", -1), r)
	if err != nil {
		return c.errf("%v", err)
	}
	stash := DType(c.n.Attrs.Int("stash_type", int64(Float32)))
	c.out(0, x.DType, x.Shape)
	stat := slices.Clone(x.Shape)
	for i := a; i < r; i++ {
		stat[i] = Const(1)
	}
	if c.n.OpType == "SimplifiedLayerNormalization" {
		c.out(1, stash, stat)
		return nil
	}
	c.out(1, stash, stat)
	c.out(2, stash, stat)
	return nil
}

func inferSkipLayerNorm(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	skip, err := c.need(1)
	if err != nil {
		return err
	}
	if len(x.Shape) == 0 {
		return c.errf("input of rank 0")
	}
	if len(skip.Shape) > len(x.Shape) {
		return c.errf("skip %v has a higher rank than input %v", skip.Shape, x.Shape)
	}
	stat := slices.Clone(x.Shape)
	stat[len(stat)-1] = Const(1)
	c.out(0, x.DType, x.Shape)
	c.out(1, Float32, stat)
	c.out(2, Float32, stat)
	c.out(3, x.DType, x.Shape)
	return nil
}

func inferAttention(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	w, err := c.need(1)
	if err != nil {
		return err
	}
	if len(x.Shape) != 3 || len(w.Shape) != 2 {
		return c.errf("Attention needs input [batch, seq, hidden] and weights [hidden, 3*hidden], has %v and %v", x.Shape, w.Shape)
	}
	heads := c.n.Attrs.Int("num_heads", 0)
	if heads <= 0 {
		return c.errf("num_heads must be positive")
	}
	if err := c.eq(x.Shape[2], w.Shape[0], "input hidden size against weights"); err != nil {
		return err
	}
	var vHidden Dim
	if q := c.n.Attrs.Ints("qkv_hidden_sizes"); q != nil {
		if len(q) != 3 {
			return c.errf("qkv_hidden_sizes %v must have 3 entries", q)
		}
		vHidden = Const(q[2])
	} else {
		vHidden = w.Shape[1].exactDiv(Const(3))
	}
	c.out(0, x.DType, Shape{x.Shape[0], x.Shape[1], vHidden})
	if c.n.Output(1) != nil {
		total := x.Shape[1]
		if p := c.in(4); p != nil {
			if len(p.Shape) != 5 {
				return c.errf("past must have rank 5, has %v", p.Shape)
			}
			total = p.Shape[3].Add(total)
		}
		c.out(1, x.DType, Shape{Const(2), x.Shape[0], Const(heads), total, vHidden.exactDiv(Const(heads))})
	}
	return nil
}

func inferMHA(c *ictx) error {
	q, err := c.need(0)
	if err != nil {
		return err
	}
	heads := c.n.Attrs.Int("num_heads", 0)
	if heads <= 0 {
		return c.errf("num_heads must be positive")
	}
	if len(q.Shape) != 3 && len(q.Shape) != 5 {
		return c.errf("query must be [batch, seq, hidden] or packed [batch, seq, heads, 3, head], has %v", q.Shape)
	}
	b, s := q.Shape[0], q.Shape[1]
	var vHidden, kvLen Dim
	k, v := c.in(1), c.in(2)
	switch {
	case len(q.Shape) == 5:
		vHidden, kvLen = q.Shape[2].Mul(q.Shape[4]), s
	case k != nil && len(k.Shape) == 5:
		vHidden, kvLen = k.Shape[2].Mul(k.Shape[4]), k.Shape[1]
	case v != nil && len(v.Shape) == 3 && k != nil:
		vHidden, kvLen = v.Shape[2], k.Shape[1]
	case v != nil && len(v.Shape) == 4 && k != nil:
		vHidden, kvLen = v.Shape[1].Mul(v.Shape[3]), k.Shape[2]
	case k == nil:
		vHidden, kvLen = q.Shape[2], s
	default:
		return c.errf("unsupported key/value layout: key %v, value %v", shapeOf(k), shapeOf(v))
	}
	c.out(0, q.DType, Shape{b, s, vHidden})
	head := vHidden.exactDiv(Const(heads))
	total := kvLen
	if pk := c.in(6); pk != nil && len(pk.Shape) == 4 {
		total = pk.Shape[2].Add(kvLen)
	}
	c.out(1, q.DType, Shape{b, Const(heads), total, head})
	c.out(2, q.DType, Shape{b, Const(heads), total, head})
	return nil
}

func shapeOf(v *Value) Shape {
	if v == nil {
		return nil
	}
	return v.Shape
}

func inferGQA(c *ictx) error {
	q, err := c.need(0)
	if err != nil {
		return err
	}
	heads, kvHeads := c.n.Attrs.Int("num_heads", 0), c.n.Attrs.Int("kv_num_heads", 0)
	if heads <= 0 || kvHeads <= 0 {
		return c.errf("num_heads and kv_num_heads must be positive")
	}
	if len(q.Shape) != 3 {
		return c.errf("query must be [batch, seq, hidden], has %v", q.Shape)
	}
	b, s := q.Shape[0], q.Shape[1]
	var head Dim
	if c.in(1) == nil {
		head = q.Shape[2].exactDiv(Const(heads + 2*kvHeads))
	} else {
		head = q.Shape[2].exactDiv(Const(heads))
	}
	c.out(0, q.DType, Shape{b, s, head.Mul(Const(heads))})
	total := s
	if d, ok := c.data(6); ok && len(d) == 1 {
		total = d[0]
	}
	if pk := c.in(3); pk != nil && len(pk.Shape) == 4 {
		if _, ok := c.data(6); ok {
			total = MaxDim(pk.Shape[2], total)
		} else {
			total = pk.Shape[2].Add(s)
		}
	}
	c.out(1, q.DType, Shape{b, Const(kvHeads), total, head})
	c.out(2, q.DType, Shape{b, Const(kvHeads), total, head})
	return nil
}

func inferReduce(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	axes, ok, err := c.axesOf(1)
	if err != nil {
		return err
	}
	r := len(x.Shape)
	keep := c.n.Attrs.Int("keepdims", 1) != 0
	red := make([]bool, r)
	if !ok || len(axes) == 0 {
		if c.n.Attrs.Int("noop_with_empty_axes", 0) != 0 {
			d, _ := c.data(0)
			c.outData(0, x.DType, x.Shape, d)
			return nil
		}
		for i := range red {
			red[i] = true
		}
	}
	for _, a := range axes {
		i, err := axis(a, r)
		if err != nil {
			return c.errf("%v", err)
		}
		red[i] = true
	}
	out := Shape{}
	for i, d := range x.Shape {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, Const(1))
		}
	}
	var data []Dim
	if d, ok := c.data(0); ok && r == 1 && red[0] {
		switch c.n.OpType {
		case "ReduceProd":
			data = []Dim{Const(1)}
			for _, v := range d {
				data[0] = data[0].Mul(v)
			}
		case "ReduceSum":
			data = []Dim{Const(0)}
			for _, v := range d {
				data[0] = data[0].Add(v)
			}
		}
	}
	c.outData(0, x.DType, out, data)
	return nil
}

func inferArgReduce(c *ictx) error {
	x, err := c.need(0)
	if err != nil {
		return err
	}
	a, err := axis(c.n.Attrs.Int("axis", 0), len(x.Shape))
	if err != nil {
		return c.errf("%v", err)
	}
	out := slices.Clone(x.Shape)
	if c.n.Attrs.Int("keepdims", 1) != 0 {
		out[a] = Const(1)
	} else {
		out = append(out[:a], out[a+1:]...)
	}
	c.out(0, Int64, out)
	return nil
}
