package arch

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// Options say how the graph is built.
type Options struct {
	// DType is the weights' and activations' type; 0 means the config's torch_dtype, and
	// float32 when it names none.
	DType graph.DType
	// LastLogits computes the logits of the last position only ([batch, 1, vocab]), as a
	// generation's prompt step needs; otherwise every position's ([batch, seq, vocab]).
	LastLogits bool
	// Skip are the fusions the target's kernels lack (engine.FuseOptions): the graph keeps
	// their unfused form, as rewrite.Fuse leaves an export for that target.
	Skip []rewrite.Kind
	// IgnoreWindow builds a config with a sliding window as plain causal attention: the same
	// computation while the sequence is no longer than the window (Phi-3-mini's 2047), but not
	// the graph an export of it fuses to.
	IgnoreWindow bool
}

// Input, dim and output names of the built graphs.
const (
	InputIDs      = "input_ids"
	AttentionMask = "attention_mask"
	Logits        = "logits"
	BatchDim      = "batch"
	SeqDim        = "seq"
)

// Build returns the canonical fused graph of the config's architecture, its weights declared
// by shape only: it plans, it does not run.
func (c *Config) Build(o Options) (*graph.Model, error) {
	dt, err := c.dtype(o.DType)
	if err != nil {
		return nil, err
	}
	if slices.Contains(o.Skip, rewrite.Attention) {
		return nil, fmt.Errorf("arch: the target has no kernel for the fused Attention, which the canonical graph is made of")
	}
	b := &builder{c: c, o: o, dt: dt, inits: map[string]bool{}, skip: map[rewrite.Kind]bool{}, hShape: map[int64]string{},
		band: graph.AttentionBand{Left: -1, Right: 0}, bandRows: map[graph.AttentionBand][2]string{}}
	for _, k := range o.Skip {
		b.skip[k] = true
	}
	b.spec.Opsets = map[string]int64{"": 23, "com.microsoft": 1, graph.DomainCarve: 1}
	b.spec.IRVersion = 10
	b.spec.Producer = "carve arch " + c.ModelType
	ids := graph.Shape{graph.Sym(BatchDim), graph.Sym(SeqDim)}
	b.spec.Inputs = []graph.ValueSpec{
		{Name: InputIDs, DType: graph.Int64, Shape: ids},
		{Name: AttentionMask, DType: graph.Int64, Shape: slices.Clone(ids)},
	}
	if err := families[c.ModelType].build(b); err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, b.err
	}
	m, err := graph.Build(b.spec)
	if err != nil {
		return nil, fmt.Errorf("arch: the %s graph is invalid (a bug in package arch): %w", c.ModelType, err)
	}
	return m, nil
}

// dtype resolves the graph's type: dt, else the config's torch_dtype, else float32.
func (c *Config) dtype(dt graph.DType) (graph.DType, error) {
	if dt == 0 {
		dt = c.DType
	}
	if dt == 0 {
		dt = graph.Float32
	}
	switch dt {
	case graph.Float32, graph.Float16, graph.BFloat16:
		return dt, nil
	}
	return 0, fmt.Errorf("arch: dtype %s: want float32, bfloat16 or float16", dt)
}

// builder accumulates a Spec in execution order: Build keeps a valid order as given, and the
// planner's lifetimes follow it, so the order here is the rewrite's.
type builder struct {
	c     *Config
	o     Options
	dt    graph.DType
	spec  graph.Spec
	inits map[string]bool
	skip  map[rewrite.Kind]bool
	err   error

	seq    string // the sequence length, a host scalar
	batch1 string // [batch] and [seq], host
	seq1   string
	hShape map[int64]string
	int4   int64 // KVOptions.Int4Block: products over weights as MatMulNBits blocks of that many
	// explicitHeads: the heads' views name their count (see headsShape).
	explicitHeads bool
	allowZero     bool // the heads' views have allowzero (viewAttrs)
	mShape        string
	lead          string // [batch, seq], host
	// rope is the rotary tables: [0] the model's, [1] the sliding layers' own (Config.LocalRope);
	// local picks the current layer's.
	rope  [2]rotaryTables
	local bool
	mask  string // the additive padding mask [batch, 1, 1, seq]
	// scoreBias is a bias of the scores beside the mask, [batch, heads, 1, seq] (bloom's ALiBi):
	// the mask chain adds it to the padding mask, as the rewrite adds it.
	scoreBias string
	// band is the current layer's keys (Config.band); bandRows the rows with none kept, by band.
	band     graph.AttentionBand
	bandRows map[graph.AttentionBand][2]string
	kept     string // the running count of keys kept (the mask chain's CumSum)
	rows     string // the rows with no key kept, [batch, 1, seq, 1]
	rows5    string // rows unsqueezed for grouped heads, [batch, 1, 1, seq, 1]
	posStart string
	concats  map[string]string // host Concats of shape parts, by their inputs (concat)
}

func (b *builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// node appends a node whose one output is named name, and returns name.
func (b *builder) node(name, op string, ins []string, attrs ...graph.Attribute) string {
	return b.nodeIn("", name, op, ins, attrs...)
}

func (b *builder) nodeIn(domain, name, op string, ins []string, attrs ...graph.Attribute) string {
	b.spec.Nodes = append(b.spec.Nodes, graph.NodeSpec{Name: name, OpType: op, Domain: domain, Inputs: ins,
		Outputs: []string{name}, Attrs: graph.NewAttributes(attrs...)})
	return name
}

func (b *builder) addInit(t *graph.Tensor, err error) string {
	if err != nil {
		b.fail(err)
		return ""
	}
	if !b.inits[t.Name] {
		b.inits[t.Name] = true
		b.spec.Initializers = append(b.spec.Initializers, t)
	}
	return t.Name
}

// weight declares a weight of the model's dtype by its shape only.
func (b *builder) weight(name string, shape ...int64) string {
	return b.addInit(graph.NewShapeTensor(name, b.dt, shape))
}

// floatWeight declares a float32 weight by its shape only (the rotary frequencies).
func (b *builder) floatWeight(name string, shape ...int64) string {
	return b.addInit(graph.NewShapeTensor(name, graph.Float32, shape))
}

// ints names an int64 constant: a vector, or a scalar when scalar is set.
func (b *builder) ints(name string, scalar bool, vals ...int64) string {
	if b.inits[name] {
		return name
	}
	data := make([]byte, 0, 8*len(vals))
	for _, v := range vals {
		data = binary.LittleEndian.AppendUint64(data, uint64(v))
	}
	shape := []int64{int64(len(vals))}
	if scalar {
		shape = nil
	}
	return b.addInit(graph.NewTensor(name, graph.Int64, shape, data))
}

// vec is an int64 vector constant named by its values.
func (b *builder) vec(vals ...int64) string {
	return b.ints(fmt.Sprintf("arch.%v", vals), false, vals...)
}

// f32 names a float32 scalar constant.
func (b *builder) f32(name string, v float32) string {
	if b.inits[name] {
		return name
	}
	return b.addInit(graph.NewTensor(name, graph.Float32, nil, binary.LittleEndian.AppendUint32(nil, math.Float32bits(v))))
}

// scalar names a scalar constant of the model's dtype.
func (b *builder) scalar(name string, v float64) string {
	if b.inits[name] {
		return name
	}
	var data []byte
	switch b.dt {
	case graph.Float32:
		data = binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(v)))
	case graph.BFloat16:
		bits := math.Float32bits(float32(v))
		bits += 0x7fff + (bits>>16)&1 // round to nearest even
		data = binary.LittleEndian.AppendUint16(nil, uint16(bits>>16))
	default:
		data = binary.LittleEndian.AppendUint16(nil, float16(float32(v)))
	}
	return b.addInit(graph.NewTensor(name, b.dt, nil, data))
}

// float16 converts to IEEE half precision, rounding to nearest even (constants only).
func float16(f float32) uint16 {
	bits := math.Float32bits(f)
	sign := uint16(bits>>16) & 0x8000
	exp := int32(bits>>23&0xff) - 127 + 15
	mant := bits & 0x7fffff
	switch {
	case bits&0x7fffffff == 0:
		return sign
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		h := uint16(mant >> shift)
		if rem := mant & (1<<shift - 1); rem > 1<<(shift-1) || rem == 1<<(shift-1) && h&1 == 1 {
			h++
		}
		return sign | h
	}
	h := sign | uint16(exp)<<10 | uint16(mant>>13)
	if rem := mant & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++
	}
	return h
}

func attrInt(name string, v int64) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrInt, Int: v}
}

func attrInts(name string, v ...int64) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrInts, Ints: v}
}

func attrFloat(name string, v float64) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrFloat, Float: float32(v)}
}

func attrString(name, v string) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrString, String: v}
}

// hostShape makes the host values the graph's shapes are computed from: the sequence length (a
// scalar) and [batch, seq].
func (b *builder) hostShape() {
	if b.seq != "" {
		return
	}
	b.batch1 = b.node("arch.batch1", "Shape", []string{AttentionMask}, attrInt("start", 0), attrInt("end", 1))
	b.seq1 = b.node("arch.seq1", "Shape", []string{AttentionMask}, attrInt("start", 1), attrInt("end", 2))
	b.seq = b.node("arch.seq", "Squeeze", []string{b.seq1})
}

// headsShape is [batch, seq, -1, head_dim], computed on the host as the export computes it
// (on a discrete device such a value has arena bytes, so its form matters).
// With explicitHeads the heads are counted ([batch, seq, n, head_dim]), one shape per count, as
// families that view by num_heads export it.
func (b *builder) headsShape(n int64) string {
	key := int64(-1)
	if b.explicitHeads {
		key = n
	}
	if b.hShape[key] == "" {
		b.hShape[key] = b.node(fmt.Sprintf("arch.heads_shape%d", key), "Concat", []string{b.batch1, b.seq1, b.vec(key), b.ints(fmt.Sprintf("arch.[%d]", b.c.HeadDim), false, b.c.HeadDim)}, attrInt("axis", 0))
	}
	return b.hShape[key]
}

// mergeShape is [batch, seq, -1], on the host.
func (b *builder) mergeShape() string {
	if b.mShape == "" {
		b.mShape = b.node("arch.merge_shape", "Concat", []string{b.batch1, b.seq1, b.vec(-1)}, attrInt("axis", 0))
	}
	return b.mShape
}

// embed is the token embedding, [batch, seq, hidden].
func (b *builder) embed(name string) string {
	b.hostShape()
	w := b.weight(name, b.c.Vocab, b.c.Hidden)
	return b.node("embedding", "Gather", []string{w, InputIDs}, attrInt("axis", 0))
}

// rotaryTables are one rotary base's tables: cos and sin as the prologue makes them, [1, 1, seq,
// rot], and the rewrite's caches of their first halves, [seq, rot/2], made at the first rotary.
type rotaryTables struct {
	cos, sin   string
	cosC, sinC string
}

// rotaryPrologue computes the rotary caches once, as the export does (positions times the
// inverse frequencies, concatenated with themselves, Cos and Sin): [1, 1, seq, rot]; a second
// set for the sliding layers where their base differs (Config.LocalRope).
func (b *builder) rotaryPrologue() {
	rot := b.c.RotaryDim
	if rot == 0 || b.rope[0].cos != "" {
		return
	}
	b.hostShape()
	r := b.node("rotary.arange", "Range", []string{b.ints("arch.0", true, 0), b.seq, b.ints("arch.1", true, 1)})
	pos := b.node("rotary.positions", "Unsqueeze", []string{r, b.vec(0, 1)})
	posF := b.node("rotary.positions.float", "Cast", []string{pos}, attrInt("to", int64(graph.Float32)))
	sets := 1
	if b.c.LocalRope {
		sets = 2
	}
	for i := range sets {
		p := []string{"rotary", "rotary_local"}[i]
		inv := b.floatWeight(p+".inv_freq", 1, rot/2, 1)
		fr := b.node(p+".freqs", "MatMul", []string{inv, posF})
		frT := b.node(p+".freqs.t", "Transpose", []string{fr}, attrInts("perm", 0, 2, 1))
		emb := b.node(p+".emb", "Concat", []string{frT, frT}, attrInt("axis", -1))
		cos := b.node(p+".cos", "Cos", []string{emb})
		sin := b.node(p+".sin", "Sin", []string{emb})
		if b.dt != graph.Float32 {
			cos = b.node(p+".cos.cast", "Cast", []string{cos}, attrInt("to", int64(b.dt)))
			sin = b.node(p+".sin.cast", "Cast", []string{sin}, attrInt("to", int64(b.dt)))
		}
		b.rope[i].cos = b.node(p+".cos4", "Unsqueeze", []string{cos, b.vec(1)})
		b.rope[i].sin = b.node(p+".sin4", "Unsqueeze", []string{sin, b.vec(1)})
	}
}

// tables is the current layer's rotary tables.
func (b *builder) tables() *rotaryTables {
	if b.local && b.c.LocalRope {
		return &b.rope[1]
	}
	return &b.rope[0]
}

// rotaryCaches makes the rewrite's [seq, rot/2] caches of the current layer's tables, at their
// first rotary embedding.
func (b *builder) rotaryCaches() { b.cachesOf(b.tables()) }

// otherCaches makes the caches of the tables the current layer does not use, where the rewrite
// leaves them: after the first layer's rotary embeddings.
func (b *builder) otherCaches() {
	if b.c.LocalRope {
		b.cachesOf(&b.rope[0])
		b.cachesOf(&b.rope[1])
	}
}

func (b *builder) cachesOf(t *rotaryTables) {
	if t.cosC != "" {
		return
	}
	p := "rotary"
	if t == &b.rope[1] {
		p = "rotary_local"
	}
	half := b.c.RotaryDim / 2
	st, en, ax := b.ints("rewrite.rotary.0", false, 0), b.ints(fmt.Sprintf("rewrite.rotary.%d", half), false, half), b.ints("rewrite.rotary.-1", false, -1)
	shape := b.ints(fmt.Sprintf("rewrite.rotary.cache%d", half), false, -1, half)
	t.cosC = b.node(p+".cos_cache", "Reshape", []string{b.node(p+".cos_half", "Slice", []string{t.cos, st, en, ax}), shape})
	t.sinC = b.node(p+".sin_cache", "Reshape", []string{b.node(p+".sin_half", "Slice", []string{t.sin, st, en, ax}), shape})
	b.posStart = b.ints("rewrite.rotary.position0", false, 0)
}

// rotary turns x [batch, heads, seq, head_dim] by com.microsoft.RotaryEmbedding; with a partial
// rotary, the first RotaryDim dims only (Slice, rotate, Concat), as the rewrite fuses it.
// Caches made first lets a family put the caches where its export has them.
func (b *builder) rotary(name, x string) string {
	rot, d := b.c.RotaryDim, b.c.HeadDim
	if rot == d {
		b.rotaryCaches()
		t := b.tables()
		return b.nodeIn("com.microsoft", name, "RotaryEmbedding", []string{x, b.posStart, t.cosC, t.sinC}, attrInt("interleaved", 0))
	}
	panic("partial rotary goes through rotaryPartial")
}

// rotarySlices splits x into its rotated and passed parts (partial rotary).
func (b *builder) rotarySlices(name, x string) (rot, pass string) {
	r, d := b.c.RotaryDim, b.c.HeadDim
	axis := b.ints("arch.[3]", false, 3)
	step := b.ints("arch.[1]", false, 1)
	rot = b.node(name+".rot", "Slice", []string{x, b.ints("arch.[0]", false, 0), b.ints(fmt.Sprintf("arch.[%d]", r), false, r), axis, step})
	pass = b.node(name+".pass", "Slice", []string{x, b.ints(fmt.Sprintf("arch.[%d]", r), false, r), b.ints(fmt.Sprintf("arch.[%d]", d), false, d), axis, step})
	return rot, pass
}

// rotaryPartial rotates the sliced part and concatenates the passed part back.
func (b *builder) rotaryPartial(name, rot, pass string) string {
	b.rotaryCaches()
	t := b.tables()
	y := b.nodeIn("com.microsoft", name+"/RotaryEmbedding", "RotaryEmbedding", []string{rot, b.posStart, t.cosC, t.sinC}, attrInt("interleaved", 0))
	return b.node(name, "Concat", []string{y, pass}, attrInt("axis", -1))
}

// maskChain makes the padding mask from attention_mask, as the rewrite plans it for a causal
// padding mask with a finite fill: the additive mask [batch, 1, 1, seq] and the rows whose keys
// are all masked [batch, 1, seq, 1]. rows5 also makes their grouped form now.
func (b *builder) maskChain(rows5 bool) {
	if b.mask == "" {
		keep := b.node("attention_mask/carve.keep", "Cast", []string{AttentionMask}, attrInt("to", int64(graph.Bool)))
		keys := b.node("attention_mask/carve.keep/keys", "Unsqueeze", []string{keep, b.ints("rewrite.[1,2]", false, 1, 2)})
		fill := float32(-math.MaxFloat32)
		switch b.dt {
		case graph.Float16:
			fill = -65504
		case graph.BFloat16:
			fill = -3.3895314e38
		}
		zero, neg := b.f32("rewrite.float32(0)", 0), b.f32(fmt.Sprintf("rewrite.float32(%g)", fill), fill)
		if b.dt != graph.Float32 {
			zero = b.node(zero+"."+b.dt.String(), "Cast", []string{zero}, attrInt("to", int64(b.dt)))
			neg = b.node(neg+"."+b.dt.String(), "Cast", []string{neg}, attrInt("to", int64(b.dt)))
		}
		b.mask = b.node(keys+"/mask", "Where", []string{keys, zero, neg})
		if b.scoreBias != "" { // added to the padding mask, the Attention's float mask
			b.mask = b.node(keys+"/mask+bias", "Add", []string{b.mask, b.scoreBias})
		}
		i := b.node(keys+"/int", "Cast", []string{keys}, attrInt("to", int64(graph.Int64)))
		b.kept = b.node(keys+"/kept", "CumSum", []string{i, b.ints("rewrite.-1", true, -1)})
		if !b.windowed() { // a windowed layer's rows come from its band (rowsInBand)
			b.causalRows()
		}
	}
	if rows5 {
		if b.windowed() {
			b.rowsInBand(b.band)
		} else {
			b.groupedRows()
		}
	}
}

// windowed reports whether the current layer attends within a sliding window.
func (b *builder) windowed() bool { return b.band.Left >= 0 && !b.o.IgnoreWindow }

// causalRows makes the query rows of a prompt with no key kept (causal attention), where the
// fusion finds them: at the mask chain, or at the first causal layer after windowed ones.
func (b *builder) causalRows() {
	if b.rows == "" {
		keys := "attention_mask/carve.keep/keys"
		empty := b.node(keys+"/empty", "Equal", []string{b.kept, b.ints("rewrite.0", true, 0)})
		b.rows = b.node(keys+"/empty_rows", "Transpose", []string{empty}, attrInts("perm", 0, 1, 3, 2))
	}
}

// rowsInBand is the query rows of a prompt with no key kept within the band (and those rows
// for grouped heads), as the fusion of a windowed mask finds them (rewrite.KeptInBand).
func (b *builder) rowsInBand(band graph.AttentionBand) (rows, rows5 string) {
	if r, ok := b.bandRows[band]; ok {
		return r[0], r[1]
	}
	keys := "attention_mask/carve.keep/keys"
	nodes, inits, count := rewrite.KeptInBand(keys+"/kept", band)
	b.spec.Nodes = append(b.spec.Nodes, nodes...)
	for _, t := range inits {
		b.addInit(t, nil)
	}
	name := fmt.Sprintf("%s/empty_in_band(%d,%d)", keys, band.Left, band.Right)
	empty := b.node(name, "Equal", []string{count, b.ints("rewrite.0", true, 0)})
	rows = b.node(name+"_rows", "Transpose", []string{empty}, attrInts("perm", 0, 1, 3, 2))
	if b.c.Heads != b.c.KVHeads {
		rows5 = b.node(rows+"/grouped", "Unsqueeze", []string{rows, b.ints("rewrite.[1]", false, 1)})
	}
	b.bandRows[band] = [2]string{rows, rows5}
	return rows, rows5
}

func (b *builder) groupedRows() {
	b.causalRows()
	if b.rows5 == "" && b.c.Heads != b.c.KVHeads {
		b.rows5 = b.node(b.rows+"/grouped", "Unsqueeze", []string{b.rows, b.ints("rewrite.[1]", false, 1)})
	}
}

// attention is the fused attention of q [batch, heads, seq, d] over k and v [batch, kv_heads,
// seq, d] with the padding mask and the fix of rows with no key kept: [batch, heads, seq, d].
func (b *builder) attention(name, q, k, v string) string {
	return b.attentionScaled(name, q, k, v, b.c.AttnScale)
}

// attentionScaled is attention with the given scale (opt scales q before).
func (b *builder) attentionScaled(name, q, k, v string, scale float64) string {
	c := b.c
	b.maskChain(false)
	grouped := c.Heads != c.KVHeads
	// The rows with no key kept first, then the mean of V, as the fusion leaves them.
	attrs := []graph.Attribute{attrFloat("scale", scale), attrInt("is_causal", 1)}
	if c.Softcap > 0 {
		attrs = append(attrs, attrFloat("softcap", c.Softcap))
	}
	var rows, rows5 string
	if band := b.band; b.windowed() {
		attrs = append(attrs, attrInt(graph.AttrWindowLeft, band.Left))
		rows, rows5 = b.rowsInBand(band)
	} else {
		if grouped {
			b.groupedRows()
		}
		b.causalRows()
		rows, rows5 = b.rows, b.rows5
	}
	mean := b.node(name+"/mean_v", "ReduceMean", []string{v, b.ints("rewrite.[2]", false, 2)}, attrInt("keepdims", 1))
	var mean5 string
	if grouped {
		mean5 = b.node(mean+"/grouped", "Unsqueeze", []string{mean, b.ints("rewrite.[2]", false, 2)})
	}
	raw := b.node(name+"/attention", "Attention", []string{q, k, v, b.mask}, attrs...)
	if !grouped {
		return b.node(name, "Where", []string{rows, mean, raw})
	}
	r := c.Heads / c.KVHeads
	y5 := b.node(raw+"/grouped", "Reshape", []string{raw, b.vec(0, c.KVHeads, r, -1, c.HeadDim)})
	w5 := b.node(name+"/empty_rows_fixed", "Where", []string{rows5, mean5, y5})
	return b.node(name, "Reshape", []string{w5, b.vec(0, c.Heads, -1, c.HeadDim)})
}

// linear is x [batch, seq, in] times w [in, out], plus a bias: MatMul, or with a bias the
// rewrite's Gemm over views (Flatten, Gemm, Reshape back).
func (b *builder) linear(name, x string, in, out int64, bias bool) string {
	w := b.weight(name+".weight", in, out)
	if !bias {
		return b.node(name, "MatMul", []string{x, w})
	}
	bw := b.weight(name+".bias", out)
	if b.skip[rewrite.MatMulBias] {
		mm := b.node(name+"/MatMul", "MatMul", []string{x, w})
		return b.node(name, "Add", []string{mm, bw})
	}
	a2 := b.node(name+"/Gemm/A2", "Flatten", []string{x}, attrInt("axis", 2))
	y2 := b.node(name+"/Gemm/Y2", "Gemm", []string{a2, w, bw})
	if b.lead == "" {
		b.lead = b.node("arch.shape", "Shape", []string{AttentionMask})
	}
	shape := b.node(name+"/Gemm/shapeY", "Concat", []string{b.lead, b.vec(out)}, attrInt("axis", 0))
	return b.node(name, "Reshape", []string{y2, shape})
}

// heads4 views x [batch, seq, n*d] as [batch, seq, n, d].
func (b *builder) heads4(name, x string, n int64) string {
	return b.node(name, "Reshape", []string{x, b.headsShape(n)}, b.viewAttrs()...)
}

// viewAttrs are the attributes of the heads' views: allowzero where the family's export has it
// (a view of PyTorch's, not a reshape).
func (b *builder) viewAttrs() []graph.Attribute {
	if b.allowZero {
		return []graph.Attribute{attrInt("allowzero", 1)}
	}
	return nil
}

// bhsd transposes [batch, seq, n, d] to [batch, n, seq, d].
func (b *builder) bhsd(name, x string) string {
	return b.node(name, "Transpose", []string{x}, attrInts("perm", 0, 2, 1, 3))
}

// merge turns attention's output [batch, heads, seq, d] back into [batch, seq, heads*d].
func (b *builder) merge(name, y string) string {
	t := b.node(name+".t", "Transpose", []string{y}, attrInts("perm", 0, 2, 1, 3))
	return b.node(name, "Reshape", []string{t, b.mergeShape()}, b.viewAttrs()...)
}

// rmsNorm is RMSNormalization over the last axis with a weight of width n.
func (b *builder) rmsNorm(name, x string, n int64) string {
	w := b.weight(name+".weight", n)
	return b.node(name, "RMSNormalization", []string{x, w}, attrInt("axis", -1), attrFloat("epsilon", b.c.Eps), attrInt("stash_type", 1))
}

// layerNorm is LayerNormalization over the last axis, with a bias unless noBias.
func (b *builder) layerNorm(name, x string, n int64, bias bool) string {
	ins := []string{x, b.weight(name+".weight", n)}
	if bias {
		ins = append(ins, b.weight(name+".bias", n))
	}
	return b.node(name, "LayerNormalization", ins, attrInt("axis", -1), attrFloat("epsilon", b.c.Eps), attrInt("stash_type", 1))
}

// swiglu is the gated MLP's silu(gate) * up: GatedMatMul where the target has it, else two
// products and SwiGLU.
func (b *builder) swiglu(name, x string, bias bool) string {
	c := b.c
	if !b.skip[rewrite.GatedMatMul] && !bias {
		wg := b.weight(name+".gate_proj.weight", c.Hidden, c.Intermediate)
		wu := b.weight(name+".up_proj.weight", c.Hidden, c.Intermediate)
		return b.nodeIn(graph.DomainCarve, name+".act", "GatedMatMul", []string{x, wg, wu}, attrFloat("alpha", 1))
	}
	g := b.linear(name+".gate_proj", x, c.Hidden, c.Intermediate, bias)
	u := b.linear(name+".up_proj", x, c.Hidden, c.Intermediate, bias)
	return b.nodeIn(graph.DomainCarve, name+".act", "SwiGLU", []string{g, u}, attrFloat("alpha", 1))
}

// scale multiplies x by a scalar unless it is 1.
func (b *builder) scale(name, x string, v float64) string {
	if v == 1 {
		return x
	}
	return b.node(name, "Mul", []string{x, b.scalar(name+".scale", v)})
}

// lmHead is the final norm's output times the LM head [hidden, vocab] (a tied head is the
// export's transposed copy of the embedding), at the last position only with LastLogits.
func (b *builder) lmHead(h string) {
	c := b.c
	h, w := b.lmHeadInputs(h)
	switch {
	case c.FinalSoftcap > 0: // logits = cap * tanh(logits / cap), as the export computes it
		y := b.node("lm_head", "MatMul", []string{h, w})
		cap := b.scalar("logits.softcap", c.FinalSoftcap)
		t := b.node("logits.tanh", "Tanh", []string{b.node("logits.scaled", "Div", []string{y, cap})})
		b.node(Logits, "Mul", []string{t, cap})
	case c.LogitsScale == 1:
		b.node(Logits, "MatMul", []string{h, w})
	default:
		y := b.node("lm_head", "MatMul", []string{h, w})
		b.node(Logits, "Mul", []string{y, b.scalar("logits.scale", c.LogitsScale)})
	}
	b.spec.Outputs = []string{Logits}
}

// lmHeadInputs are the LM head's input, h or with LastLogits its last position, and its weight
// [hidden, vocab] (a tied head is the export's transposed copy of the embedding).
func (b *builder) lmHeadInputs(h string) (x, w string) {
	c := b.c
	if b.o.LastLogits {
		h = b.node("last_position", "Gather", []string{h, b.ints("arch.[-1]", false, -1)}, attrInt("axis", 1))
	}
	name := "lm_head.weight"
	if c.Tied {
		name = "lm_head.weight (tied: the exporter's transposed copy of the embedding)"
	}
	return h, b.weight(name, c.Hidden, c.Vocab)
}

// lmHeadBias is the LM head with a bias (phi, gptj): the rewrite's Gemm over rows of the final
// norm's output, at the last position only with LastLogits.
func (b *builder) lmHeadBias(h string) {
	c := b.c
	h, w := b.lmHeadInputs(h)
	bw := b.weight("lm_head.bias", c.Vocab)
	if b.skip[rewrite.MatMulBias] {
		b.node(Logits, "Add", []string{b.node("lm_head", "MatMul", []string{h, w}), bw})
	} else {
		b.gemmRows(Logits, h, c.Vocab, w, bw)
	}
	b.spec.Outputs = []string{Logits}
}

// moeBlock is a mixture-of-experts MLP over x [batch, seq, hidden] as onnxruntime GenAI writes
// it for the CPU (and tools/fixtures/gqa_builder.py after it): x's rows, the router's logits
// (MatMul), one com.microsoft.MoE of SwiGLU experts (gate and up interleaved in fc1 [E, 2I,
// hidden], fc2 [E, hidden, I]) and the rows viewed as x again.
func (b *builder) moeBlock(name string, x string) string {
	c := b.c
	rows := b.node(name+"_rows", "Reshape", []string{x, b.ints(name+".rows_shape", false, -1, c.Hidden)})
	logits := b.node(name+"_router", "MatMul", []string{rows, b.weight(name+".router.weight.T", c.Hidden, c.Experts)})
	fc1 := b.weight(name+".fc1", c.Experts, 2*c.Intermediate, c.Hidden)
	fc2 := b.weight(name+".fc2", c.Experts, c.Hidden, c.Intermediate)
	y := b.nodeIn("com.microsoft", name+"_moe", "MoE", []string{rows, logits, fc1, "", fc2},
		attrInt("k", c.ExpertsPerToken), attrString("activation_type", "swiglu"), attrInt("swiglu_fusion", 1),
		attrInt("normalize_routing_weights", 1), attrFloat("activation_alpha", 1), attrFloat("activation_beta", 0))
	return b.node(name, "Reshape", []string{y, b.node(name+"_shape", "Shape", []string{x})})
}

// nodeSpec is a node of several outputs.
func nodeSpec(name, op string, ins, outs []string, attrs ...graph.Attribute) graph.NodeSpec {
	return graph.NodeSpec{Name: name, OpType: op, Inputs: ins, Outputs: outs, Attrs: graph.NewAttributes(attrs...)}
}
