package arch

import (
	"fmt"
	"math"
	"strings"

	"carve.dev/libs/graph/rewrite"
)

// The LayerNorm decoders with learned positions (gpt2, gpt_bigcode, opt), each built in the order
// the rewrite leaves its dynamo export: their linear layers are the exporter's GEMMs over
// [batch*seq, in] views (gpt2's Conv1D), or the rewrite's Gemm over rows of a MatMul and a bias.

func init() {
	register(&family{name: "gpt2", read: readGPT2, build: buildGPT2, tied: true})
	register(&family{name: "gpt_bigcode", read: readGPT2, build: buildBigCode, tied: true})
	register(&family{name: "opt", read: readOPT, build: buildOPT, tied: true})
}

// gelu reads the approximation of a GELU activation as transformers names it: "tanh" or "none".
func (r *reader) gelu(field, name string) string {
	switch name {
	case "gelu_new", "gelu_pytorch_tanh", "gelu_fast", "gelu_python_tanh":
		return "tanh"
	case "gelu", "gelu_python":
		return "none"
	}
	r.fail(field, fmt.Sprintf("%q: the %s family's MLP is built with gelu (erf) or gelu_new (tanh)", name, r.c.Family))
	return ""
}

// readGPT2 reads gpt2's and gpt_bigcode's fields (n_embd, n_head, n_inner, n_positions, ...).
func readGPT2(c *Config, r *reader) {
	c.Hidden = r.need("n_embd", "hidden_size")
	c.Layers = int(r.need("n_layer", "num_hidden_layers"))
	c.Heads = r.need("n_head", "num_attention_heads")
	c.KVHeads = c.Heads
	if c.Family == "gpt_bigcode" {
		if !r.boolean("multi_query", true) {
			r.fail("multi_query", "false: gpt_bigcode with a key and value per head is not built yet")
		}
		c.KVHeads = 1
	}
	if c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
		if c.Hidden%c.Heads != 0 {
			r.fail("n_head", fmt.Sprintf("%d does not divide n_embd %d", c.Heads, c.Hidden))
		}
	}
	c.Intermediate = 4 * c.Hidden
	if v, ok := r.opt("n_inner"); ok {
		c.Intermediate = v
	}
	c.Vocab = r.need("vocab_size")
	c.MaxPositions = r.need("n_positions", "max_position_embeddings")
	c.Positions = c.MaxPositions
	c.Eps = r.float(1e-5, "layer_norm_epsilon")
	c.Activation = r.gelu("activation_function", r.str("activation_function", "gelu_new"))
	c.AttnBias, c.OutBias, c.MLPBias = true, true, true
	c.AttnScale = 1
	if r.boolean("scale_attn_weights", true) && c.HeadDim > 0 {
		c.AttnScale = 1 / math.Sqrt(float64(c.HeadDim))
	}
	if r.boolean("scale_attn_by_inverse_layer_idx", false) {
		r.fail("scale_attn_by_inverse_layer_idx", "true: a scale per layer is not built yet")
	}
	if r.boolean("add_cross_attention", false) {
		r.fail("add_cross_attention", "true: a decoder with cross-attention is not built")
	}
}

// readOPT reads opt's fields.
func readOPT(c *Config, r *reader) {
	c.Hidden = r.need("hidden_size")
	c.Layers = int(r.need("num_hidden_layers"))
	c.Heads = r.need("num_attention_heads")
	c.KVHeads = c.Heads
	if c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
		c.AttnScale = 1 / math.Sqrt(float64(c.HeadDim))
	}
	c.Intermediate = r.need("ffn_dim")
	c.Vocab = r.need("vocab_size")
	c.MaxPositions = r.need("max_position_embeddings")
	c.Positions = c.MaxPositions
	c.Eps = 1e-5
	c.Activation = r.str("activation_function", "relu")
	if c.Activation != "relu" {
		r.fail("activation_function", fmt.Sprintf("%q: opt's MLP is built with relu", c.Activation))
	}
	bias := r.boolean("enable_bias", true)
	c.AttnBias, c.OutBias, c.MLPBias = bias, bias, bias
	if !r.boolean("do_layer_norm_before", true) {
		r.fail("do_layer_norm_before", "false: opt with norms after attention and the MLP (OPT-350m) is not built yet")
	}
	if r.boolean("_remove_final_layer_norm", false) {
		r.fail("_remove_final_layer_norm", "true: opt without its final norm is not built yet")
	}
	if !r.boolean("layer_norm_elementwise_affine", true) {
		r.fail("layer_norm_elementwise_affine", "false: norms without weights are not built yet")
	}
	if p, ok := r.opt("word_embed_proj_dim"); ok && p != c.Hidden {
		r.fail("word_embed_proj_dim", fmt.Sprintf("%d: an embedding projected to hidden_size %d (project_in, project_out) is not built yet", p, c.Hidden))
	}
}

// gemmRows is the rewrite's Gemm over x's rows (Flatten, Gemm, the shape back from x's: Shape,
// Slice, Concat, Reshape) of weight [in, out] and a bias.
func (b *builder) gemmRows(name, x string, out int64, w, bias string) string {
	a2 := b.node(name+"/Gemm/A2", "Flatten", []string{x}, attrInt("axis", 2))
	y2 := b.node(name+"/Gemm/Y2", "Gemm", []string{a2, w, bias})
	sa := b.node(name+"/Gemm/shapeA", "Shape", []string{x})
	lead := b.node(name+"/Gemm/lead", "Slice", []string{sa, b.ints("rewrite.[0]", false, 0), b.ints("rewrite.[-1]", false, -1)})
	sy := b.node(name+"/Gemm/shapeY", "Concat", []string{lead, b.ints(fmt.Sprintf("rewrite.[%d]", out), false, out)}, attrInt("axis", 0))
	return b.node(name, "Reshape", []string{y2, sy})
}

// linearRows is x [batch, seq, in] times the weight [in, out]: the rewrite's Gemm over rows with
// a bias (MatMul and Add where the target lacks it), MatMul without.
func (b *builder) linearRows(name, x string, in, out int64, bias bool) string {
	w := b.weight(name+".weight", in, out)
	if !bias {
		return b.node(name, "MatMul", []string{x, w})
	}
	bw := b.weight(name+".bias", out)
	if b.skip[rewrite.MatMulBias] {
		return b.node(name, "Add", []string{b.node(name+"/MatMul", "MatMul", []string{x, w}), bw})
	}
	return b.gemmRows(name, x, out, w, bw)
}

// gemm2 is the exporter's GEMM of a 2-D x [rows, in] and the weight (a Conv1D's [in, out], or a
// Linear's [out, in] with transB), with a bias when bias.
func (b *builder) gemm2(name, x string, in, out int64, bias, transB bool) string {
	var w string
	if transB {
		w = b.weight(name+".weight", out, in)
	} else {
		w = b.weight(name+".weight", in, out)
	}
	ins := []string{x, w}
	if bias {
		ins = append(ins, b.weight(name+".bias", out))
	}
	var t int64
	if transB {
		t = 1
	}
	return b.node(name, "Gemm", ins, attrFloat("alpha", 1), attrFloat("beta", 1), attrInt("transA", 0), attrInt("transB", t))
}

// learnedPositions adds the position embedding of positions 0..seq-1 to h (gpt2, gpt_bigcode).
func (b *builder) learnedPositions(name, h string) string {
	r := b.node("positions", "Range", []string{b.ints("arch.0", true, 0), b.seq, b.ints("arch.1", true, 1)})
	pos := b.node("positions.row", "Unsqueeze", []string{r, b.vec(0)})
	pe := b.node("position_embedding", "Gather", []string{b.weight(name, b.c.MaxPositions, b.c.Hidden), pos}, attrInt("axis", 0))
	return b.node("embedding.positioned", "Add", []string{h, pe})
}

// concat is the host Concat of ins (shape parts: the mask's dims, constants), made once.
func (b *builder) concat(ins ...string) string {
	key := strings.Join(ins, ",")
	if b.concats == nil {
		b.concats = map[string]string{}
	}
	if v, ok := b.concats[key]; ok {
		return v
	}
	v := b.node("arch.concat("+key+")", "Concat", ins, attrInt("axis", 0))
	b.concats[key] = v
	return v
}

func (b *builder) gelu(name, x string) string {
	return b.node(name, "Gelu", []string{x}, attrString("approximate", b.c.Activation))
}

func (b *builder) needFusions(kinds ...rewrite.Kind) error {
	for _, k := range kinds {
		if b.skip[k] {
			return fmt.Errorf("arch: the target has no kernel for the fused %s, which the %s graph is made of", k, b.c.Family)
		}
	}
	return nil
}

// buildGPT2 builds gpt2 as the rewrite leaves its dynamo export: Conv1D layers as GEMMs over
// [batch*seq, in] views, q, k and v split from one product (a tied LM head is the exporter's
// transposed copy of the embedding, as lmHead says).
func buildGPT2(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm, rewrite.Gelu); err != nil {
		return err
	}
	b.hostShape()
	m1 := b.vec(-1)
	ids := b.node("input_ids.view", "Reshape", []string{InputIDs, b.concat(m1, b.seq1)}, attrInt("allowzero", 1))
	h := b.node("embedding", "Gather", []string{b.weight("transformer.wte.weight", c.Vocab, c.Hidden), ids}, attrInt("axis", 0))
	h = b.learnedPositions("transformer.wpe.weight", h)
	rowsH, rowsI := b.vec(-1, c.Hidden), b.vec(-1, c.Intermediate)
	view := func(name, x, shape string) string {
		return b.node(name, "Reshape", []string{x, shape}, attrInt("allowzero", 1))
	}
	var sH, sI, sOut string
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("transformer.h.%d", i)
		x := view(p+".ln_1.rows", b.layerNorm(p+".ln_1", h, c.Hidden, true), rowsH)
		qkv := b.gemm2(p+".attn.c_attn", x, c.Hidden, 3*c.Hidden, c.AttnBias, false)
		qkv = view(p+".attn.qkv", qkv, b.concat(b.batch1, b.seq1, b.vec(3*c.Hidden)))
		q, k, v := p+".attn.q", p+".attn.k", p+".attn.v"
		b.spec.Nodes = append(b.spec.Nodes, nodeSpec(p+".attn.split", "Split", []string{qkv}, []string{q, k, v}, attrInt("axis", 2), attrInt("num_outputs", 3)))
		hs := b.concat(b.batch1, b.seq1, m1, b.vec(c.HeadDim))
		k = b.bhsd(k+"4", view(k+"3", k, hs))
		v = b.bhsd(v+"4", view(v+"3", v, hs))
		q = b.bhsd(q+"4", view(q+"3", q, hs))
		if i == 0 {
			sH = b.concat(b.batch1, b.seq1, b.vec(c.Hidden))
			sI = b.concat(b.batch1, b.seq1, b.vec(c.Intermediate))
			sOut = b.concat(m1, b.seq1, b.vec(c.Hidden))
		}
		y := b.attention(p+".attn.attention", q, k, v)
		t := b.node(p+".attn.merged.t", "Transpose", []string{y}, attrInts("perm", 0, 2, 1, 3))
		t = b.node(p+".attn.merged", "Reshape", []string{t, rowsH})
		o := view(p+".attn.out", b.gemm2(p+".attn.c_proj", t, c.Hidden, c.Hidden, c.OutBias, false), sH)
		h = b.node(p+".attn_residual", "Add", []string{o, h})
		x = view(p+".ln_2.rows", b.layerNorm(p+".ln_2", h, c.Hidden, true), rowsH)
		f := view(p+".mlp.fc", b.gemm2(p+".mlp.c_fc", x, c.Hidden, c.Intermediate, c.MLPBias, false), sI)
		g := view(p+".mlp.act.rows", b.gelu(p+".mlp.act", f), rowsI)
		d := view(p+".mlp.out", b.gemm2(p+".mlp.c_proj", g, c.Intermediate, c.Hidden, c.MLPBias, false), sH)
		h = b.node(p+".mlp_residual", "Add", []string{h, d})
	}
	b.lmHead(view("transformer.ln_f.view", b.layerNorm("transformer.ln_f", h, c.Hidden, true), sOut))
	return nil
}

// buildBigCode builds gpt_bigcode (multi-query: one key and value head) as the rewrite leaves its
// dynamo export: q|k|v one product split by sizes, the key and value read by every head.
func buildBigCode(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm, rewrite.Gelu); err != nil {
		return err
	}
	b.hostShape()
	h := b.node("embedding", "Gather", []string{b.weight("transformer.wte.weight", c.Vocab, c.Hidden), InputIDs}, attrInt("axis", 0))
	h = b.learnedPositions("transformer.wpe.weight", h)
	m1 := b.vec(-1)
	kvd := c.KVHeads * c.HeadDim
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("transformer.h.%d", i)
		x := b.layerNorm(p+".ln_1", h, c.Hidden, true)
		hs := b.concat(b.batch1, b.seq1, m1, b.vec(c.HeadDim))
		merge := b.concat(b.batch1, b.seq1, m1)
		b.maskChain(true)
		qkv := b.linearRows(p+".attn.c_attn", x, c.Hidden, c.Hidden+2*kvd, c.AttnBias)
		u := b.node(p+".attn.qkv4", "Unsqueeze", []string{qkv, b.vec(1)})
		q, k, v := p+".attn.q", p+".attn.k", p+".attn.v"
		b.spec.Nodes = append(b.spec.Nodes, nodeSpec(p+".attn.split", "Split", []string{u, b.vec(c.Hidden, kvd, kvd)}, []string{q, k, v}, attrInt("axis", 3)))
		q = b.bhsd(q+"4", b.node(q+"3", "Reshape", []string{q, hs}))
		y := b.attention(p+".attn.attention", q, k, v)
		t := b.node(p+".attn.merged.t", "Transpose", []string{y}, attrInts("perm", 0, 2, 1, 3))
		t = b.node(p+".attn.merged", "Reshape", []string{t, merge})
		o := b.linearRows(p+".attn.c_proj", t, c.Hidden, c.Hidden, c.OutBias)
		h = b.node(p+".attn_residual", "Add", []string{o, h})
		x = b.layerNorm(p+".ln_2", h, c.Hidden, true)
		f := b.gelu(p+".mlp.act", b.linearRows(p+".mlp.c_fc", x, c.Hidden, c.Intermediate, c.MLPBias))
		d := b.linearRows(p+".mlp.c_proj", f, c.Intermediate, c.Hidden, c.MLPBias)
		h = b.node(p+".mlp_residual", "Add", []string{h, d})
	}
	b.lmHead(b.layerNorm("transformer.ln_f", h, c.Hidden, true))
	return nil
}

// buildOPT builds opt (norms before attention and the MLP) as the rewrite leaves its dynamo
// export: positions from the mask's cumulative sum (offset 2), q scaled before attention, the MLP
// as GEMMs over [batch*seq, hidden] with the Linear's weights transposed.
func buildOPT(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm); err != nil {
		return err
	}
	b.batch1 = b.node("arch.batch1", "Shape", []string{AttentionMask}, attrInt("start", 0), attrInt("end", 1))
	b.seq1 = b.node("arch.seq1", "Shape", []string{AttentionMask}, attrInt("start", 1), attrInt("end", 2))
	m1 := b.vec(-1)
	ids := b.node("input_ids.view", "Reshape", []string{InputIDs, b.concat(m1, b.seq1)}, attrInt("allowzero", 1))
	h := b.node("embedding", "Gather", []string{b.weight("model.decoder.embed_tokens.weight", c.Vocab, c.Hidden), ids}, attrInt("axis", 0))
	one := b.ints("arch.1", true, 1)
	cs := b.node("positions.cumsum", "CumSum", []string{AttentionMask, one})
	pos := b.node("positions.kept", "Mul", []string{cs, AttentionMask})
	pos = b.node("positions.from0", "Sub", []string{pos, one})
	pos = b.node("positions", "Add", []string{pos, b.ints("arch.2", true, 2)})
	pe := b.node("position_embedding", "Gather", []string{b.weight("model.decoder.embed_positions.weight", c.MaxPositions+2, c.Hidden), pos}, attrInt("axis", 0))
	h = b.node("embedding.positioned", "Add", []string{h, pe})
	rowsH := b.vec(-1, c.Hidden)
	scale := b.scalar("attention.q_scale", c.AttnScale)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.decoder.layers.%d", i)
		a := p + ".self_attn"
		x := b.layerNorm(p+".self_attn_layer_norm", h, c.Hidden, true)
		hs := b.concat(b.batch1, m1, b.vec(c.Heads), b.vec(c.HeadDim))
		merge := b.concat(b.batch1, b.seq1, m1)
		sH := b.concat(b.batch1, b.seq1, b.vec(c.Hidden))
		b.maskChain(false)
		q := b.node(a+".q_scaled", "Mul", []string{b.linearRows(a+".q_proj", x, c.Hidden, c.Hidden, c.AttnBias), scale})
		q = b.bhsd(a+".q4", b.node(a+".q3", "Reshape", []string{q, hs}, attrInt("allowzero", 1)))
		k := b.bhsd(a+".k4", b.node(a+".k3", "Reshape", []string{b.linearRows(a+".k_proj", x, c.Hidden, c.Hidden, c.AttnBias), hs}, attrInt("allowzero", 1)))
		v := b.bhsd(a+".v4", b.node(a+".v3", "Reshape", []string{b.linearRows(a+".v_proj", x, c.Hidden, c.Hidden, c.AttnBias), hs}, attrInt("allowzero", 1)))
		y := b.attentionScaled(a+".attention", q, k, v, 1)
		t := b.node(a+".merged.t", "Transpose", []string{y}, attrInts("perm", 0, 2, 1, 3))
		t = b.node(a+".merged", "Reshape", []string{t, merge}, attrInt("allowzero", 1))
		o := b.linearRows(a+".out_proj", t, c.Hidden, c.Hidden, c.OutBias)
		h = b.node(p+".attn_residual", "Add", []string{h, o})
		h2 := b.node(p+".rows", "Reshape", []string{h, rowsH}, attrInt("allowzero", 1))
		x = b.layerNorm(p+".final_layer_norm", h2, c.Hidden, true)
		f := b.node(p+".relu", "Relu", []string{b.gemm2(p+".fc1", x, c.Hidden, c.Intermediate, c.MLPBias, true)})
		d := b.gemm2(p+".fc2", f, c.Intermediate, c.Hidden, c.MLPBias, true)
		h = b.node(p+".mlp_residual", "Reshape", []string{b.node(p+".mlp_residual.rows", "Add", []string{h2, d}), sH}, attrInt("allowzero", 1))
	}
	b.lmHead(b.layerNorm("model.decoder.final_layer_norm", h, c.Hidden, true))
	return nil
}
