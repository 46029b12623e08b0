package arch

import (
	"encoding/binary"
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// falcon (Falcon-7B's architecture: one key and value head, attention and the MLP in parallel
// from one LayerNorm) and gpt_neox (a rotary over part of each head, q|k|v interleaved per head,
// the parallel residual), built in the order the rewrite leaves their dynamo exports.

func init() {
	register(&family{name: "falcon", read: readFalcon, build: buildFalcon, tied: true})
	register(&family{name: "gpt_neox", read: readNeoX, build: buildNeoX, tied: false})
}

func readFalcon(c *Config, r *reader) {
	c.Hidden = r.need("hidden_size", "n_embed")
	c.Layers = int(r.need("num_hidden_layers", "n_layer"))
	c.Heads = r.need("num_attention_heads", "n_head")
	c.KVHeads = 1
	if c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
	}
	c.Intermediate = 4 * c.Hidden
	if v, ok := r.opt("ffn_hidden_size"); ok {
		c.Intermediate = v
	}
	c.Vocab = r.need("vocab_size")
	c.Positions, _ = r.opt("max_position_embeddings")
	c.Eps = r.float(1e-5, "layer_norm_epsilon")
	c.Activation = r.gelu("activation", r.str("activation", "gelu"))
	bias := r.boolean("bias", false)
	c.AttnBias, c.OutBias, c.MLPBias = bias, bias, bias
	for _, f := range []struct {
		name string
		want bool
	}{{"new_decoder_architecture", false}, {"alibi", false}, {"multi_query", true}, {"parallel_attn", true}} {
		if r.boolean(f.name, f.want) != f.want {
			r.fail(f.name, fmt.Sprintf("%v: falcon is built as Falcon-7B is (multi_query, parallel_attn, rotary, the old decoder architecture)", !f.want))
		}
	}
	if c.HeadDim > 0 {
		c.AttnScale = 1 / math.Sqrt(float64(c.HeadDim))
	}
	r.rope(c.HeadDim)
}

func readNeoX(c *Config, r *reader) {
	r.heads()
	c.KVHeads = c.Heads
	c.Eps = r.float(1e-5, "layer_norm_eps")
	c.Activation = r.gelu("hidden_act", r.str("hidden_act", "gelu"))
	c.AttnBias = r.boolean("attention_bias", true)
	c.OutBias, c.MLPBias = c.AttnBias, true
	if !r.boolean("use_parallel_residual", true) {
		r.fail("use_parallel_residual", "false: gpt_neox with a sequential residual is not built yet")
	}
	r.rope(c.HeadDim, "rotary_pct", "partial_rotary_factor")
}

// index11 is an int64 constant of shape [1, 1]: GatherND's indices.
func (b *builder) index11(v int64) string {
	name := fmt.Sprintf("arch.[[%d]]", v)
	if b.inits[name] {
		return name
	}
	return b.addInit(graph.NewTensor(name, graph.Int64, []int64{1, 1}, binary.LittleEndian.AppendUint64(nil, uint64(v))))
}

// buildFalcon builds Falcon-7B's architecture: one LayerNorm feeding the attention and the MLP
// (computed first, as the export orders it), the query heads sliced and the one key and value
// head gathered from the fused product.
func buildFalcon(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm, rewrite.Gelu, rewrite.Rotary); err != nil {
		return err
	}
	h := b.embed("transformer.word_embeddings.weight")
	b.rotaryPrologue()
	hd := c.HeadDim
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("transformer.h.%d", i)
		a := p + ".self_attention"
		x := b.layerNorm(p+".input_layernorm", h, c.Hidden, true)
		qkv := b.linearRows(a+".query_key_value", x, c.Hidden, c.Hidden+2*hd, c.AttnBias)
		v6 := b.node(a+".qkv4", "Reshape", []string{qkv, b.concat(b.batch1, b.seq1, b.vec(c.Heads+2), b.vec(hd))})
		q := b.node(a+".q3", "Slice", []string{v6, b.vec(0), b.vec(c.Heads), b.vec(2), b.vec(1)})
		t := b.node(a+".qkv.heads_first", "Transpose", []string{v6}, attrInts("perm", 2, 0, 1, 3))
		k := b.node(a+".k3", "GatherND", []string{t, b.index11(c.Heads)}, attrInt("batch_dims", 0))
		v := b.node(a+".v3", "GatherND", []string{t, b.index11(c.Heads + 1)}, attrInt("batch_dims", 0))
		q = b.bhsd(a+".q4", q)
		k = b.node(a+".k4", "Transpose", []string{k}, attrInts("perm", 1, 0, 2, 3))
		v = b.node(a+".v4", "Transpose", []string{v}, attrInts("perm", 1, 0, 2, 3))
		merge := b.concat(b.batch1, b.seq1, b.vec(c.Hidden))
		m := p + ".mlp"
		f := b.gelu(m+".act", b.linearRows(m+".dense_h_to_4h", x, c.Hidden, c.Intermediate, c.MLPBias))
		d := b.linearRows(m+".dense_4h_to_h", f, c.Intermediate, c.Hidden, c.MLPBias)
		q = b.rotary(a+".q_rot", q)
		k = b.rotary(a+".k_rot", k)
		y := b.attention(a+".attention", q, k, v)
		y = b.node(a+".merged", "Reshape", []string{b.node(a+".merged.t", "Transpose", []string{y}, attrInts("perm", 0, 2, 1, 3)), merge})
		o := b.linearRows(a+".dense", y, c.Hidden, c.Hidden, c.OutBias)
		h = b.node(p+".residual", "Add", []string{h, b.node(p+".parallel", "Add", []string{d, o})})
	}
	b.lmHead(b.layerNorm("transformer.ln_f", h, c.Hidden, true))
	return nil
}

// buildNeoX builds gpt_neox: q|k|v one product viewed as [batch, seq, heads, 3 x head_dim] and
// split per head, the rotary over the first rotary dims of q and k, and the parallel residual
// (attention of one norm, the MLP of another, both added to the input).
func buildNeoX(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm, rewrite.Gelu, rewrite.Rotary); err != nil {
		return err
	}
	h := b.embed("gpt_neox.embed_in.weight")
	b.rotaryPrologue()
	hd := c.HeadDim
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("gpt_neox.layers.%d", i)
		a := p + ".attention"
		x := b.layerNorm(p+".input_layernorm", h, c.Hidden, true)
		hs := b.concat(b.batch1, b.seq1, b.vec(c.Heads), b.vec(3*hd))
		merge := b.concat(b.batch1, b.seq1, b.vec(c.Hidden))
		if c.RotaryDim > 0 {
			b.rotaryCaches()
		}
		b.maskChain(false)
		qkv := b.linearRows(a+".query_key_value", x, c.Hidden, 3*c.Hidden, c.AttnBias)
		qkv = b.bhsd(a+".qkv4", b.node(a+".qkv3", "Reshape", []string{qkv, hs}))
		q, k, v := a+".q", a+".k", a+".v"
		b.spec.Nodes = append(b.spec.Nodes, nodeSpec(a+".split", "Split", []string{qkv}, []string{q, k, v}, attrInt("axis", 3), attrInt("num_outputs", 3)))
		switch {
		case c.RotaryDim == hd:
			q, k = b.rotary(a+".q_rot", q), b.rotary(a+".k_rot", k)
		case c.RotaryDim > 0:
			qr, qp := b.rotarySlices(a+".q_rot", q)
			kr, kp := b.rotarySlices(a+".k_rot", k)
			q = b.rotaryPartial(a+".q_rot", qr, qp)
			k = b.rotaryPartial(a+".k_rot", kr, kp)
		}
		y := b.attention(a+".attention", q, k, v)
		y = b.node(a+".merged", "Reshape", []string{b.node(a+".merged.t", "Transpose", []string{y}, attrInts("perm", 0, 2, 1, 3)), merge})
		m := p + ".mlp"
		x2 := b.layerNorm(p+".post_attention_layernorm", h, c.Hidden, true)
		f := b.gelu(m+".act", b.linearRows(m+".dense_h_to_4h", x2, c.Hidden, c.Intermediate, c.MLPBias))
		d := b.linearRows(m+".dense_4h_to_h", f, c.Intermediate, c.Hidden, c.MLPBias)
		o := b.linearRows(a+".dense", y, c.Hidden, c.Hidden, c.OutBias)
		h = b.node(p+".residual", "Add", []string{b.node(p+".parallel", "Add", []string{d, o}), h})
	}
	b.lmHead(b.layerNorm("gpt_neox.final_layer_norm", h, c.Hidden, true))
	return nil
}
