package rewritetest

import (
	"math"

	"carve.dev/libs/graph"
)

// How Disentangled writes its relative position rel(i, j), query i and key j.
const (
	// LogBuckets is DeBERTa-v2's make_log_bucket_position of i - j: i - j within Span/2 of
	// the diagonal, log-bucketed beyond, in the ops torch.onnx's dynamo exporter writes.
	LogBuckets = iota
	// Plain is i - j.
	Plain
	// NotToeplitzSum is i + j, which does not depend on i - j alone.
	NotToeplitzSum
	// NotToeplitzScaled is i - 2j: positions scaled.
	NotToeplitzScaled
)

// Disentangled is DeBERTa-v2's disentangled self-attention in the batch·heads form, as
// torch.onnx's dynamo exporter writes it, over a symbolic sequence "seq":
//
//	scores = Q (K^T / s) + c2p + p2c                          [B*H, seq, seq]
//	c2p    = GatherElements(Q posK^T, Expand(clamp(rel(i, j) + Span, 0, 2 Span - 1))) / s
//	p2c    = Transpose(GatherElements(K posQ^T, Expand(clamp(-rel(i, j) + Span, ...)))) / s
//	y      = softmax(masked_fill(Reshape(scores, [B, H, seq, seq]), !(am_i am_j), min)) V
//
// with inputs q, k, v [B*H, seq, D], pos_k and pos_q [B*H, 2 Span, D] and, with Mask,
// attention_mask int64 [B, seq]; s = sqrt(D (1 + the terms present)). The output y is
// [B*H, seq, D].
type Disentangled struct {
	B, H, D  int
	Span     int // the tables' rows are 2 Span relative positions
	MaxPos   int // max_relative_positions, for LogBuckets
	C2P, P2C bool
	Mask     bool
	Rel      int // how rel(i, j) is written
}

// Spec builds the exported form.
func (d Disentangled) Spec() graph.Spec {
	b := &builder{s: graph.Spec{Opsets: map[string]int64{"": 18}}}
	bh := int64(d.B * d.H)
	seq := graph.Sym("seq")
	in := func(name string, dt graph.DType, shape ...graph.Dim) string {
		b.s.Inputs = append(b.s.Inputs, graph.ValueSpec{Name: name, DType: dt, Shape: shape})
		return name
	}
	c := graph.Const
	q := in("q", graph.Float32, c(bh), seq, c(int64(d.D)))
	k := in("k", graph.Float32, c(bh), seq, c(int64(d.D)))
	v := in("v", graph.Float32, c(bh), seq, c(int64(d.D)))
	terms := 1
	for _, on := range []bool{d.C2P, d.P2C} {
		if on {
			terms++
		}
	}
	s := b.scalar(float32(math.Sqrt(float64(d.D * terms))))
	t021 := []graph.Attribute{ints("perm", 0, 2, 1)}
	scores := b.op("MatMul", nil, q, b.op("Div", nil, b.op("Transpose", t021, k), s))

	// the relative positions [seq, seq]
	seq1 := b.op("Shape", []graph.Attribute{{Name: "start", Kind: graph.AttrInt, Int: 1}, {Name: "end", Kind: graph.AttrInt, Int: 2}}, q)
	pos := b.op("Range", nil, b.scalarInt(0), b.op("Squeeze", nil, seq1, b.ints(0)), b.scalarInt(1))
	pi, pj := b.op("Unsqueeze", nil, pos, b.ints(1)), b.op("Unsqueeze", nil, pos, b.ints(0))
	var rel string
	switch d.Rel {
	case LogBuckets, Plain:
		rel = b.op("Sub", nil, pi, pj)
	case NotToeplitzSum:
		rel = b.op("Add", nil, pi, pj)
	case NotToeplitzScaled:
		rel = b.op("Sub", nil, pi, b.op("Mul", nil, pj, b.scalarInt(2)))
	}
	if d.Rel == LogBuckets {
		rel = d.logBuckets(b, rel)
	}
	rel = b.op("Unsqueeze", nil, rel, b.ints(0)) // [1, seq, seq]
	lo, hi := b.scalarInt(0), b.scalarInt(int64(2*d.Span-1))
	expanded := b.op("Concat", []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: 0}}, b.ints(bh), seq1, seq1)
	gather := func(table, r string) string {
		idx := b.op("Clip", nil, b.op("Add", nil, r, b.scalarInt(int64(d.Span))), lo, hi)
		return b.op("GatherElements", []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: -1}}, table, b.op("Expand", nil, idx, expanded))
	}
	var bias []string
	if d.C2P {
		posK := in("pos_k", graph.Float32, c(bh), c(int64(2*d.Span)), c(int64(d.D)))
		att := b.op("MatMul", nil, q, b.op("Transpose", t021, posK))
		bias = append(bias, b.op("Div", nil, gather(att, rel), s))
	}
	if d.P2C {
		posQ := in("pos_q", graph.Float32, c(bh), c(int64(2*d.Span)), c(int64(d.D)))
		att := b.op("MatMul", nil, k, b.op("Transpose", t021, posQ))
		g := gather(att, b.op("Neg", nil, rel))
		bias = append(bias, b.op("Div", nil, b.op("Transpose", t021, g), s))
	}
	if len(bias) == 2 {
		bias = []string{b.op("Add", nil, bias[0], bias[1])}
	}
	if len(bias) == 1 {
		scores = b.op("Add", nil, scores, bias[0])
	}
	axis0 := []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: 0}}
	scores = b.op("Reshape", nil, scores, b.op("Concat", axis0, b.ints(-1, int64(d.H)), seq1, seq1))
	if d.Mask {
		am := in("attention_mask", graph.Int64, c(int64(d.B)), seq)
		keys, queries := b.op("Unsqueeze", nil, am, b.ints(1, 2)), b.op("Unsqueeze", nil, am, b.ints(1, 3))
		keep := b.op("Cast", []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Bool)}}, b.op("Mul", nil, keys, queries))
		scores = b.op("Where", nil, b.op("Not", nil, keep), b.scalar(-math.MaxFloat32), scores)
	}
	p := b.op("Softmax", []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: -1}}, scores)
	p = b.op("Reshape", nil, p, b.op("Concat", axis0, b.ints(-1), seq1, seq1))
	b.s.Nodes = append(b.s.Nodes, graph.NodeSpec{Name: "attention_out", OpType: "MatMul", Inputs: []string{p, v}, Outputs: []string{Output}})
	b.s.Outputs = []string{Output}
	return b.s
}

// logBuckets writes make_log_bucket_position(rel, Span, MaxPos) as the dynamo exporter does.
func (d Disentangled) logBuckets(b *builder, rel string) string {
	f32 := []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Float32)}}
	i64 := []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Int64)}}
	mid := int64(d.Span / 2)
	sign := b.op("Sign", nil, rel)
	near := b.op("And", nil, b.op("Less", nil, rel, b.scalarInt(mid)), b.op("Greater", nil, rel, b.scalarInt(-mid)))
	abs := b.op("Where", nil, near, b.scalarInt(mid-1), b.op("Abs", nil, rel))
	logPos := b.op("Div", nil, b.op("Log", nil, b.op("Div", nil, b.op("Cast", f32, abs), b.scalar(float32(mid)))),
		b.scalar(float32(math.Log(float64(d.MaxPos-1)/float64(mid)))))
	logPos = b.op("Add", nil, b.op("Ceil", nil, b.op("Mul", nil, logPos, b.scalar(float32(mid-1)))), b.scalar(float32(mid)))
	bucket := b.op("Where", nil, b.op("LessOrEqual", nil, abs, b.scalarInt(mid)), b.op("Cast", f32, rel),
		b.op("Mul", nil, logPos, b.op("Cast", f32, sign)))
	return b.op("Cast", i64, bucket)
}

// Model builds the exported form.
func (d Disentangled) Model() (*graph.Model, error) { return graph.Build(d.Spec()) }
