package shard

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
)

// elementwise are the ops whose output element reads the inputs' elements at the same
// (broadcast) index: a split carries through them axis by axis.
var elementwise = map[string]bool{
	"Add": true, "Sub": true, "Mul": true, "Div": true, "Pow": true, "Where": true, "Cast": true, "Identity": true,
	"Equal": true, "Less": true, "Greater": true, "LessOrEqual": true, "GreaterOrEqual": true, "And": true, "Or": true,
	"Not": true, "Neg": true, "Sqrt": true, "Reciprocal": true, "Tanh": true, "Sigmoid": true, "Erf": true, "Exp": true,
	"Log": true, "Abs": true, "Relu": true, "Gelu": true, "Swish": true, "Softplus": true, "Clip": true, "Max": true,
	"Min": true, "IsNaN": true, "IsInf": true,
	"com.microsoft.Gelu": true, "com.microsoft.FastGelu": true, "com.microsoft.QuickGelu": true,
	graph.DomainCarve + ".SwiGLU": true,
}

// propagate rewrites a node that reads a split value and records its outputs' splits.
func (s *splitter) propagate(n *graph.Node) error {
	label := opLabel(n)
	for i, in := range n.Inputs {
		if s.packedOut[in] == nil {
			continue
		}
		switch {
		case label == "Slice" && i == 0:
			return s.sectionSlice(n)
		case label == "Split" && i == 0:
			return s.sectionSplit(n)
		case (label == "Reshape" || label == "Flatten") && i == 0:
			return s.sectionView(n)
		case label == "com.microsoft.GroupQueryAttention" && i == 0 && n.Input(1) == nil:
		case label == "Shape":
		default:
			return unsupported(n, "it reads the packed product %q, which only slices of its sections may", in.Name)
		}
	}
	switch {
	case elementwise[label]:
		return s.broadcast(n)
	case label == "Softmax" || label == "LogSoftmax":
		in := s.split[n.Input(0)]
		ax := n.Attrs.Int("axis", -1)
		if ax < 0 {
			ax += int64(len(in))
		}
		if in[ax].split() {
			return unsupported(n, "a softmax over a split axis")
		}
		return s.broadcast(n)
	case label == "Transpose":
		in := s.split[n.Input(0)]
		perm := n.Attrs.Ints("perm")
		if perm == nil {
			for i := len(in) - 1; i >= 0; i-- {
				perm = append(perm, int64(i))
			}
		}
		out := make([]span, len(in))
		for i, p := range perm {
			out[i] = in[p]
		}
		return s.done(n, copyNode(n), out)
	case label == "Reshape" || label == "Flatten" || label == "Squeeze" || label == "Unsqueeze":
		return s.view(n)
	case n.OpType == "RotaryEmbedding":
		return s.rotary(n)
	case label == "Attention" || label == "com.microsoft.GroupQueryAttention":
		return s.attend(n)
	case label == "ReduceMean" || label == "ReduceSum" || label == "ReduceMax" || label == "ReduceMin":
		return s.reduce(n)
	case label == "RMSNormalization" || label == "LayerNormalization" || label == "SimplifiedLayerNormalization":
		return s.norm(n)
	case label == "Slice":
		return s.sliceOp(n)
	case label == "Concat":
		return s.concat(n)
	case label == "Shape":
		// Its output is host data of the rank's shape, which the graph infers again at Build;
		// verify checks every value that depends on it.
		s.emit(copyNode(n))
		return nil
	}
	for i, in := range n.Inputs {
		if in != nil && s.split[in] != nil {
			return unsupported(n, "input %d (%q) is split among the ranks and the op has no split rule", i, in.Name)
		}
	}
	return nil
}

// done emits ns and records sp as the split of n's first output (nil when nothing is split).
func (s *splitter) done(n *graph.Node, ns graph.NodeSpec, sp []span) error {
	s.emit(ns)
	if slices.ContainsFunc(sp, span.split) {
		s.split[n.Output(0)] = sp
	}
	return nil
}

// broadcast carries the inputs' splits to the output of an elementwise op, axis by axis as
// numpy broadcasts them; an input read whole along a split axis is sliced if it is a weight
// (a per-head scale) and refused otherwise.
func (s *splitter) broadcast(n *graph.Node) error {
	of, _, err := s.full(n.Output(0))
	if err != nil {
		return err
	}
	out := make([]span, len(of))
	for _, in := range n.Inputs {
		sp := s.split[in]
		if sp == nil {
			continue
		}
		off := len(of) - len(sp)
		for a, x := range sp {
			if !x.split() {
				continue
			}
			if o := out[off+a]; o.split() && o != x {
				return unsupported(n, "its inputs are split differently on axis %d", off+a)
			}
			out[off+a] = x
		}
	}
	ns := copyNode(n)
	for i, in := range n.Inputs {
		if in == nil {
			continue
		}
		f, _, err := s.full(in)
		if err != nil {
			return err
		}
		off := len(of) - len(f)
		sp := s.split[in]
		for a, d := range f {
			o := out[off+a]
			if !o.split() || d == 1 || (sp != nil && sp[a] == o) {
				continue
			}
			w := weightOf(s.m.Value(ns.Inputs[i]))
			if sp != nil || w == nil {
				return unsupported(n, "input %q is read whole along axis %d, which is split among the ranks", in.Name, off+a)
			}
			name, err := s.slice(w, a, o)
			if err != nil {
				return err
			}
			ns.Inputs[i] = name
		}
	}
	return s.done(n, ns, out)
}

// regroup carries a split through a view from full shape in to full shape out: the axes are
// grouped where their products meet, and in a group holding a split axis the rank's part is
// one contiguous run of the group's elements, which is cut from the outermost axes inward.
func regroup(in []int64, insym []bool, sp []span, out []int64, outsym []bool) ([]span, error) {
	res := make([]span, len(out))
	i, j := 0, 0
	for i < len(in) || j < len(out) {
		gi, gj := []int{}, []int{}
		pa, pb := int64(1), int64(1)
		if i < len(in) {
			pa *= in[i]
			gi = append(gi, i)
			i++
		}
		if j < len(out) {
			pb *= out[j]
			gj = append(gj, j)
			j++
		}
		for pa != pb {
			if pa < pb && i < len(in) {
				pa *= in[i]
				gi = append(gi, i)
				i++
			} else if pb < pa && j < len(out) {
				pb *= out[j]
				gj = append(gj, j)
				j++
			} else {
				return nil, fmt.Errorf("the view's axes %v and %v do not group", in, out)
			}
		}
		k := slices.IndexFunc(gi, func(a int) bool { return sp[a].split() })
		if k < 0 {
			continue
		}
		// The run is contiguous: no named dim is in the group, the axes before the first split
		// one have one element, split axes of one element may follow it, and after the first
		// axis holding more than one of the rank's elements every axis is whole.
		for _, a := range gi {
			if insym[a] {
				return nil, fmt.Errorf("a split axis is viewed together with a named dim")
			}
		}
		for _, a := range gj {
			if outsym[a] {
				return nil, fmt.Errorf("a split axis is viewed together with a named dim")
			}
		}
		for _, a := range gi[:k] {
			if in[a] != 1 {
				return nil, fmt.Errorf("the rank's part of axis %d is strided in the view", gi[k])
			}
		}
		var start, count int64 = 0, 1
		wide := false
		for _, a := range gi[k:] {
			c, st := in[a], int64(0)
			if sp[a].split() {
				c, st = sp[a].count, sp[a].start
			}
			if wide && sp[a].split() {
				return nil, fmt.Errorf("the rank's part of axis %d is strided in the view", a)
			}
			start, count = start*in[a]+st, count*c
			wide = wide || c > 1
		}
		for x, b := range gj {
			p := int64(1)
			for _, c := range gj[x+1:] {
				p *= out[c]
			}
			switch {
			case count%p == 0 && start%p == 0:
				if c := count / p; c != out[b] {
					res[b] = span{start / p, c}
				}
			case p%count == 0 && start%p+count <= p:
				res[b] = span{start / p, 1}
				start %= p
				continue
			default:
				return nil, fmt.Errorf("the rank's run [%d, %d) does not fall on the view's axes %v", start, start+count, out)
			}
			break
		}
	}
	return res, nil
}

// view carries a split through Reshape, Flatten, Squeeze and Unsqueeze; a Reshape's target
// shape is rewritten for the rank where it writes out a split axis's whole count.
func (s *splitter) view(n *graph.Node) error {
	in, out := n.Input(0), n.Output(0)
	inF, inS, err := s.full(in)
	if err != nil {
		return err
	}
	outF, outS, err := s.full(out)
	if err != nil {
		return err
	}
	isp := s.split[in]
	osp, err := regroup(inF, inS, isp, outF, outS)
	if err != nil {
		return unsupported(n, "%v", err)
	}
	ns := copyNode(n)
	if n.OpType == "Reshape" {
		target, err := s.reshapeTarget(n, isp, osp, inF, outF)
		if err != nil {
			return err
		}
		ns.Inputs[1] = target
	}
	return s.done(n, ns, osp)
}

// reshapeTarget returns the name of n's target shape for the rank: n's own where it holds no
// split axis's count, else an edited copy.
func (s *splitter) reshapeTarget(n *graph.Node, isp, osp []span, inF, outF []int64) (string, error) {
	t := n.Input(1)
	data, ok := s.m.HostData(t)
	if !ok || len(data) != len(outF) {
		return "", unsupported(n, "its target shape %q is not known on the host", t.Name)
	}
	local := func(f []int64, sp []span, i int) int64 {
		if i < len(sp) && sp[i].split() {
			return sp[i].count
		}
		return f[i]
	}
	edits := map[int]int64{}
	for i, d := range data {
		c, isc := d.Value()
		want := local(outF, osp, i)
		switch {
		case !isc:
			if osp[i].split() {
				return "", unsupported(n, "its target shape's element %d is a named dim on a split axis", i)
			}
		case c == -1:
		case c == 0 && n.Attrs.Int("allowzero", 0) == 0:
			if i >= len(inF) || local(inF, isp, i) != want {
				return "", unsupported(n, "its target shape copies input dim %d, which the split makes the wrong size", i)
			}
		case c != want:
			if c != outF[i] {
				return "", unsupported(n, "its target shape's element %d is %d, neither the whole %d nor the rank's %d", i, c, outF[i], want)
			}
			edits[i] = want
		}
	}
	if len(edits) == 0 {
		return t.Name, nil
	}
	return s.editInts(n, t, edits)
}

// editInts returns a value holding t's integers with edits applied: a new weight when t is
// known at load, a new Concat when t concatenates pieces and the edited pieces are known.
func (s *splitter) editInts(n *graph.Node, t *graph.Value, edits map[int]int64) (string, error) {
	key := fmt.Sprint(t.Name, edits)
	if name, ok := s.edited[key]; ok {
		return name, nil
	}
	data, _ := s.m.HostData(t)
	if vals, ok := consts(data); ok {
		for i, v := range edits {
			vals[i] = v
		}
		name, err := s.ints(t.Name+"/tp", t.DType, []int64{int64(len(vals))}, vals)
		s.edited[key] = name
		return name, err
	}
	p := t.Producer
	if p == nil || p.OpType != "Concat" || p.Domain != "" || p.Attrs.Int("axis", 0) != 0 {
		return "", unsupported(n, "its target shape %q is computed at Bind and holds a split axis's count", t.Name)
	}
	ns := copyNode(p)
	pos := 0
	for k, piece := range p.Inputs {
		pd, ok := s.m.HostData(piece)
		if !ok {
			return "", unsupported(n, "piece %q of its target shape is not known on the host", piece.Name)
		}
		mine := map[int]int64{}
		for i := range pd {
			if v, ok := edits[pos+i]; ok {
				mine[i] = v
			}
		}
		if len(mine) > 0 {
			vals, ok := consts(pd)
			if !ok {
				return "", unsupported(n, "piece %q of its target shape holds a split axis's count beside named dims", piece.Name)
			}
			for i, v := range mine {
				vals[i] = v
			}
			name, err := s.ints(piece.Name+"/tp", piece.DType, []int64{int64(len(vals))}, vals)
			if err != nil {
				return "", err
			}
			ns.Inputs[k] = name
		}
		pos += len(pd)
	}
	out := s.fresh(t.Name + "/tp")
	ns.Name, ns.Outputs = out, []string{out}
	s.emit(ns)
	s.edited[key] = out
	return out, nil
}

func consts(d []graph.Dim) ([]int64, bool) {
	out := make([]int64, len(d))
	for i, x := range d {
		v, ok := x.Value()
		if !ok {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}

// ints adds an integer weight.
func (s *splitter) ints(base string, dt graph.DType, shape []int64, vals []int64) (string, error) {
	var b []byte
	for _, v := range vals {
		switch dt {
		case graph.Int64:
			b = binaryAppend64(b, v)
		case graph.Int32:
			b = binaryAppend32(b, v)
		default:
			return "", fmt.Errorf("shard: shape of %s", dt)
		}
	}
	name := s.fresh(base)
	t, err := graph.NewTensor(name, dt, shape, b)
	if err != nil {
		return "", err
	}
	s.inits = append(s.inits, t)
	return name, nil
}

func binaryAppend64(b []byte, v int64) []byte {
	for i := range 8 {
		b = append(b, byte(uint64(v)>>(8*i)))
	}
	return b
}

func binaryAppend32(b []byte, v int64) []byte {
	for i := range 4 {
		b = append(b, byte(uint32(v)>>(8*i)))
	}
	return b
}

// withInt returns a with the int attribute name set to v.
func withInt(a graph.Attributes, name string, v int64) graph.Attributes {
	var list []graph.Attribute
	for _, k := range a.Names() {
		x, _ := a.Get(k)
		list = append(list, x)
	}
	return graph.NewAttributes(append(list, graph.Attribute{Name: name, Kind: graph.AttrInt, Int: v})...)
}

// rotary: the rotation is per head and position, so the split of x carries over; the caches
// and positions are whole on every rank.
func (s *splitter) rotary(n *graph.Node) error {
	for _, in := range n.Inputs[1:] {
		if in != nil && s.split[in] != nil {
			return unsupported(n, "its caches or positions %q are split", in.Name)
		}
	}
	sp := s.split[n.Input(0)]
	ns := copyNode(n)
	if h := n.Attrs.Int("num_heads", 0); h > 0 && len(sp) == 3 {
		f, _, err := s.full(n.Input(0))
		if err != nil {
			return err
		}
		if sp[2].split() {
			ns.Attrs = withInt(n.Attrs, "num_heads", h*sp[2].count/f[2])
		}
	}
	return s.done(n, ns, sp)
}

// attend: each rank attends over its heads. The query heads a rank holds must read the KV
// heads it holds (SplitHeads makes them so); the mask, the positions and the rotary caches are
// whole. A KV cache given as graph inputs (past key and value, [batch, kv heads, time, head
// size]) is state the caller keeps per rank: it is split by the rank's KV heads (stateInput),
// and so are the present key and value.
func (s *splitter) attend(n *graph.Node) error {
	gqa := n.OpType == "GroupQueryAttention"
	q, k, v := s.split[n.Input(0)], s.split[n.Input(1)], s.split[n.Input(2)]
	if secs := s.packedOut[n.Input(0)]; gqa && secs != nil {
		// Packed Q, K and V: the sections stand for the three inputs' splits.
		q, k = []span{{}, {}, secs[0].local}, []span{{}, {}, {secs[1].local.start - secs[1].lo, secs[1].local.count}}
		v = k
	}
	if q == nil || k == nil || v == nil {
		return unsupported(n, "its query, key and value are not all split (a projection is missing)")
	}
	pastAt, others := 4, []int{3, 6}
	if gqa {
		pastAt, others = 3, []int{5, 6, 7, 8, 9, 10}
	}
	for _, i := range others {
		if x := n.Input(i); x != nil && s.split[x] != nil {
			return unsupported(n, "its input %d (%q) is split", i, x.Name)
		}
	}
	ns := copyNode(n)
	qF, _, err := s.full(n.Input(0))
	if err != nil {
		return err
	}
	if s.packedOut[n.Input(0)] != nil {
		qF[2] = n.Attrs.Int("num_heads", 0) * (qF[2] / (n.Attrs.Int("num_heads", 0) + 2*n.Attrs.Int("kv_num_heads", 0)))
	}
	var heads, kv, hd int64
	var qs, ks span
	switch {
	case gqa || len(q) == 3:
		if gqa {
			heads, kv = n.Attrs.Int("num_heads", 0), n.Attrs.Int("kv_num_heads", 0)
		} else {
			heads, kv = n.Attrs.Int("q_num_heads", 0), n.Attrs.Int("kv_num_heads", 0)
		}
		hd = qF[2] / heads
		qs, ks = span{q[2].start / hd, q[2].count / hd}, span{k[2].start / hd, k[2].count / hd}
		if v[2] != k[2] {
			return unsupported(n, "its key and value are split differently")
		}
		qName := "q_num_heads"
		if gqa {
			qName = "num_heads"
		}
		ns.Attrs = withInt(withInt(n.Attrs, qName, qs.count), "kv_num_heads", ks.count)
	default:
		kF, _, err := s.full(n.Input(1))
		if err != nil {
			return err
		}
		heads, kv, hd = qF[1], kF[1], qF[3]
		qs, ks = q[1], k[1]
		if v[1] != k[1] {
			return unsupported(n, "its key and value are split differently")
		}
	}
	if !qs.split() || !ks.split() {
		return unsupported(n, "its query or key is not split by heads")
	}
	if m := n.Input(3); m != nil && !gqa {
		mf, _, err := s.full(m)
		if err != nil {
			return err
		}
		if len(mf) == 4 && mf[1] > 1 {
			return unsupported(n, "its mask has a heads axis, which is not split yet")
		}
	}
	g, gl := heads/kv, qs.count/ks.count
	for h := int64(0); h < qs.count; h++ {
		if (qs.start+h)/g != ks.start+h/gl {
			return unsupported(n, "query head %d of the rank reads KV head %d, which the rank does not hold", qs.start+h, (qs.start+h)/g)
		}
	}
	if o := n.Output(3); o != nil && len(o.Consumers) > 0 && !gqa {
		return unsupported(n, "its qk output is read")
	}
	// The KV state: [batch, kv heads, time, head size], the rank's KV heads on axis 1.
	state := []span{{}, ks, {}, {}}
	for _, i := range []int{pastAt, pastAt + 1} {
		if p := n.Input(i); p != nil {
			if err := s.stateInput(n, p, state, kv, hd); err != nil {
				return err
			}
		}
	}
	s.emit(ns)
	s.split[n.Output(0)] = q
	for _, i := range []int{1, 2} {
		if o := n.Output(i); o != nil {
			s.split[o] = state
			s.state[o] = true
		}
	}
	return nil
}

// stateInput splits a graph input holding KV state [batch, kv heads, time, head size] by sp, or
// checks that it is split so; it must not have been read as a whole tensor before.
func (s *splitter) stateInput(n *graph.Node, p *graph.Value, sp []span, kv, hd int64) error {
	if old := s.split[p]; old != nil {
		if !slices.Equal(old, sp) {
			return unsupported(n, "its KV state %q is split differently elsewhere", p.Name)
		}
		return nil
	}
	f, _, err := s.full(p)
	if err != nil {
		return err
	}
	if p.Kind != graph.KindInput || len(f) != 4 || f[1] != kv || f[3] != hd {
		return unsupported(n, "its past key or value %q is not a graph input [batch, %d, time, %d]", p.Name, kv, hd)
	}
	for _, c := range p.Consumers {
		if c.Index < n.Index && c.OpType != "Shape" && !isCopy(c) {
			return unsupported(n, "its KV state %q is read whole by %q before it", p.Name, c.Name)
		}
	}
	s.split[p] = sp
	s.state[p] = true
	return nil
}

// reduce: a reduction over axes that are not split keeps the split of the others.
func (s *splitter) reduce(n *graph.Node) error {
	if n.Input(1) != nil && s.split[n.Input(1)] != nil {
		return unsupported(n, "its axes are split")
	}
	in := s.split[n.Input(0)]
	var axes []int64
	if a := n.Input(1); a != nil {
		d, ok := s.m.HostData(a)
		vals, ok2 := consts(d)
		if !ok || !ok2 {
			return unsupported(n, "its axes are not known at load")
		}
		axes = vals
	} else {
		axes = n.Attrs.Ints("axes")
	}
	if len(axes) == 0 {
		return unsupported(n, "a reduction over every axis of a split value")
	}
	reduced := map[int]bool{}
	for _, a := range axes {
		if a < 0 {
			a += int64(len(in))
		}
		if in[a].split() {
			return unsupported(n, "a reduction over a split axis")
		}
		reduced[int(a)] = true
	}
	var out []span
	keep := n.Attrs.Int("keepdims", 1) != 0
	for a, x := range in {
		if reduced[a] {
			if keep {
				out = append(out, span{})
			}
			continue
		}
		out = append(out, x)
	}
	return s.done(n, copyNode(n), out)
}

// sliceOp: a Slice along axes that are not split keeps the split of the others.
func (s *splitter) sliceOp(n *graph.Node) error {
	in := s.split[n.Input(0)]
	for _, x := range n.Inputs[1:] {
		if x != nil && s.split[x] != nil {
			return unsupported(n, "its bounds are split")
		}
	}
	var axes []int64
	if a := n.Input(3); a != nil {
		d, _ := s.m.HostData(a)
		vals, ok := consts(d)
		if !ok {
			return unsupported(n, "its axes are not known at load")
		}
		axes = vals
	} else {
		d, _ := s.m.HostData(n.Input(1))
		for i := range d {
			axes = append(axes, int64(i))
		}
	}
	for _, a := range axes {
		if a < 0 {
			a += int64(len(in))
		}
		if a < 0 || int(a) >= len(in) || in[a].split() {
			return unsupported(n, "a slice along a split axis")
		}
	}
	return s.done(n, copyNode(n), in)
}

// concat: concatenating values split alike along an axis that is not split keeps the split. A
// graph input concatenated with a split key or value is KV state (a past key or value the
// caller keeps per rank): it is split alike (stateInput), and so is the result.
func (s *splitter) concat(n *graph.Node) error {
	var first []span
	for _, x := range n.Inputs {
		if sp := s.split[x]; sp != nil {
			first = sp
			break
		}
	}
	state := false
	for _, x := range n.Inputs {
		if s.split[x] != nil || len(first) != 4 {
			state = state || s.state[x]
			continue
		}
		// A graph input, or a copy of one (TorchScript concatenates the past alone first).
		chain := []*graph.Value{x}
		for p := x; p.Kind != graph.KindInput; p = chain[len(chain)-1] {
			if !isCopy(p.Producer) {
				break
			}
			chain = append(chain, p.Producer.Input(0))
		}
		if in := chain[len(chain)-1]; in.Kind == graph.KindInput {
			f, _, err := s.full(in)
			if err != nil {
				return err
			}
			if err := s.stateInput(n, in, first, f[1], f[3]); err != nil {
				return err
			}
			for _, v := range chain {
				s.split[v], s.state[v] = first, true
			}
		}
		state = state || s.state[x]
	}
	if state {
		s.state[n.Output(0)] = true
	}
	for _, x := range n.Inputs {
		if sp := s.split[x]; sp == nil || !slices.Equal(sp, first) {
			return unsupported(n, "its inputs are not all split alike")
		}
	}
	ax := n.Attrs.Int("axis", 0)
	if ax < 0 {
		ax += int64(len(first))
	}
	if first[ax].split() {
		return unsupported(n, "a concatenation along a split axis")
	}
	return s.done(n, copyNode(n), first)
}

// weightOf returns the initializer v is, or is an Identity of (as TorchScript exports a weight
// shared by several uses); nil if it is neither.
func weightOf(v *graph.Value) *graph.Value {
	for v != nil && v.Kind == graph.KindActivation && v.Producer != nil && v.Producer.OpType == "Identity" && v.Producer.Domain == "" {
		v = v.Producer.Input(0)
	}
	if v == nil || v.Kind != graph.KindInitializer {
		return nil
	}
	return v
}

// norm: a norm over axes that are not split (a per-head q or k norm) keeps the split of the
// others; a norm over a split axis would need every rank's statistics.
func (s *splitter) norm(n *graph.Node) error {
	in := s.split[n.Input(0)]
	for _, x := range n.Inputs[1:] {
		if x != nil && s.split[x] != nil {
			return unsupported(n, "its scale or bias is split")
		}
	}
	ax := n.Attrs.Int("axis", -1)
	if ax < 0 {
		ax += int64(len(in))
	}
	for a := ax; a < int64(len(in)); a++ {
		if in[a].split() {
			return unsupported(n, "a norm over a split axis (it would need every rank's statistics)")
		}
	}
	for _, o := range n.Outputs[1:] {
		if o != nil && len(o.Consumers) > 0 {
			return unsupported(n, "its mean or inverse deviation output is read")
		}
	}
	return s.done(n, copyNode(n), in)
}

// sectionSlice: a slice of one section of a packed product keeps the rank's part of it, which
// lies elsewhere in the rank's product: its bounds are rewritten to where.
func (s *splitter) sectionSlice(n *graph.Node) error {
	in := n.Input(0)
	secs := s.packedOut[in]
	f, _, err := s.full(in)
	if err != nil {
		return err
	}
	lo, hi, ok := s.lastAxisSlice(n, f[len(f)-1])
	if !ok {
		return unsupported(n, "it slices the packed product %q other than along its last axis by constants", in.Name)
	}
	var off int64
	for _, sec := range secs {
		if sec.lo == lo && sec.hi == hi {
			ns := copyNode(n)
			if ns.Inputs[1], err = s.ints(n.Name+"/tp.start", n.Input(1).DType, []int64{1}, []int64{off}); err != nil {
				return err
			}
			if ns.Inputs[2], err = s.ints(n.Name+"/tp.end", n.Input(2).DType, []int64{1}, []int64{off + sec.local.count}); err != nil {
				return err
			}
			out := make([]span, len(f))
			if sec.local.count != hi-lo {
				out[len(f)-1] = span{sec.local.start - lo, sec.local.count}
			}
			return s.done(n, ns, out)
		}
		off += sec.local.count
	}
	return unsupported(n, "it slices columns [%d, %d) of the packed product %q, not one of its sections", lo, hi, in.Name)
}

// sectionSplit: a Split of a packed product into its sections gives each output the rank's part
// of its section; the rank's sizes replace the split's.
func (s *splitter) sectionSplit(n *graph.Node) error {
	in := n.Input(0)
	secs := s.packedOut[in]
	f, _, err := s.full(in)
	if err != nil {
		return err
	}
	parts, ok := s.lastAxisSplit(n, f[len(f)-1])
	if !ok || len(parts) != len(secs) {
		return unsupported(n, "it splits the packed product %q other than into its sections", in.Name)
	}
	ns := copyNode(n)
	sizes := make([]int64, len(secs))
	for i, sec := range secs {
		if parts[i].start != sec.lo || parts[i].count != sec.hi-sec.lo {
			return unsupported(n, "it splits the packed product %q other than into its sections", in.Name)
		}
		sizes[i] = sec.local.count
	}
	if n.Input(1) != nil {
		if ns.Inputs[1], err = s.ints(n.Name+"/tp.split", n.Input(1).DType, []int64{int64(len(sizes))}, sizes); err != nil {
			return err
		}
	} else if slices.ContainsFunc(sizes, func(x int64) bool { return x != sizes[0] }) {
		return unsupported(n, "it splits the packed product %q evenly, and the rank's parts are not even", in.Name)
	}
	s.emit(ns)
	for i, sec := range secs {
		out := make([]span, len(f))
		if sec.local.count != sec.hi-sec.lo {
			out[len(f)-1] = span{sec.local.start - sec.lo, sec.local.count}
		}
		if slices.ContainsFunc(out, span.split) {
			s.split[n.Output(i)] = out
		}
	}
	return nil
}

// sectionView: a view of a packed product that keeps its last axis (a Gemm's product reshaped
// back to [batch, seq, columns]) holds the same sections.
func (s *splitter) sectionView(n *graph.Node) error {
	in, out := n.Input(0), n.Output(0)
	inF, _, err := s.full(in)
	if err != nil {
		return err
	}
	outF, _, err := s.full(out)
	if err != nil {
		return err
	}
	if len(outF) == 0 || outF[len(outF)-1] != inF[len(inF)-1] {
		return unsupported(n, "it views the packed product %q with another last axis", in.Name)
	}
	if err := s.view(n); err != nil {
		return err
	}
	s.packedOut[out] = s.packedOut[in]
	return nil
}

// isCopy reports whether n copies its one input: an Identity, or a Concat of one input.
func isCopy(n *graph.Node) bool {
	return n != nil && n.Domain == "" && (n.OpType == "Identity" || n.OpType == "Concat" && len(n.Inputs) == 1)
}
