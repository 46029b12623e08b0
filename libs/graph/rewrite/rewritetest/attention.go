// Package rewritetest builds attention subgraphs in the forms exporters write, with random
// geometry and options, for the tests of carve.dev/libs/graph/rewrite and of the kernels that
// run its fused graphs. Everything here is deterministic given its inputs.
package rewritetest

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"carve.dev/libs/graph"
)

// K^T forms.
const (
	KTranspose = iota // Transpose(K, [0,1,3,2]) of K [B, Hkv, T, D]
	KFromBSHD         // Transpose(K, [0,2,3,1]) of K [B, T, Hkv, D] (GPT-2, BERT)
	KReshaped         // Reshape(Transpose(Reshape(K, [B*H, T, D]), [0,2,1]), [B, H, D, T]) (PyTorch's SDPA)
	kForms
)

// Where the scale is applied.
const (
	ScaleScores = iota // Mul(scores, s)
	DivScores          // Div(scores, 1/s)
	ScaleQK            // Mul(Q, sqrt(s)) and Mul(K^T, sqrt(s)) (PyTorch's SDPA)
	NoScale            // s is 1
	// ScaleFromShape is ScaleQK with s = 1/sqrt(D) computed on the host from Q's Shape, as
	// TorchScript's export writes it: Sqrt(Cast(Div(1, Sqrt(Cast(Slice(Shape(Q), -1:)))))).
	ScaleFromShape
	scaleForms
)

// Masks.
const (
	NoMask    = iota
	FloatMask // a float input [B, 1, S, T] added to the scores
	InfMask   // Where(padding [& causal], 0, -inf) from an int64 attention_mask [B, T]
	MinMask   // the same with the float32 minimum (HuggingFace's eager masks)
	maskForms
)

// The batch·heads forms (Attention.Heads): where the scores and probabilities are
// [B*Hq, S, T] rather than [B, Hq, S, T], between Reshapes that split or merge the heads.
const (
	Heads4D = iota // [B, Hq, S, T] throughout
	// HeadsBloom is Bloom's baddbmm and bmm: Q, K^T and V merged to 3-D, the scores (scaled,
	// capped, with the KeyBias) split to 4-D for the mask and the softmax, the probabilities
	// merged back for a 3-D product with V, whose output is split to 4-D.
	HeadsBloom
	// HeadsProbs keeps the scores 4-D; the probabilities are merged to 3-D for a product
	// with a 3-D V, and the output y is left [B*Hq, S, Dv].
	HeadsProbs
	// HeadsAll is 3-D from the scores to the product, the output split to 4-D; a mask is
	// expanded over the heads and merged to [B*Hq, S, T] to be added.
	HeadsAll
	headsForms
)

// Attention is one attention subgraph: softmax(Q K^T * scale + bias + mask) V.
type Attention struct {
	B, Hq, Hkv, S, T, D, Dv int
	KForm, ScaleForm, Mask  int
	Causal                  bool // the mask has a causal part (InfMask and MinMask)
	// Window, when positive, masks the keys Window or more positions from the query (InfMask
	// and MinMask): causally a sliding window of Window keys (Mistral's), else a band of
	// Window-1 keys on each side (ModernBERT's local attention).
	Window int
	Guard  bool // Where(IsNaN(p), 0, p) after the softmax
	Scale  float32
	// Softcap, when positive, caps the scaled scores at Softcap*tanh(x/Softcap) before the mask,
	// as Gemma2's eager attention writes it.
	Softcap float32
	// EmptyRows lets the attention_mask mask out every key of some rows (needs Guard or
	// MinMask: without the guard the exported graph yields NaN there).
	EmptyRows bool
	Heads     int // the batch·heads form
	// KeyBias adds a float input bias [B*Hq, 1, T] (3-D scores) or [B, Hq, 1, T] to the
	// scores before the mask: a per-key bias for each head, as Bloom's ALiBi is.
	KeyBias bool
}

// Random returns a random case, small enough to run quickly.
func Random(r *rand.Rand) Attention {
	a := Attention{B: 1 + r.IntN(3), Hkv: 1 + r.IntN(3), S: 1 + r.IntN(9), D: 1 + r.IntN(9), Dv: 1 + r.IntN(9),
		KForm: r.IntN(kForms), ScaleForm: r.IntN(scaleForms), Mask: r.IntN(maskForms), Guard: r.IntN(2) == 0,
		Scale: float32(0.05 + r.Float64())}
	a.Hq = a.Hkv * (1 + r.IntN(3))
	a.T = a.S
	if r.IntN(3) == 0 {
		a.T = 1 + r.IntN(12)
	}
	a.Causal = a.Mask >= InfMask && r.IntN(2) == 0
	if a.Mask >= InfMask && r.IntN(3) == 0 {
		a.Window = 1 + r.IntN(6)
	}
	a.EmptyRows = (a.Guard || a.Mask == MinMask) && r.IntN(2) == 0
	if r.IntN(2) == 0 {
		a.Heads = 1 + r.IntN(headsForms-1)
	}
	a.KeyBias = r.IntN(3) == 0
	return a.Normalize()
}

// Normalize makes the case consistent: positive sizes, Hq a multiple of Hkv, forms in range,
// no grouped heads with KFromBSHD (exporters repeat heads after the transpose).
func (a Attention) Normalize() Attention {
	pos := func(x, hi int) int {
		if x < 1 {
			x = -x + 1
		}
		return (x-1)%hi + 1
	}
	a.B, a.Hkv, a.S, a.T, a.D, a.Dv = pos(a.B, 4), pos(a.Hkv, 4), pos(a.S, 16), pos(a.T, 16), pos(a.D, 16), pos(a.Dv, 16)
	a.Hq = a.Hkv * pos(a.Hq/max(a.Hkv, 1), 4)
	a.KForm, a.ScaleForm, a.Mask = ((a.KForm%kForms)+kForms)%kForms, ((a.ScaleForm%scaleForms)+scaleForms)%scaleForms, ((a.Mask%maskForms)+maskForms)%maskForms
	a.Heads = ((a.Heads % headsForms) + headsForms) % headsForms
	if a.KForm == KFromBSHD {
		a.Hq = a.Hkv
	}
	if a.Mask < InfMask {
		a.Causal, a.Window = false, 0
	}
	a.Window = max(a.Window, 0)
	if !(a.Guard || a.Mask == MinMask) {
		a.EmptyRows = false
	}
	if a.Scale == 0 || math.IsNaN(float64(a.Scale)) || math.IsInf(float64(a.Scale), 0) {
		a.Scale = 0.25
	}
	if a.Scale < 0 {
		a.Scale = -a.Scale
	}
	switch a.ScaleForm {
	case NoScale:
		a.Scale = 1
	case ScaleFromShape:
		a.Scale = float32(1 / math.Sqrt(float64(a.D)))
	}
	return a
}

func (a Attention) String() string {
	return fmt.Sprintf("B%d Hq%d Hkv%d S%d T%d D%d Dv%d k%d scale%d(%g) mask%d causal=%v window=%d guard=%v empty=%v softcap=%g heads%d bias=%v",
		a.B, a.Hq, a.Hkv, a.S, a.T, a.D, a.Dv, a.KForm, a.ScaleForm, a.Scale, a.Mask, a.Causal, a.Window, a.Guard, a.EmptyRows, a.Softcap, a.Heads, a.KeyBias)
}

// builder accumulates a Spec.
type builder struct {
	s graph.Spec
	n int
}

func (b *builder) init(dt graph.DType, shape []int64, data []byte) string {
	name := fmt.Sprintf("c%d", len(b.s.Initializers))
	t, err := graph.NewTensor(name, dt, shape, data)
	if err != nil {
		panic(err) // sizes are right by construction
	}
	b.s.Initializers = append(b.s.Initializers, t)
	return name
}

func (b *builder) ints(vals ...int64) string {
	var d []byte
	for _, v := range vals {
		d = binary.LittleEndian.AppendUint64(d, uint64(v))
	}
	return b.init(graph.Int64, []int64{int64(len(vals))}, d)
}

func (b *builder) scalarInt(v int64) string {
	return b.init(graph.Int64, nil, binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

func (b *builder) scalar(v float32) string {
	return b.init(graph.Float32, nil, binary.LittleEndian.AppendUint32(nil, math.Float32bits(v)))
}

func (b *builder) op(op string, attrs []graph.Attribute, ins ...string) string {
	b.n++
	out := fmt.Sprintf("v%d_%s", b.n, op)
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: fmt.Sprintf("n%d_%s", b.n, op), OpType: op, Inputs: ins, Outputs: []string{out}, Attrs: graph.NewAttributes(attrs...)})
	return out
}

func ints(name string, v ...int64) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrInts, Ints: v}
}

func (b *builder) input(name string, dt graph.DType, dims ...int) string {
	s := make(graph.Shape, len(dims))
	for i, d := range dims {
		s[i] = graph.Const(int64(d))
	}
	b.s.Inputs = append(b.s.Inputs, graph.ValueSpec{Name: name, DType: dt, Shape: s})
	return name
}

// Output is the name of the attention's output value.
const Output = "y"

// Spec builds the exported form: inputs q [B, Hq, S, D], k (by KForm), v [B, Hkv, T, Dv],
// mask [B, 1, S, T] (FloatMask) or attention_mask int64 [B, T] (InfMask, MinMask), and bias
// (KeyBias); output y [B, Hq, S, Dv] ([B*Hq, S, Dv] with HeadsProbs).
func (a Attention) Spec() graph.Spec {
	b := &builder{s: graph.Spec{Opsets: map[string]int64{"": 18}}}
	bh := int64(a.B * a.Hq)
	merge := func(x string, rows, cols int) string {
		return b.op("Reshape", nil, x, b.ints(-1, int64(rows), int64(cols)))
	}
	split := func(x string, rows, cols int) string {
		return b.op("Reshape", nil, x, b.ints(int64(a.B), int64(a.Hq), int64(rows), int64(cols)))
	}
	q := b.input("q", graph.Float32, a.B, a.Hq, a.S, a.D)
	var k string
	if a.KForm == KFromBSHD {
		k = b.input("k", graph.Float32, a.B, a.T, a.Hkv, a.D)
	} else {
		k = a.repeat(b, b.input("k", graph.Float32, a.B, a.Hkv, a.T, a.D), a.D)
	}
	v := a.repeat(b, b.input("v", graph.Float32, a.B, a.Hkv, a.T, a.Dv), a.Dv)
	scores3 := a.Heads == HeadsBloom || a.Heads == HeadsAll
	var kt string
	switch {
	case scores3 && a.KForm == KTranspose: // Bloom's: K merged, then transposed
		kt = b.op("Transpose", []graph.Attribute{ints("perm", 0, 2, 1)}, merge(k, a.T, a.D))
	case a.KForm == KTranspose:
		kt = b.op("Transpose", []graph.Attribute{ints("perm", 0, 1, 3, 2)}, k)
	case a.KForm == KFromBSHD:
		kt = b.op("Transpose", []graph.Attribute{ints("perm", 0, 2, 3, 1)}, k)
	case a.KForm == KReshaped:
		r := b.op("Reshape", nil, k, b.ints(-1, int64(a.T), int64(a.D)))
		t := b.op("Transpose", []graph.Attribute{ints("perm", 0, 2, 1)}, r)
		kt = b.op("Reshape", nil, t, b.ints(int64(a.B), int64(a.Hq), int64(a.D), int64(a.T)))
	}
	if scores3 {
		q = merge(q, a.S, a.D)
		if a.KForm != KTranspose {
			kt = b.op("Reshape", nil, kt, b.ints(bh, int64(a.D), int64(a.T)))
		}
	}
	var s string
	switch a.ScaleForm {
	case ScaleScores:
		s = b.op("Mul", nil, b.op("MatMul", nil, q, kt), b.scalar(a.Scale))
	case DivScores:
		s = b.op("Div", nil, b.op("MatMul", nil, q, kt), b.scalar(1/a.Scale))
	case ScaleQK:
		r := b.scalar(float32(math.Sqrt(float64(a.Scale))))
		s = b.op("MatMul", nil, b.op("Mul", nil, q, r), b.op("Mul", nil, kt, r))
	case NoScale:
		s = b.op("MatMul", nil, q, kt)
	case ScaleFromShape:
		f32 := []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Float32)}}
		d := b.op("Cast", f32, b.op("Slice", nil, b.op("Shape", nil, q), b.ints(-1), b.ints(math.MaxInt64)))
		inv := b.op("Cast", f32, b.op("Div", nil, b.scalar(1), b.op("Sqrt", nil, d)))
		s = b.op("MatMul", nil, b.op("Mul", nil, q, b.op("Sqrt", nil, inv)), b.op("Mul", nil, kt, b.op("Sqrt", nil, inv)))
	}
	if a.Softcap > 0 {
		s = b.op("Mul", nil, b.op("Tanh", nil, b.op("Div", nil, s, b.scalar(a.Softcap))), b.scalar(a.Softcap))
	}
	if a.KeyBias {
		if scores3 {
			s = b.op("Add", nil, s, b.input("bias", graph.Float32, a.B*a.Hq, 1, a.T))
		} else {
			s = b.op("Add", nil, s, b.input("bias", graph.Float32, a.B, a.Hq, 1, a.T))
		}
	}
	if a.Heads == HeadsBloom {
		s = split(s, a.S, a.T)
	}
	var mask string
	switch a.Mask {
	case FloatMask:
		mask = b.input("mask", graph.Float32, a.B, 1, a.S, a.T)
	case InfMask, MinMask:
		mask = a.mask(b)
	}
	if mask != "" && a.Heads == HeadsAll {
		mask = merge(b.op("Expand", nil, mask, b.ints(int64(a.B), int64(a.Hq), int64(a.S), int64(a.T))), a.S, a.T)
	}
	if mask != "" {
		s = b.op("Add", nil, s, mask)
	}
	p := b.op("Softmax", []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: -1}}, s)
	if a.Guard {
		p = b.op("Where", nil, b.op("IsNaN", nil, p), b.scalar(0), p)
	}
	if a.Heads == HeadsBloom || a.Heads == HeadsProbs {
		p = merge(p, a.S, a.T)
	}
	if a.Heads != Heads4D {
		v = merge(v, a.T, a.Dv)
	}
	y := Output
	if a.Heads == HeadsBloom || a.Heads == HeadsAll {
		y = "y3"
	}
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "attention_out", OpType: "MatMul", Inputs: []string{p, v}, Outputs: []string{y}})
	if y != Output {
		b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "attention_out_heads", OpType: "Reshape", Inputs: []string{y, b.ints(int64(a.B), int64(a.Hq), int64(a.S), int64(a.Dv))}, Outputs: []string{Output}})
	}
	b.s.Outputs = []string{Output}
	return b.s
}

// repeat repeats x's Hkv heads to Hq the exporter's way, when they differ.
func (a Attention) repeat(b *builder, x string, d int) string {
	if a.Hq == a.Hkv {
		return x
	}
	r := int64(a.Hq / a.Hkv)
	u := b.op("Unsqueeze", nil, x, b.ints(2))
	e := b.op("Expand", nil, u, b.ints(int64(a.B), int64(a.Hkv), r, int64(a.T), int64(d)))
	return b.op("Reshape", nil, e, b.ints(int64(a.B), int64(a.Hq), int64(a.T), int64(d)))
}

// mask builds Where(keep, 0, fill) with keep = padding [B, 1, 1, T] [& causal [1, 1, S, T]]
// [& window |i - j| < Window].
func (a Attention) mask(b *builder) string {
	am := b.input("attention_mask", graph.Int64, a.B, a.T)
	pad := b.op("Cast", []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Bool)}}, am)
	pad = b.op("Unsqueeze", nil, pad, b.ints(1, 2)) // [B, 1, 1, T]
	keep := pad
	if a.Causal || a.Window > 0 {
		zero, one := b.scalarInt(0), b.scalarInt(1)
		kIdx := b.op("Unsqueeze", nil, b.op("Range", nil, zero, b.scalarInt(int64(a.T)), one), b.ints(0, 1, 2)) // [1, 1, 1, T]
		qIdx := b.op("Unsqueeze", nil, b.op("Range", nil, zero, b.scalarInt(int64(a.S)), one), b.ints(0, 1, 3)) // [1, 1, S, 1]
		if a.Causal {
			causal := b.op("LessOrEqual", nil, kIdx, qIdx)
			yes := b.init(graph.Bool, nil, []byte{1})
			keep = b.op("And", nil, b.op("And", nil, yes, causal), keep)
		}
		if a.Window > 0 {
			near := b.op("Less", nil, b.op("Abs", nil, b.op("Sub", nil, qIdx, kIdx)), b.scalarInt(int64(a.Window)))
			keep = b.op("And", nil, near, keep)
		}
	}
	fill := float32(math.Inf(-1))
	if a.Mask == MinMask {
		fill = -math.MaxFloat32
	}
	return b.op("Where", nil, keep, b.scalar(0), b.scalar(fill))
}

// Model builds the exported form.
func (a Attention) Model() (*graph.Model, error) { return graph.Build(a.Spec()) }

// AttentionMask returns data for the attention_mask input: random ones and zeros, key 0 (with
// a Window every Window-th key, one in any Window in a row) kept in every batch unless
// EmptyRows (then a batch may keep no key at all).
func (a Attention) AttentionMask(r *rand.Rand) []int64 {
	m := make([]int64, a.B*a.T)
	for i := range m {
		if r.IntN(3) > 0 {
			m[i] = 1
		}
	}
	for bi := 0; bi < a.B; bi++ {
		switch {
		case !a.EmptyRows:
			step := a.T
			if a.Window > 0 {
				step = a.Window
			}
			for j := 0; j < a.T; j += step {
				m[bi*a.T+j] = 1
			}
		case bi == 0:
			for j := 0; j < a.T; j++ {
				m[j] = 0
			}
		}
	}
	return m
}
