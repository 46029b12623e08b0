package arch

import (
	"fmt"
	"slices"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// Names and dims of the KV-cache graph (BuildKV), as onnxruntime GenAI's builder writes them.
const (
	PastKey      = "past_key_values.%d.key"
	PastValue    = "past_key_values.%d.value"
	PresentKey   = "present.%d.key"
	PresentValue = "present.%d.value"
	TotalSeqDim  = "total_seq" // the attention mask's length: the positions so far
	MaxSeqDim    = "max_seq"   // the cache buffer's length: the context
)

// KVOptions say how BuildKV builds the decode graph.
type KVOptions struct {
	// DType is the weights', activations' and cache's type; 0 means the config's torch_dtype,
	// and float32 when it names none.
	DType graph.DType
	// Skip are the fusions the target's kernels lack (engine.FuseOptions), as in Options.
	Skip []rewrite.Kind
	// SeparateQKV makes q, k and v three products, as GenAI's builder writes models for
	// DirectML; otherwise one packed q|k|v product whose output GroupQueryAttention splits, as
	// it writes them for its CUDA and CPU providers (the default).
	SeparateQKV bool
	// RotaryPositions is the rows of the rotary caches (cos_cache, sin_cache [rows, rot/2]), the
	// builder's context_length; 0 means the config's max_position_embeddings.
	RotaryPositions int64
	// Int4Block, when not 0, makes every product over a weight (the projections, the MLP's, the
	// LM head) com.microsoft.MatMulNBits with 4-bit symmetric weights in blocks of that many
	// along K and one DType scale per block, as GenAI's builder writes `-p int4` models through
	// onnxruntime's MatMulNBitsQuantizer: weights [N, ceil(K/block), block/2] uint8 and scales
	// [N, ceil(K/block)]. A power of two from 16 to 256. The embedding, the norms and an MoE's
	// experts keep DType.
	Int4Block int64
}

// Int4Blocks are the block sizes MatMulNBits takes.
var Int4Blocks = []int64{16, 32, 64, 128, 256}

// kvFamilies are the families BuildKV builds: the Llama lineage as GenAI's builder writes it,
// Phi-3's packed projections split (or q|k|v packed again) and Granite's multipliers as Mul
// nodes.
var kvFamilies = []string{"gemma3_text", "granite", "llama", "mistral", "mixtral", "phi3", "qwen2"}

// KVFamilies returns the model_types BuildKV builds.
func KVFamilies() []string { return slices.Clone(kvFamilies) }

// BuildKV returns the decode graph with a KV cache in onnxruntime GenAI's form, fused as
// package rewrite leaves such an export, its weights declared by shape only:
//
//	inputs   input_ids [batch, seq], attention_mask [batch, total_seq] (int64),
//	         past_key_values.{i}.key|value [batch, kv_heads, max_seq, head_dim]
//	outputs  logits [batch, seq, vocab], present.{i}.key|value (the same buffer as the past)
//
// seqlens_k (the mask's sum less one, int32 [batch, 1]) and total_sequence_length (the mask's
// length, an int32 scalar) are computed from the mask; each layer is
// SkipSimplifiedLayerNormalization (SimplifiedLayerNormalization first), the q, k, v products
// (packed unless SeparateQKV), com.microsoft.GroupQueryAttention with the rotary inside
// (do_rotary, cos_cache and sin_cache of RotaryPositions rows, local_window_size from a
// sliding window), o_proj, SkipSimplifiedLayerNormalization and the gated MLP; a last
// SkipSimplifiedLayerNormalization and the LM head. This is tools/fixtures/gqa_builder.py's
// graph, which the zoo's *.gqa models are, and package generate recognises it as the
// shared-buffer form.
func (c *Config) BuildKV(o KVOptions) (*graph.Model, error) {
	dt, err := c.dtype(o.DType)
	if err != nil {
		return nil, err
	}
	_, ok := llamaStyles[c.Family]
	if !ok || !slices.Contains(kvFamilies, c.Family) {
		return nil, &ConfigError{ModelType: c.ModelType, Field: "model_type", Problem: "the KV-cache graph (onnxruntime GenAI's form) is not built for this family yet",
			Supported: KVFamilies()}
	}
	switch {
	case c.RotaryDim != c.HeadDim:
		return nil, &ConfigError{ModelType: c.ModelType, Field: "partial_rotary_factor", Problem: fmt.Sprintf("rotates %d of head_dim %d dims: the KV-cache graph is built for a full rotary only", c.RotaryDim, c.HeadDim)}
	}
	rows := o.RotaryPositions
	if rows == 0 {
		rows = c.Positions
	}
	if rows < 1 {
		return nil, &ConfigError{ModelType: c.ModelType, Field: "max_position_embeddings", Problem: "missing: the KV-cache graph's rotary caches have that many rows (GenAI's context_length); give it, or the rows"}
	}
	if rows > 1<<31 {
		return nil, &ConfigError{ModelType: c.ModelType, Field: "max_position_embeddings", Problem: fmt.Sprintf("%d is too large", rows)}
	}
	if slices.Contains(o.Skip, rewrite.SwiGLU) {
		return nil, fmt.Errorf("arch: the target has no kernel for the fused SwiGLU, which the KV-cache graph's MLP is made of")
	}
	if o.Int4Block != 0 {
		if !slices.Contains(Int4Blocks, o.Int4Block) {
			return nil, fmt.Errorf("arch: int4 block size %d: want one of %v", o.Int4Block, Int4Blocks)
		}
		if c.Experts > 0 {
			return nil, &ConfigError{ModelType: c.ModelType, Field: "num_local_experts", Problem: "int4 weights are built for dense MLPs only: an MoE's experts are not quantized by MatMulNBits"}
		}
	}
	b := &builder{c: c, dt: dt, inits: map[string]bool{}, skip: map[rewrite.Kind]bool{}, hShape: map[int64]string{}, int4: o.Int4Block}
	for _, k := range o.Skip {
		b.skip[k] = true
	}
	b.spec.Opsets = map[string]int64{"": 21, "com.microsoft": 1, graph.DomainCarve: 1}
	b.spec.IRVersion = 10
	b.spec.Producer = "carve arch " + c.ModelType + " (onnxruntime GenAI's KV-cache form)"
	kvShape := graph.Shape{graph.Sym(BatchDim), graph.Const(c.KVHeads), graph.Sym(MaxSeqDim), graph.Const(c.HeadDim)}
	b.spec.Inputs = []graph.ValueSpec{
		{Name: InputIDs, DType: graph.Int64, Shape: graph.Shape{graph.Sym(BatchDim), graph.Sym(SeqDim)}},
		{Name: AttentionMask, DType: graph.Int64, Shape: graph.Shape{graph.Sym(BatchDim), graph.Sym(TotalSeqDim)}},
	}
	for i := 0; i < c.Layers; i++ {
		for _, name := range []string{PastKey, PastValue} {
			b.spec.Inputs = append(b.spec.Inputs, graph.ValueSpec{Name: fmt.Sprintf(name, i), DType: dt, Shape: slices.Clone(kvShape)})
		}
	}
	b.buildGenAI(rows, o.SeparateQKV)
	if b.err != nil {
		return nil, b.err
	}
	m, err := graph.Build(b.spec)
	if err != nil {
		return nil, fmt.Errorf("arch: the %s KV-cache graph is invalid (a bug in package arch): %w", c.ModelType, err)
	}
	return m, nil
}

// buildGenAI appends the nodes of the GenAI form in the order the rewrite leaves an export of it.
func (b *builder) buildGenAI(rows int64, separate bool) {
	c := b.c
	one := b.ints("one_i64", false, 1)
	oneScalar := b.ints("one_scalar_i64", true, 1)
	sum := b.node("mask_sum", "ReduceSum", []string{AttentionMask, one}, attrInt("keepdims", 1))
	lens := b.node("mask_sum_minus_1", "Sub", []string{sum, oneScalar})
	seqlens := b.node("seqlens_k", "Cast", []string{lens}, attrInt("to", int64(graph.Int32)))
	shape := b.node("mask_shape", "Shape", []string{AttentionMask})
	total := b.node("total_seq_i64", "Gather", []string{shape, oneScalar}, attrInt("axis", 0))
	totalLen := b.node("total_sequence_length", "Cast", []string{total}, attrInt("to", int64(graph.Int32)))
	cos := b.weight("cos_cache", rows, c.RotaryDim/2)
	sin := b.weight("sin_cache", rows, c.RotaryDim/2)
	cosLocal, sinLocal := cos, sin
	if c.LocalRope { // the sliding layers' tables of their own base (gemma3)
		cosLocal = b.weight("cos_cache_local", rows, c.RotaryDim/2)
		sinLocal = b.weight("sin_cache_local", rows, c.RotaryDim/2)
	}
	st := llamaStyles[c.Family]
	b.weight("model.embed_tokens.weight", c.Vocab, c.Hidden)
	x := b.node("embeds", "Gather", []string{"model.embed_tokens.weight", InputIDs}, attrInt("axis", 0))
	switch {
	case st.embedScale:
		x = b.node("embeds_scaled", "Mul", []string{x, b.scalar("embed_scale", c.EmbedScale)})
	case c.EmbedScale != 1: // granite's embedding_multiplier
		x = b.node("embeds_scaled", "Mul", []string{x, b.scalar("embed_multiplier", c.EmbedScale)})
	}
	// residualScaled scales a block's output before it joins the residual (granite's
	// residual_multiplier); y itself when that is 1.
	residualScaled := func(name, y string) string {
		if c.ResidScale == 1 {
			return y
		}
		return b.node(name, "Mul", []string{y, b.scalar("residual_multiplier", c.ResidScale)})
	}

	skipNorm := func(name, y, residual, w, resOut string) (string, string) {
		b.spec.Nodes = append(b.spec.Nodes, graph.NodeSpec{Name: name, OpType: "SkipSimplifiedLayerNormalization", Domain: "com.microsoft",
			Inputs: []string{y, residual, w}, Outputs: []string{name, "", "", resOut}, Attrs: graph.NewAttributes(attrFloat("epsilon", c.Eps))})
		return name, resOut
	}
	norm := func(name, y, w string) string {
		return b.node(name, "SimplifiedLayerNormalization", []string{y, w}, attrInt("axis", -1), attrFloat("epsilon", c.Eps))
	}
	// headNorm is gemma3's q_norm or k_norm as GenAI writes it: the projection viewed as heads,
	// normalised over head_dim, viewed back.
	headNorm := func(name, y, w string, heads int64) string {
		split := b.node(name+"_heads", "Reshape", []string{y, b.ints(name+".split_shape", false, 0, 0, heads, c.HeadDim)})
		n := norm(name+"_normed", split, w)
		return b.node(name, "Reshape", []string{n, b.ints(name+".merge_shape", false, 0, 0, heads*c.HeadDim)})
	}
	qd, kvd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	residual, pending := x, ""
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d", i)
		a := p + ".self_attn"
		ln := b.weight(p+".input_layernorm.weight", c.Hidden)
		var h string
		if pending == "" {
			h = norm(p+".input_layernorm", residual, ln)
		} else {
			h, residual = skipNorm(p+".input_layernorm", pending, residual, ln, p+".residual_in")
		}
		perHead := st.qkNorm == "head" || st.qkNorm == "head_t" // GenAI normalises each head's view
		var q, k, v string
		if separate || perHead {
			q = b.genaiLinear(p+".q", h, a+".q_proj", c.Hidden, qd, c.AttnBias)
			k = b.genaiLinear(p+".k", h, a+".k_proj", c.Hidden, kvd, c.AttnBias)
			v = b.genaiLinear(p+".v", h, a+".v_proj", c.Hidden, kvd, c.AttnBias)
			if perHead {
				q = headNorm(p+".q_normed", q, b.weight(a+".q_norm.weight", c.HeadDim), c.Heads)
				k = headNorm(p+".k_normed", k, b.weight(a+".k_norm.weight", c.HeadDim), c.KVHeads)
			}
		} else {
			q = b.genaiLinear(p+".qkv", h, a+".qkv_proj", c.Hidden, qd+2*kvd, c.AttnBias)
		}
		attrs := []graph.Attribute{attrInt("do_rotary", 1), attrInt("kv_num_heads", c.KVHeads), attrInt("num_heads", c.Heads),
			attrInt("rotary_interleaved", 0), attrFloat("scale", c.AttnScale)}
		layerCos, layerSin := cos, sin
		if c.band(i).Left >= 0 {
			attrs = append(attrs, attrInt("local_window_size", c.SlidingWindow))
			layerCos, layerSin = cosLocal, sinLocal
		}
		if c.Softcap > 0 {
			attrs = append(attrs, attrFloat("softcap", c.Softcap))
		}
		att := p + ".attn"
		b.spec.Nodes = append(b.spec.Nodes, graph.NodeSpec{Name: att, OpType: "GroupQueryAttention", Domain: "com.microsoft",
			Inputs:  []string{q, k, v, fmt.Sprintf(PastKey, i), fmt.Sprintf(PastValue, i), seqlens, totalLen, layerCos, layerSin},
			Outputs: []string{att, fmt.Sprintf(PresentKey, i), fmt.Sprintf(PresentValue, i)}, Attrs: graph.NewAttributes(attrs...)})
		o := residualScaled(p+".o_scaled", b.genaiLinear(p+".o", att, a+".o_proj", qd, c.Hidden, c.OutBias))
		if st.sandwich {
			o = norm(p+".post_attention_layernorm", o, b.weight(p+".post_attention_layernorm.weight", c.Hidden))
			h, residual = skipNorm(p+".pre_feedforward_layernorm", o, residual, b.weight(p+".pre_feedforward_layernorm.weight", c.Hidden), p+".residual_mid")
		} else {
			pln := b.weight(p+".post_attention_layernorm.weight", c.Hidden)
			h, residual = skipNorm(p+".post_attention_layernorm", o, residual, pln, p+".residual_mid")
		}
		m := p + ".mlp"
		if c.Experts > 0 {
			pending = b.moeBlock(m, h)
			continue
		}
		var act string
		switch {
		case st.geglu: // gelu_tanh(gate) * up, which the rewrite leaves as exported
			g := b.genaiLinear(p+".gate", h, m+".gate_proj", c.Hidden, c.Intermediate, c.MLPBias)
			u := b.genaiLinear(p+".up", h, m+".up_proj", c.Hidden, c.Intermediate, c.MLPBias)
			gl := b.node(p+".gate_gelu", "Gelu", []string{g}, attrString("approximate", "tanh"))
			act = b.node(p+".gate_up", "Mul", []string{gl, u})
		case !b.skip[rewrite.GatedMatMul] && !c.MLPBias && b.int4 == 0:
			wg := b.weight(m+".gate_proj.weight.T", c.Hidden, c.Intermediate)
			wu := b.weight(m+".up_proj.weight.T", c.Hidden, c.Intermediate)
			act = b.nodeIn(graph.DomainCarve, p+".gate_up", "GatedMatMul", []string{h, wg, wu}, attrFloat("alpha", 1))
		default:
			g := b.genaiLinear(p+".gate", h, m+".gate_proj", c.Hidden, c.Intermediate, c.MLPBias)
			u := b.genaiLinear(p+".up", h, m+".up_proj", c.Hidden, c.Intermediate, c.MLPBias)
			act = b.nodeIn(graph.DomainCarve, p+".gate_up", "SwiGLU", []string{g, u}, attrFloat("alpha", 1))
		}
		pending = residualScaled(p+".mlp_scaled", b.genaiLinear(p+".mlp", act, m+".down_proj", c.Intermediate, c.Hidden, c.MLPBias))
		if st.sandwich {
			pending = norm(p+".post_feedforward_layernorm", pending, b.weight(p+".post_feedforward_layernorm.weight", c.Hidden))
		}
	}
	fn := b.weight("model.norm.weight", c.Hidden)
	h, _ := skipNorm("model.norm", pending, residual, fn, "model.residual_out")
	if c.FinalSoftcap > 0 { // logits = cap * tanh(logits / cap)
		y := b.genaiLinear("logits_raw", h, "lm_head", c.Hidden, c.Vocab, false)
		cp := b.scalar("final_softcap", c.FinalSoftcap)
		t := b.node("logits_tanh", "Tanh", []string{b.node("logits_scaled", "Div", []string{y, cp})})
		b.node(Logits, "Mul", []string{t, cp})
	} else if c.LogitsScale != 1 { // granite: logits times 1 / logits_scaling
		y := b.genaiLinear("logits_raw", h, "lm_head", c.Hidden, c.Vocab, false)
		b.node(Logits, "Mul", []string{y, b.scalar("logits_multiplier", c.LogitsScale)})
	} else {
		b.genaiLinear(Logits, h, "lm_head", c.Hidden, c.Vocab, false)
	}
	b.spec.Outputs = []string{Logits}
	for i := 0; i < c.Layers; i++ {
		b.spec.Outputs = append(b.spec.Outputs, fmt.Sprintf(PresentKey, i), fmt.Sprintf(PresentValue, i))
	}
}

// genaiLinear is x [batch, seq, in] times the weight [in, out] (GenAI's transposed copy), plus a
// bias: MatMul, or with a bias the rewrite's Gemm over views of the export's MatMul and Add
// (Flatten, Gemm, the shape [batch, seq, out] from x's, Reshape back), or MatMul and Add where
// the target lacks that fusion.
func (b *builder) genaiLinear(name, x, weight string, in, out int64, bias bool) string {
	if b.int4 != 0 {
		return b.genaiInt4(name, x, weight, in, out, bias)
	}
	w := b.weight(weight+".weight.T", in, out)
	if !bias {
		return b.node(name, "MatMul", []string{x, w})
	}
	bw := b.weight(weight+".bias", out)
	if b.skip[rewrite.MatMulBias] {
		mm := b.node(name+"_mm", "MatMul", []string{x, w})
		return b.node(name, "Add", []string{mm, bw})
	}
	a2 := b.node(name+"/Gemm/A2", "Flatten", []string{x}, attrInt("axis", 2))
	y2 := b.node(name+"/Gemm/Y2", "Gemm", []string{a2, w, bw})
	sa := b.node(name+"/Gemm/shapeA", "Shape", []string{x})
	lead := b.node(name+"/Gemm/lead", "Slice", []string{sa, b.ints("rewrite.[0]", false, 0), b.ints("rewrite.[-1]", false, -1)})
	sy := b.node(name+"/Gemm/shapeY", "Concat", []string{lead, b.ints(fmt.Sprintf("rewrite.[%d]", out), false, out)}, attrInt("axis", 0))
	return b.node(name, "Reshape", []string{y2, sy})
}

// genaiInt4 is genaiLinear with int4 weights: MatMulNBits over the quantized transposed copy, as
// onnxruntime's MatMulNBitsQuantizer rewrites the MatMul (named for it, its output kept), and the
// bias after it.
func (b *builder) genaiInt4(name, x, weight string, in, out int64, bias bool) string {
	blocks := (in + b.int4 - 1) / b.int4
	w := b.addInit(graph.NewShapeTensor(weight+".weight.T_Q4", graph.Uint8, []int64{out, blocks, b.int4 / 2}))
	sc := b.weight(weight+".weight.T_scales", out, blocks)
	mm := name
	if bias {
		mm = name + "_mm"
	}
	b.spec.Nodes = append(b.spec.Nodes, graph.NodeSpec{Name: mm + "_Q4", OpType: "MatMulNBits", Domain: "com.microsoft",
		Inputs: []string{x, w, sc}, Outputs: []string{mm},
		Attrs: graph.NewAttributes(attrInt("K", in), attrInt("N", out), attrInt("bits", 4), attrInt("block_size", b.int4))})
	if !bias {
		return mm
	}
	return b.node(name, "Add", []string{mm, b.weight(weight+".bias", out)})
}
