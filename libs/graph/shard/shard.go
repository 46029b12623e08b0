// Package shard splits a fused decoder graph for one rank of a Megatron tensor-parallel split
// over N ranks, at load: the graph each rank runs, with its share of the weights and the
// collectives (dev.carve AllReduce and AllGather) that make the ranks' outputs the unsharded
// model's.
//
// The rules, applied to the canonical fused graph of carve.dev/libs/graph/rewrite (and of
// carve.dev/libs/graph/arch, whose --tp plans follow the same rules, SplitHeads):
//
//   - The query, key and value projections of an attention (a MatMul or Gemm of a 2-D weight,
//     found from the Attention back through views, rotary and elementwise ops) are
//     column-parallel: the rank keeps the columns of its heads (SplitHeads: heads/N query
//     heads, max(1, kv/N) KV heads, replicated when kv < N), and of a column bias. So is a
//     projection, or carve's GatedMatMul, whose input every rank holds whole and whose every
//     use reaches another projection through elementwise ops and views (the MLP's gate and up,
//     its fc1), with an even share of the columns. Other projections (a MoE's router) are whole
//     on every rank.
//   - A packed projection, [q | k | v] columns side by side (phi3's qkv_proj, a packed
//     GroupQueryAttention's input) or an MLP's gate and up taken apart by slices or a Split
//     (phi3's gate_up_proj), keeps the rank's part of each section, side by side; the slices,
//     splits and views that read its product are rewritten to the rank's columns.
//   - What a column-parallel projection computes stays split through the ops between it and
//     the next projection (views, transposes, rotary, Attention, elementwise ops, reductions
//     over other axes): each value's split is tracked per axis as the rank's [start,
//     start+count) of it, shapes that views write out as constants are rewritten for the
//     rank, and attributes that count heads are divided.
//   - A projection reading a split value over its contracting axis is row-parallel (o_proj,
//     down_proj): the rank keeps those rows, its product is a partial sum, and an AllReduce
//     sums the ranks' partial sums; a row-parallel bias is added once, after it.
//   - The embedding (a Gather of a 2-D weight by token ids) is vocabulary-parallel: the rank
//     keeps vocab/N rows, an id outside them gives a zero row, and an AllReduce sums the rows.
//   - The LM head (a projection whose product reaches a graph output through elementwise ops
//     and views alone) is split by vocabulary columns, and an AllGather concatenates the
//     ranks' logits, so every rank ends with the whole logits.
//   - A KV cache the graph takes as inputs (past keys and values, read by the attention or
//     concatenated with its keys and values) is split by the rank's KV heads, and so are the
//     present keys and values it outputs: the rank's state (Rank.StateInputs, StateOutputs),
//     which the caller keeps per rank.
//   - Norms and everything between the collectives and the column projections run whole on
//     every rank.
//
// Invariants, checked by Split itself before it returns: every value of the rank's graph has
// the shape of the unsharded value with each split axis cut to the rank's count (shape
// inference of the built graph against the tracked splits, at a probe binding), and no graph
// output but the KV state is split. A graph the rules do not cover is an *UnsupportedError
// naming the node; a count the ranks do not divide is a *DivisibilityError naming it.
package shard

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"carve.dev/libs/graph"
)

// Options say how a rank's graph is made.
type Options struct {
	// Group names the communicator of the rank's collectives (their attribute group); the
	// backend's collective kernels find it by this name.
	Group string
}

// Rank describes what Split gave one rank.
type Rank struct {
	Rank, Ranks int
	// Heads is the rank's share of the first attention's heads (all of a decoder's layers
	// have the same).
	Heads Heads
	// Attentions, Column and Row count the attentions and projections split.
	Attentions, Column, Row int
	// Vocab is the rank's share of the embedding's rows; 0 without a vocabulary-parallel
	// embedding.
	Vocab int64
	// AllReduces and AllGathers count the collectives of one forward pass.
	AllReduces, AllGathers int
	// StateInputs and StateOutputs are the graph inputs and outputs holding KV state (past and
	// present keys and values), split by the rank's KV heads, in the model's input and output
	// order: the caller keeps them per rank. Every other input and output is whole on every
	// rank.
	StateInputs, StateOutputs []string
	// WeightBytes is the bytes of the rank's weights (initializers).
	WeightBytes int64
}

// span is a rank's part [start, start+count) of one axis; count 0 means the whole axis.
type span struct{ start, count int64 }

func (s span) split() bool { return s.count != 0 }

// section is one part [lo, hi) of a packed projection's columns (Q, K and V side by side, or an
// MLP's gate and up) and the rank's part of it, local, within [lo, hi). The rank's columns are
// its parts of the sections, in order.
type section struct {
	lo, hi int64
	local  span
}

// Split returns the graph of rank of ranks for the fused model m, and what it holds. m is not
// modified; the result shares m's weights that no rule splits. ranks 1 returns m itself.
func Split(m *graph.Model, rank, ranks int, o Options) (*graph.Model, *Rank, error) {
	if ranks < 1 || rank < 0 || rank >= ranks {
		return nil, nil, &RankError{Rank: rank, Ranks: ranks}
	}
	if o.Group == "" {
		o.Group = "tp"
	}
	s := &splitter{m: m, rank: rank, ranks: ranks, group: o.Group, info: &Rank{Rank: rank, Ranks: ranks},
		probe: map[string]int64{}, col: map[*graph.Node]span{}, sections: map[*graph.Node][]section{},
		packedOut: map[*graph.Value][]section{}, embed: map[*graph.Node]bool{}, head: map[*graph.Node]bool{},
		split: map[*graph.Value][]span{}, state: map[*graph.Value]bool{}, used: map[string]bool{},
		sliced: map[string]string{}, edited: map[string]string{}}
	if ranks == 1 {
		s.info.WeightBytes = weightBytes(m)
		return m, s.info, nil
	}
	// The probe binding gives each named dim a distinct prime far from any constant dim, so
	// that grouping a view's axes by their products never confuses a named dim with a constant.
	primes := []int64{1009, 1013, 1019, 1021, 1031, 1033, 1039, 1049, 1051, 1061, 1063, 1069}
	for i, d := range m.DimNames {
		s.probe[d] = primes[i%len(primes)] + int64(i/len(primes))*1000
	}
	for _, v := range m.Values {
		s.used[v.Name] = true
	}
	for _, n := range m.Nodes {
		s.used[n.Name] = true
	}
	if err := s.analyse(); err != nil {
		return nil, nil, err
	}
	for _, n := range m.Nodes {
		if err := s.node(n); err != nil {
			return nil, nil, err
		}
	}
	s.info.StateInputs = s.info.StateInputs[:0]
	for _, v := range m.Inputs {
		if s.state[v] {
			s.info.StateInputs = append(s.info.StateInputs, v.Name)
		}
	}
	for _, v := range m.Outputs {
		switch {
		case s.split[v] == nil:
		case s.state[v]:
			s.info.StateOutputs = append(s.info.StateOutputs, v.Name)
		default:
			return nil, nil, &UnsupportedError{Problem: fmt.Sprintf("graph output %q would be split among the ranks (an output with no collective before it)", v.Name)}
		}
	}
	spec := s.spec()
	out, err := graph.Build(spec)
	if err != nil {
		return nil, nil, fmt.Errorf("shard: rank %d of %d: the split graph is invalid: %w", rank, ranks, err)
	}
	if err := s.verify(out); err != nil {
		return nil, nil, err
	}
	s.info.WeightBytes = weightBytes(out)
	return out, s.info, nil
}

func weightBytes(m *graph.Model) int64 {
	var n int64
	for _, v := range m.Initializers {
		n += v.Init.Size
	}
	return n
}

type splitter struct {
	m           *graph.Model
	rank, ranks int
	group       string
	info        *Rank
	probe       map[string]int64

	col map[*graph.Node]span // the attention projections' output columns, by SplitHeads
	// sections are the packed projections' sections (by node, found by analyse or at the
	// projection) and the values holding them (the packed products, which only slices of one
	// section each and a packed GroupQueryAttention read).
	sections  map[*graph.Node][]section
	packedOut map[*graph.Value][]section
	embed     map[*graph.Node]bool    // vocabulary-parallel embeddings
	head      map[*graph.Node]bool    // LM heads
	split     map[*graph.Value][]span // the values split among the ranks, by axis
	state     map[*graph.Value]bool   // KV state: split graph inputs and what holds them

	nodes  []graph.NodeSpec
	inits  []*graph.Tensor
	used   map[string]bool   // names of values and nodes, so that new ones are fresh
	sliced map[string]string // slice key -> the sliced weight's name
	edited map[string]string // edited shape key -> its value's name
}

// fresh returns a name beginning with base that nothing in the graph has.
func (s *splitter) fresh(base string) string {
	name := base
	for i := 2; s.used[name]; i++ {
		name = fmt.Sprintf("%s.%d", base, i)
	}
	s.used[name] = true
	return name
}

// emit adds a node to the rank's graph: a copy of one of m's, under its name, or a new one,
// named by fresh.
func (s *splitter) emit(n graph.NodeSpec) { s.nodes = append(s.nodes, n) }

// full evaluates v's shape at the probe binding; sym says which dims are named.
func (s *splitter) full(v *graph.Value) ([]int64, []bool, error) {
	out, sym := make([]int64, len(v.Shape)), make([]bool, len(v.Shape))
	for i, d := range v.Shape {
		x, err := d.Eval(s.probe)
		if err != nil {
			return nil, nil, fmt.Errorf("shard: value %q dim %d (%s): %w", v.Name, i, d, err)
		}
		out[i], sym[i] = x, !d.IsConst()
	}
	return out, sym, nil
}

func names(vs []*graph.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		if v != nil {
			out[i] = v.Name
		}
	}
	return out
}

func copyNode(n *graph.Node) graph.NodeSpec {
	return graph.NodeSpec{Name: n.Name, OpType: n.OpType, Domain: n.Domain, Inputs: names(n.Inputs), Outputs: names(n.Outputs), Attrs: n.Attrs}
}

func unsupported(n *graph.Node, format string, args ...any) error {
	return &UnsupportedError{Node: n.Name, Op: opLabel(n), Problem: fmt.Sprintf(format, args...)}
}

func opLabel(n *graph.Node) string {
	if n.Domain == "" {
		return n.OpType
	}
	return n.Domain + "." + n.OpType
}

// spec assembles the rank's graph: m's inputs and outputs, the rewritten nodes, and the
// weights they read (an unsplit weight shared with m, a split one the rank's own).
func (s *splitter) spec() graph.Spec {
	sp := s.m.Spec()
	sp.Nodes = s.nodes
	for i, in := range sp.Inputs {
		for a, x := range s.split[s.m.Value(in.Name)] {
			if x.split() {
				sp.Inputs[i].Shape[a] = graph.Const(x.count)
			}
		}
	}
	if sp.Opsets[graph.DomainCarve] == 0 {
		sp.Opsets[graph.DomainCarve] = 1
	}
	read := map[string]bool{}
	for _, n := range s.nodes {
		for _, in := range n.Inputs {
			read[in] = true
		}
	}
	for _, o := range sp.Outputs {
		read[o] = true
	}
	var inits []*graph.Tensor
	for _, t := range append(sp.Initializers, s.inits...) {
		if read[t.Name] {
			inits = append(inits, t)
		}
	}
	sp.Initializers = inits
	return sp
}

// verify checks the invariant of the package doc: every value of out that m has has m's shape,
// each split axis cut to the rank's count.
func (s *splitter) verify(out *graph.Model) error {
	for _, nv := range out.Values {
		ov := s.m.Value(nv.Name)
		if ov == nil || nv.Kind == graph.KindInitializer {
			continue
		}
		want, _, err := s.full(ov)
		if err != nil {
			return err
		}
		for a, sp := range s.split[ov] {
			if sp.split() {
				want[a] = sp.count
			}
		}
		got, _, err := s.full(nv)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return &UnsupportedError{Problem: fmt.Sprintf("value %q has shape %v on rank %d, want %v (the rules miss an op that computes it)", nv.Name, got, s.rank, want)}
		}
	}
	return nil
}

// weightMatMul reports whether n is a projection of a 2-D weight: MatMul(A, W) or Gemm(A, W[,
// C]) with A computed and W an initializer; kAxis is W's contracting axis.
func weightMatMul(n *graph.Node) (w *graph.Value, kAxis int, ok bool) {
	if n.Domain != "" || (n.OpType != "MatMul" && n.OpType != "Gemm") {
		return nil, 0, false
	}
	a, w := n.Input(0), n.Input(1)
	if a == nil || w == nil || a.Kind == graph.KindInitializer || w.Kind != graph.KindInitializer || len(w.Shape) != 2 {
		return nil, 0, false
	}
	if n.OpType == "Gemm" && n.Attrs.Int("transB", 0) != 0 {
		return w, 1, true
	}
	return w, 0, true
}

func isGated(n *graph.Node) bool {
	return n.Domain == graph.DomainCarve && n.OpType == "GatedMatMul" && n.Input(1) != nil && n.Input(2) != nil &&
		n.Input(1).Kind == graph.KindInitializer && n.Input(2).Kind == graph.KindInitializer
}

// analyse finds the attentions (and through them the query, key and value projections), the
// embeddings and the LM heads.
func (s *splitter) analyse() error {
	first := true
	for _, n := range s.m.Nodes {
		switch {
		case n.Domain == "" && n.OpType == "Attention":
			h, err := s.attention(n)
			if err != nil {
				return err
			}
			if first {
				s.info.Heads, first = h, false
			}
			s.info.Attentions++
		case n.Domain == "com.microsoft" && n.OpType == "GroupQueryAttention":
			h, err := s.attention(n)
			if err != nil {
				return err
			}
			if first {
				s.info.Heads, first = h, false
			}
			s.info.Attentions++
		case n.Domain == "com.microsoft" && (n.OpType == "MultiHeadAttention" || n.OpType == "Attention"):
			return unsupported(n, "the split rules cover ONNX's Attention and GroupQueryAttention, not this op")
		case s.isEmbedding(n):
			s.embed[n] = true
		}
		if _, _, ok := weightMatMul(n); ok && s.reachesOutput(n.Output(0)) {
			s.head[n] = true
		}
	}
	return nil
}

func (s *splitter) isEmbedding(n *graph.Node) bool {
	if n.Domain != "" || n.OpType != "Gather" || n.Attrs.Int("axis", 0) != 0 {
		return false
	}
	w, ids := n.Input(0), n.Input(1)
	return w.Kind == graph.KindInitializer && len(w.Shape) == 2 && ids.Kind != graph.KindInitializer && ids.Kind != graph.KindConstant &&
		(ids.DType == graph.Int64 || ids.DType == graph.Int32) && !ids.Host
}

// reachesOutput reports whether v becomes a graph output through views and elementwise ops
// with constants alone (the LM head's logits, perhaps scaled or soft-capped).
func (s *splitter) reachesOutput(v *graph.Value) bool {
	for range 16 {
		if v == nil {
			return false
		}
		if v.Output {
			return true
		}
		if len(v.Consumers) != 1 {
			return false
		}
		c := v.Consumers[0]
		if c.Domain != "" {
			return false
		}
		switch c.OpType {
		case "Reshape", "Identity", "Cast", "Tanh", "Mul", "Div", "Add", "Sub", "Squeeze", "Unsqueeze":
		default:
			return false
		}
		for i, in := range c.Inputs {
			if in != nil && in != v && !(i == 1 && (c.OpType == "Reshape" || c.OpType == "Squeeze" || c.OpType == "Unsqueeze")) &&
				in.Kind != graph.KindInitializer && in.Kind != graph.KindConstant {
				return false
			}
		}
		v = c.Output(0)
	}
	return false
}

// attention splits one Attention's heads and claims its query, key and value projections'
// columns.
func (s *splitter) attention(n *graph.Node) (Heads, error) {
	q, k := n.Input(0), n.Input(1)
	var heads, kv, hd int64
	dim := func(v *graph.Value, i int) int64 {
		x, _ := v.Shape[i].Value()
		return x
	}
	packedGQA := false
	if _, custom, _ := graph.AttentionLayouts(n.Attrs); custom {
		return Heads{}, unsupported(n, "an Attention reading views through carve's layouts (%s...): the split rules cover ONNX's layouts", graph.AttrQLayout)
	}
	switch {
	case n.OpType == "GroupQueryAttention":
		heads, kv = n.Attrs.Int("num_heads", 0), n.Attrs.Int("kv_num_heads", 0)
		packedGQA = k == nil && n.Input(2) == nil
		if heads < 1 || kv < 1 || len(q.Shape) != 3 || !q.Shape[2].IsConst() || (!packedGQA && (k == nil || n.Input(2) == nil)) {
			return Heads{}, unsupported(n, "a GroupQueryAttention without heads, a constant hidden size, or both K and V")
		}
		hd = dim(q, 2) / heads
		if packedGQA {
			hd = dim(q, 2) / (heads + 2*kv)
		}
	case len(q.Shape) == 4 && q.Shape[1].IsConst() && k.Shape[1].IsConst() && q.Shape[3].IsConst():
		heads, kv, hd = dim(q, 1), dim(k, 1), dim(q, 3)
	case len(q.Shape) == 3 && q.Shape[2].IsConst():
		heads, kv = n.Attrs.Int("q_num_heads", 0), n.Attrs.Int("kv_num_heads", 0)
		if heads < 1 || kv < 1 {
			return Heads{}, unsupported(n, "a 3-D Attention without q_num_heads and kv_num_heads")
		}
		hd = dim(q, 2) / heads
	default:
		return Heads{}, unsupported(n, "an Attention whose heads are not constant dims")
	}
	h, err := SplitHeads(heads, kv, s.rank, s.ranks)
	if err != nil {
		if de, ok := err.(*DivisibilityError); ok {
			de.Node = n.Name
		}
		return Heads{}, err
	}
	// A packed projection computes Q, K and V side by side ([q | k | v] columns): the rank keeps
	// its heads' columns of each section.
	packed := []section{
		{lo: 0, hi: heads * hd, local: span{h.Q0 * hd, h.Q * hd}},
		{lo: heads * hd, hi: (heads + kv) * hd, local: span{(heads + h.KV0) * hd, h.KV * hd}},
		{lo: (heads + kv) * hd, hi: (heads + 2*kv) * hd, local: span{(heads + kv + h.KV0) * hd, h.KV * hd}},
	}
	var projs [3]*graph.Node
	for i := range 3 {
		if packedGQA && i > 0 {
			projs[i] = projs[0]
			continue
		}
		if projs[i], err = s.projection(n, n.Input(i)); err != nil {
			return Heads{}, err
		}
	}
	if projs[0] == projs[1] && projs[1] == projs[2] {
		p := projs[0]
		w, kAxis, _ := weightMatMul(p)
		if cols, _ := w.Shape[1-kAxis].Value(); cols != (heads+2*kv)*hd {
			return Heads{}, unsupported(p, "a packed projection of %d columns feeds the attention %q of %d query and %d KV heads of %d", cols, n.Name, heads, kv, hd)
		}
		if old, ok := s.sections[p]; ok && !slices.Equal(old, packed) {
			return Heads{}, unsupported(p, "projection feeds two attentions' heads differently")
		}
		s.sections[p] = packed
		return h, nil
	}
	for i, sp := range []span{packed[0].local, {h.KV0 * hd, h.KV * hd}, {h.KV0 * hd, h.KV * hd}} {
		p := projs[i]
		w, kAxis, _ := weightMatMul(p)
		cols, _ := w.Shape[1-kAxis].Value()
		if want := []int64{heads, kv, kv}[i] * hd; cols != want {
			return Heads{}, unsupported(p, "projection of %d columns feeds the attention %q's %s, which has %d (a projection packing Q, K and V for several attentions, or packed differently, is not split)", cols, n.Name, []string{"Q", "K", "V"}[i], want)
		}
		if old, ok := s.col[p]; ok && old != sp {
			return Heads{}, unsupported(p, "projection feeds two attentions' heads differently")
		}
		s.col[p] = sp
	}
	return h, nil
}

// projection follows x back through views, transposes, slices and concatenations of one
// tensor, rotary and elementwise ops to the one projection computing it (paths that end at
// weights, graph inputs or other ops, as a rotary's tables do, are left).
func (s *splitter) projection(att *graph.Node, x *graph.Value) (*graph.Node, error) {
	found := map[*graph.Node]bool{}
	seen := map[*graph.Value]bool{}
	var walk func(v *graph.Value)
	walk = func(v *graph.Value) {
		if v == nil || seen[v] || v.Kind != graph.KindActivation || v.Host {
			return
		}
		seen[v] = true
		p := v.Producer
		if _, _, ok := weightMatMul(p); ok {
			found[p] = true
			return
		}
		switch {
		case p.OpType == "Reshape" || p.OpType == "Transpose" || p.OpType == "Unsqueeze" || p.OpType == "Squeeze" ||
			p.OpType == "Flatten" || p.OpType == "RotaryEmbedding" || p.OpType == "Slice" || p.OpType == "RMSNormalization" ||
			p.OpType == "LayerNormalization" || p.OpType == "SimplifiedLayerNormalization":
			walk(p.Input(0))
		case p.OpType == "Concat" || elementwise[opLabel(p)]:
			for _, in := range p.Inputs {
				walk(in)
			}
		}
	}
	walk(x)
	if len(found) != 1 {
		return nil, unsupported(att, "input %q comes from %d projections through views, rotary and elementwise ops, want one", x.Name, len(found))
	}
	for p := range found {
		return p, nil
	}
	return nil, nil
}

// node rewrites one node of m for the rank.
func (s *splitter) node(n *graph.Node) error {
	if s.embed[n] {
		return s.embedding(n)
	}
	if w, kAxis, ok := weightMatMul(n); ok {
		if sp := s.split[n.Input(0)]; sp != nil {
			return s.rowParallel(n, w, kAxis, sp)
		}
		cols, _ := w.Shape[1-kAxis].Value()
		if secs, ok := s.sections[n]; ok {
			return s.packedParallel(n, w, 1-kAxis, secs)
		}
		if secs, ok := s.packedMLP(n.Output(0), cols); ok {
			return s.packedParallel(n, w, 1-kAxis, secs)
		}
		c, ok := s.col[n]
		if !ok && !s.head[n] && !s.feedsRow(n.Output(0), 0) {
			s.emit(copyNode(n)) // a projection not between two others (a router): whole on every rank
			return nil
		}
		if !ok {
			what := "columns"
			if s.head[n] {
				what = "vocabulary"
			}
			start, count, err := Columns(what, cols, s.rank, s.ranks)
			if err != nil {
				err.(*DivisibilityError).Node = n.Name
				return err
			}
			c = span{start, count}
		}
		return s.columnParallel(n, []*graph.Value{w}, []int{1 - kAxis}, c)
	}
	if isGated(n) && s.split[n.Input(0)] == nil && s.feedsRow(n.Output(0), 0) {
		cols, _ := n.Input(1).Shape[1].Value()
		start, count, err := Columns("columns", cols, s.rank, s.ranks)
		if err != nil {
			err.(*DivisibilityError).Node = n.Name
			return err
		}
		return s.columnParallel(n, []*graph.Value{n.Input(1), n.Input(2)}, []int{1, 1}, span{start, count})
	}
	anySplit := false
	for _, in := range n.Inputs {
		if in != nil && s.split[in] != nil {
			anySplit = true
		}
	}
	if !anySplit {
		s.emit(copyNode(n))
		return nil
	}
	return s.propagate(n)
}

// feedsRow reports whether every use of v reaches, through elementwise ops and views, a
// projection that contracts it: an MLP's first projection (its gate and up, its fc1) ends at
// its last, which makes the pair column- and row-parallel.
func (s *splitter) feedsRow(v *graph.Value, depth int) bool {
	if v == nil || v.Output || len(v.Consumers) == 0 || depth > 8 {
		return false
	}
	for _, c := range v.Consumers {
		if _, _, ok := weightMatMul(c); ok && c.Input(0) == v {
			continue
		}
		switch l := opLabel(c); {
		case l == "Shape": // reads the shape alone, which the rank's graph infers again
		case elementwise[l], l == "Reshape" && c.Input(0) == v, l == "Flatten", l == "Squeeze", l == "Unsqueeze":
			if !s.feedsRow(c.Output(0), depth+1) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// slice returns the name of the rank's part sp of weight v along axis, made once.
func (s *splitter) slice(v *graph.Value, axis int, sp span) (string, error) {
	return s.sliceRanges(v, axis, []span{sp})
}

// sliceRanges returns the name of a weight holding the ranges rs of weight v along axis, one
// after another, made once.
func (s *splitter) sliceRanges(v *graph.Value, axis int, rs []span) (string, error) {
	key := fmt.Sprint(v.Name, "\x00", axis, rs)
	if name, ok := s.sliced[key]; ok {
		return name, nil
	}
	t := v.Init
	shape := slices.Clone(t.Shape)
	var total int64
	for _, sp := range rs {
		if axis >= len(shape) || sp.start+sp.count > shape[axis] {
			return "", &UnsupportedError{Problem: fmt.Sprintf("weight %q %v has no rows [%d, %d) on axis %d", v.Name, t.Shape, sp.start, sp.start+sp.count, axis)}
		}
		total += sp.count
	}
	shape[axis] = total
	name := s.fresh(fmt.Sprintf("%s/tp%d.%d", v.Name, s.ranks, s.rank))
	var nt *graph.Tensor
	var err error
	if t.ShapeOnly() {
		nt, err = graph.NewShapeTensor(name, t.DType, shape)
	} else {
		el := t.DType.Size()
		if el <= 0 {
			return "", &UnsupportedError{Problem: fmt.Sprintf("weight %q of %s: sub-byte weights are not split yet", v.Name, t.DType)}
		}
		var src []byte
		if src, err = t.Bytes(); err != nil {
			return "", err
		}
		outer, inner := int64(1), el
		for _, d := range t.Shape[:axis] {
			outer *= d
		}
		for _, d := range t.Shape[axis+1:] {
			inner *= d
		}
		row := t.Shape[axis] * inner
		dst := make([]byte, 0, outer*total*inner)
		for o := range outer {
			for _, sp := range rs {
				dst = append(dst, src[o*row+sp.start*inner:o*row+(sp.start+sp.count)*inner]...)
			}
		}
		nt, err = graph.NewTensor(name, t.DType, shape, dst)
	}
	if err != nil {
		return "", err
	}
	s.inits = append(s.inits, nt)
	s.sliced[key] = name
	return name, nil
}

// columnParallel keeps the rank's columns c of n's weights (and of a Gemm's column bias); an LM
// head's logits are gathered back whole.
func (s *splitter) columnParallel(n *graph.Node, ws []*graph.Value, axes []int, c span) error {
	ns := copyNode(n)
	for i, w := range ws {
		name, err := s.slice(w, axes[i], c)
		if err != nil {
			return err
		}
		ns.Inputs[slices.Index(n.Inputs, w)] = name
	}
	if n.OpType == "Gemm" {
		if b := n.Input(2); b != nil {
			bf, _, err := s.full(b)
			if err != nil {
				return err
			}
			switch {
			case len(bf) >= 1 && bf[len(bf)-1] > 1:
				w := weightOf(b)
				if w == nil {
					return unsupported(n, "a computed bias %q over split columns", b.Name)
				}
				name, err := s.slice(w, len(bf)-1, c)
				if err != nil {
					return err
				}
				ns.Inputs[2] = name
			}
		}
	}
	out := n.Output(0)
	f, _, err := s.full(out)
	if err != nil {
		return err
	}
	sp := make([]span, len(f))
	sp[len(f)-1] = c
	s.info.Column++
	if !s.head[n] {
		s.split[out] = sp
		s.emit(ns)
		return nil
	}
	part := s.fresh(out.Name + "/tp.shard")
	ns.Outputs[0] = part
	s.emit(ns)
	s.collective("AllGather", part, out.Name, int64(len(f)-1))
	return nil
}

// packedParallel keeps the rank's part of each section of a packed projection's columns (and
// of its column bias), side by side; its product holds the sections.
func (s *splitter) packedParallel(n *graph.Node, w *graph.Value, axis int, secs []section) error {
	if s.head[n] {
		return unsupported(n, "a packed LM head")
	}
	rs := make([]span, len(secs))
	var total int64
	for i, sec := range secs {
		rs[i] = sec.local
		total += sec.local.count
	}
	ns := copyNode(n)
	name, err := s.sliceRanges(w, axis, rs)
	if err != nil {
		return err
	}
	ns.Inputs[1] = name
	if n.OpType == "Gemm" && n.Input(2) != nil {
		b := weightOf(n.Input(2))
		if b == nil || len(b.Shape) != 1 {
			return unsupported(n, "a packed projection's bias %q is not a weight of its columns", n.Input(2).Name)
		}
		if ns.Inputs[2], err = s.sliceRanges(b, 0, rs); err != nil {
			return err
		}
	}
	out := n.Output(0)
	f, _, err := s.full(out)
	if err != nil {
		return err
	}
	sp := make([]span, len(f))
	sp[len(f)-1] = span{0, total}
	s.split[out], s.packedOut[out] = sp, secs
	s.info.Column++
	s.emit(ns)
	return nil
}

// packedMLP reports whether v, a projection's product of cols columns, is read only by slices of
// its last axis that cut it into sections, each of which reaches another projection (phi3's
// gate_up_proj, sliced into gate and up): then each section is split evenly among the ranks.
func (s *splitter) packedMLP(v *graph.Value, cols int64) ([]section, bool) {
	var secs []section
	for _, c := range v.Consumers {
		if c.OpType == "Shape" {
			continue
		}
		if parts, ok := s.lastAxisSplit(c, cols); ok && c.Input(0) == v {
			for i, pt := range parts {
				if !s.feedsRow(c.Output(i), 0) {
					return nil, false
				}
				start, count, err := Columns("columns", pt.count, s.rank, s.ranks)
				if err != nil {
					return nil, false
				}
				secs = append(secs, section{lo: pt.start, hi: pt.start + pt.count, local: span{pt.start + start, count}})
			}
			continue
		}
		lo, hi, ok := s.lastAxisSlice(c, cols)
		if !ok || c.Input(0) != v || !s.feedsRow(c.Output(0), 0) {
			return nil, false
		}
		start, count, err := Columns("columns", hi-lo, s.rank, s.ranks)
		if err != nil {
			return nil, false
		}
		secs = append(secs, section{lo: lo, hi: hi, local: span{lo + start, count}})
	}
	slices.SortFunc(secs, func(a, b section) int { return int(a.lo - b.lo) })
	for i, sec := range secs {
		if i > 0 && sec.lo != secs[i-1].hi || i == 0 && sec.lo != 0 {
			return nil, false
		}
	}
	return secs, len(secs) > 1 && secs[len(secs)-1].hi == cols
}

// lastAxisSplit reports whether n is a Split of its input's last axis, of cols columns, into
// parts of sizes known at load, and the parts [start, start+count).
func (s *splitter) lastAxisSplit(n *graph.Node, cols int64) ([]span, bool) {
	if n.OpType != "Split" || n.Domain != "" {
		return nil, false
	}
	rank := int64(len(n.Input(0).Shape))
	axis := n.Attrs.Int("axis", 0)
	if axis < 0 {
		axis += rank
	}
	if axis != rank-1 {
		return nil, false
	}
	var sizes []int64
	if in := n.Input(1); in != nil {
		d, ok := s.m.HostData(in)
		vals, ok2 := consts(d)
		if !ok || !ok2 {
			return nil, false
		}
		sizes = vals
	} else {
		k := int64(len(n.Outputs))
		if k < 1 || cols%k != 0 {
			return nil, false
		}
		for range k {
			sizes = append(sizes, cols/k)
		}
	}
	var parts []span
	var at int64
	for _, x := range sizes {
		parts = append(parts, span{at, x})
		at += x
	}
	return parts, at == cols && len(parts) == len(n.Outputs)
}

// lastAxisSlice reports whether n is a Slice of its input's last axis, of n columns, by
// constants with step 1, and the columns [lo, hi) it keeps.
func (s *splitter) lastAxisSlice(n *graph.Node, cols int64) (lo, hi int64, ok bool) {
	if n.OpType != "Slice" || n.Domain != "" {
		return 0, 0, false
	}
	one := func(i int) (int64, bool) {
		if n.Input(i) == nil {
			return 0, false
		}
		d, ok := s.m.HostData(n.Input(i))
		if !ok || len(d) != 1 {
			return 0, false
		}
		return d[0].Value()
	}
	lo, ok1 := one(1)
	hi, ok2 := one(2)
	axis, ok3 := one(3)
	rank := int64(len(n.Input(0).Shape))
	if axis < 0 {
		axis += rank
	}
	if step, ok := one(4); n.Input(4) != nil && (!ok || step != 1) {
		return 0, 0, false
	}
	if !ok1 || !ok2 || !ok3 || axis != rank-1 {
		return 0, 0, false
	}
	clamp := func(x int64) int64 {
		if x < 0 {
			x += cols
		}
		return min(max(x, 0), cols)
	}
	lo, hi = clamp(lo), clamp(hi)
	return lo, hi, lo < hi
}

// collective emits an AllReduce (axis < 0) or an AllGather along axis of in into out.
func (s *splitter) collective(op, in, out string, axis int64) {
	attrs := []graph.Attribute{
		{Name: "group", Kind: graph.AttrString, String: s.group},
		{Name: "rank", Kind: graph.AttrInt, Int: int64(s.rank)},
		{Name: "ranks", Kind: graph.AttrInt, Int: int64(s.ranks)},
	}
	if op == "AllGather" {
		attrs = append(attrs, graph.Attribute{Name: "axis", Kind: graph.AttrInt, Int: axis})
		s.info.AllGathers++
	} else {
		s.info.AllReduces++
	}
	s.emit(graph.NodeSpec{Name: s.fresh(out + "/tp." + strings.ToLower(op)), OpType: op, Domain: graph.DomainCarve,
		Inputs: []string{in}, Outputs: []string{out}, Attrs: graph.NewAttributes(attrs...)})
}

// rowParallel keeps the rows of n's weight that the rank's part of its input meets, and sums
// the ranks' products; a Gemm's bias is added once, after the sum.
func (s *splitter) rowParallel(n *graph.Node, w *graph.Value, kAxis int, a []span) error {
	for i, sp := range a[:len(a)-1] {
		if sp.split() {
			return unsupported(n, "input %q is split on axis %d, not on the contracting axis", n.Input(0).Name, i)
		}
	}
	if n.OpType == "Gemm" && n.Attrs.Int("transA", 0) != 0 {
		return unsupported(n, "a row-parallel Gemm with transA")
	}
	if s.head[n] {
		return unsupported(n, "the LM head reads a split value")
	}
	ns := copyNode(n)
	name, err := s.slice(w, kAxis, a[len(a)-1])
	if err != nil {
		return err
	}
	ns.Inputs[1] = name
	out := n.Output(0).Name
	var bias string
	if n.OpType == "Gemm" && n.Input(2) != nil {
		if n.Attrs.Float("beta", 1) != 1 {
			return unsupported(n, "a row-parallel Gemm with beta != 1")
		}
		bias, ns.Inputs = n.Input(2).Name, ns.Inputs[:2]
	}
	partial := s.fresh(out + "/tp.partial")
	ns.Outputs[0] = partial
	s.emit(ns)
	s.info.Row++
	if bias == "" {
		s.collective("AllReduce", partial, out, -1)
		return nil
	}
	sum := s.fresh(out + "/tp.sum")
	s.collective("AllReduce", partial, sum, -1)
	s.emit(graph.NodeSpec{Name: s.fresh(out + "/tp.bias"), OpType: "Add", Inputs: []string{sum, bias}, Outputs: []string{out}})
	return nil
}

// scalar adds a scalar initializer of dt holding v (an integer type, or a float type for 0).
func (s *splitter) scalar(base string, dt graph.DType, v int64) (string, error) {
	b := make([]byte, dt.Size())
	switch dt {
	case graph.Int64:
		binary.LittleEndian.PutUint64(b, uint64(v))
	case graph.Int32:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		if v != 0 {
			return "", fmt.Errorf("shard: a %s scalar of %d", dt, v)
		}
	}
	name := s.fresh(base)
	t, err := graph.NewTensor(name, dt, nil, b)
	if err != nil {
		return "", err
	}
	s.inits = append(s.inits, t)
	return name, nil
}

// embedding makes a vocabulary-parallel Gather: the rank's rows [v0, v0+count) looked up by
// id - v0, zero rows for ids outside them, summed over the ranks.
func (s *splitter) embedding(n *graph.Node) error {
	w, ids, out := n.Input(0), n.Input(1), n.Output(0).Name
	rows, _ := w.Shape[0].Value()
	v0, count, err := Columns("vocabulary", rows, s.rank, s.ranks)
	if err != nil {
		err.(*DivisibilityError).Node = n.Name
		return err
	}
	if s.m.Opsets[""] < 13 {
		return unsupported(n, "a vocabulary-parallel embedding needs opset 13 (Unsqueeze's axes input), the model imports %d", s.m.Opsets[""])
	}
	wr, err := s.slice(w, 0, span{v0, count})
	if err != nil {
		return err
	}
	p := out + "/tp"
	off, err1 := s.scalar(p+".first", ids.DType, v0)
	lim, err2 := s.scalar(p+".rows", ids.DType, count)
	zero, err3 := s.scalar(p+".zero", ids.DType, 0)
	fzero, err4 := s.scalar(p+".fzero", w.DType, 0)
	if err := firstErr(err1, err2, err3, err4); err != nil {
		return err
	}
	last := s.fresh(p + ".last")
	lt, err := graph.NewTensor(last, graph.Int64, []int64{1}, binary.LittleEndian.AppendUint64(nil, ^uint64(0)))
	if err != nil {
		return err
	}
	s.inits = append(s.inits, lt)
	local, ge, lt2, in, idx, g, mask, z := s.fresh(p+".ids"), s.fresh(p+".ge"), s.fresh(p+".lt"), s.fresh(p+".mine"),
		s.fresh(p+".index"), s.fresh(p+".rows_found"), s.fresh(p+".mine3"), s.fresh(p+".part")
	for _, ns := range []graph.NodeSpec{
		{Name: local, OpType: "Sub", Inputs: []string{ids.Name, off}, Outputs: []string{local}},
		{Name: ge, OpType: "GreaterOrEqual", Inputs: []string{local, zero}, Outputs: []string{ge}},
		{Name: lt2, OpType: "Less", Inputs: []string{local, lim}, Outputs: []string{lt2}},
		{Name: in, OpType: "And", Inputs: []string{ge, lt2}, Outputs: []string{in}},
		{Name: idx, OpType: "Where", Inputs: []string{in, local, zero}, Outputs: []string{idx}},
		{Name: g, OpType: "Gather", Inputs: []string{wr, idx}, Outputs: []string{g}, Attrs: n.Attrs},
		{Name: mask, OpType: "Unsqueeze", Inputs: []string{in, last}, Outputs: []string{mask}},
		{Name: z, OpType: "Where", Inputs: []string{mask, g, fzero}, Outputs: []string{z}},
	} {
		s.emit(ns)
	}
	s.collective("AllReduce", z, out, -1)
	s.info.Vocab = count
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
