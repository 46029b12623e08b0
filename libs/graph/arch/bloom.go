package arch

import (
	"encoding/binary"
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// bloom: ALiBi (a per-head bias of each key's position) in place of positions, a LayerNorm of
// the embedding, q|k|v one product with the heads interleaved (per head q, k, v), and the gelu
// bloom writes out (x/2 * (1 + tanh(0.79788456 x (1 + 0.044715 x^2))), which the rewrite does
// not recognise and leaves as exported), built in the order the rewrite leaves its dynamo export.

func init() {
	register(&family{name: "bloom", read: readBloom, build: buildBloom, tied: true})
}

func readBloom(c *Config, r *reader) {
	c.Hidden = r.need("hidden_size", "n_embed")
	c.Layers = int(r.need("n_layer", "num_hidden_layers"))
	c.Heads = r.need("n_head", "num_attention_heads")
	c.KVHeads = c.Heads
	r.perHead("n_head", "hidden_size")
	c.Intermediate = 4 * c.Hidden
	c.Vocab = r.need("vocab_size")
	c.Positions, _ = r.opt("seq_length", "max_position_embeddings")
	c.Eps = r.float(1e-5, "layer_norm_epsilon")
	c.Activation = "bloom_gelu"
	c.AttnBias, c.OutBias, c.MLPBias = true, true, true
	if r.boolean("apply_residual_connection_post_layernorm", false) {
		r.fail("apply_residual_connection_post_layernorm", "true: bloom with the residual taken after the norms is not built yet")
	}
}

// alibiSlopes are ALiBi's slopes for n heads: the powers of 2^(-8/p) for the largest power of two
// p <= n, then odd powers of 2^(-4/p) for the heads beyond it.
func alibiSlopes(n int64) []float32 {
	p := int64(1)
	for p*2 <= n {
		p *= 2
	}
	base := math.Pow(2, -math.Pow(2, -(math.Log2(float64(p))-3)))
	out := make([]float32, 0, n)
	for i := int64(1); i <= p; i++ {
		out = append(out, float32(math.Pow(base, float64(i))))
	}
	extra := math.Pow(2, -math.Pow(2, -(math.Log2(float64(2*p))-3)))
	for i := int64(0); i < min(p, n-p); i++ {
		out = append(out, float32(math.Pow(extra, float64(2*i+1))))
	}
	return out
}

// alibi is bloom's bias of the scores as its export computes it: each key's position among the
// kept ones ((cumsum(mask) - 1) * mask) times each head's slope, [batch*heads, 1, seq] in the
// model's dtype; and the rewrite's view of it by heads, [batch, heads, 1, seq].
func (b *builder) alibi(batch string) (flat string) {
	c := b.c
	one := b.ints("arch.1", true, 1)
	pos := b.node("alibi.cumsum", "CumSum", []string{AttentionMask, b.ints("arch.-1", true, -1)}, attrInt("exclusive", 0), attrInt("reverse", 0))
	pos = b.node("alibi.positions", "Mul", []string{b.node("alibi.cumsum.from0", "Sub", []string{pos, one}), AttentionMask})
	pos = b.node("alibi.positions.float", "Cast", []string{b.node("alibi.positions3", "Unsqueeze", []string{pos, b.vec(1)})}, attrInt("to", int64(graph.Float32)))
	data := make([]byte, 0, 4*c.Heads)
	for _, s := range alibiSlopes(c.Heads) {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(s))
	}
	slopes := b.addInit(graph.NewTensor("alibi.slopes", graph.Float32, []int64{c.Heads, 1}, data))
	bias := b.node("alibi.bias", "Mul", []string{slopes, pos})
	rows := b.node("alibi.rows", "Reshape", []string{b.node("alibi.batch_heads", "Mul", []string{batch, b.ints(fmt.Sprintf("arch.%d", c.Heads), true, c.Heads)}), b.vec(-1)})
	flat = b.node("alibi", "Reshape", []string{bias, b.concat(rows, b.vec(1), b.seq1)}, attrInt("allowzero", 1))
	if b.dt != graph.Float32 {
		flat = b.node("alibi.cast", "Cast", []string{flat}, attrInt("to", int64(b.dt)))
	}
	return flat
}

// bloomGelu is bloom's gelu, op by op as exported.
func (b *builder) bloomGelu(name, x string) string {
	half := b.node(name+".half", "Mul", []string{x, b.scalar("bloom_gelu.0.5", 0.5)})
	sx := b.node(name+".scaled", "Mul", []string{x, b.scalar("bloom_gelu.0.79788456", 0.79788456)})
	cx := b.node(name+".cubic", "Mul", []string{b.node(name+".cubic.c", "Mul", []string{x, b.scalar("bloom_gelu.0.044715", 0.044715)}), x})
	one := b.scalar("bloom_gelu.1", 1)
	t := b.node(name+".tanh", "Tanh", []string{b.node(name+".inner", "Mul", []string{sx, b.node(name+".cubic.1", "Add", []string{cx, one})})})
	return b.node(name, "Mul", []string{half, b.node(name+".tanh.1", "Add", []string{t, one})})
}

// buildBloom builds bloom: the embedding's LayerNorm, the ALiBi bias (viewed by heads where the
// rewrite splits bloom's batch·heads form, and added to the padding mask), q|k|v the rewrite's
// Gemm over rows viewed as [batch, seq, heads, 3, head_dim] and gathered per head, the attention
// and the MLP each added to their input.
func buildBloom(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm); err != nil {
		return err
	}
	b.batch1 = b.node("arch.batch1", "Shape", []string{AttentionMask}, attrInt("start", 0), attrInt("end", 1))
	batch := b.node("arch.batch", "Squeeze", []string{b.batch1})
	b.seq1 = b.node("arch.seq1", "Shape", []string{AttentionMask}, attrInt("start", 1), attrInt("end", 2))
	h := b.node("embedding", "Gather", []string{b.weight("transformer.word_embeddings.weight", c.Vocab, c.Hidden), InputIDs}, attrInt("axis", 0))
	h = b.layerNorm("transformer.word_embeddings_layernorm", h, c.Hidden, true)
	alibi := b.alibi(batch)
	b.allowZero = true
	hd := c.HeadDim
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("transformer.h.%d", i)
		a := p + ".self_attention"
		x := b.layerNorm(p+".input_layernorm", h, c.Hidden, true)
		qkvShape := b.concat(b.batch1, b.seq1, b.vec(c.Heads), b.vec(3), b.vec(hd))
		if i == 0 {
			b.mShape = b.concat(b.batch1, b.seq1, b.vec(c.Hidden)) // the heads merged back, their width named
			split := b.node("alibi.split_shape", "Concat", []string{b.vec(-1, c.Heads), b.node("alibi.shape", "Shape", []string{alibi}, attrInt("start", 1))}, attrInt("axis", 0))
			b.scoreBias = b.node("alibi.heads", "Reshape", []string{alibi, split})
			b.maskChain(false)
		}
		qkv := b.node(a+".qkv5", "Reshape", []string{b.linearRows(a+".query_key_value", x, c.Hidden, 3*c.Hidden, c.AttnBias), qkvShape}, attrInt("allowzero", 1))
		var qkvs [3]string
		for j, n := range []string{"q", "k", "v"} {
			qkvs[j] = b.bhsd(a+"."+n+"4", b.node(a+"."+n+"3", "Gather", []string{qkv, b.ints(fmt.Sprintf("arch.%d", j), true, int64(j))}, attrInt("axis", 3)))
		}
		y := b.merge(a+".merged", b.attention(a+".attention", qkvs[0], qkvs[1], qkvs[2]))
		h = b.node(p+".attn_residual", "Add", []string{h, b.linearRows(a+".dense", y, c.Hidden, c.Hidden, c.OutBias)})
		x = b.layerNorm(p+".post_attention_layernorm", h, c.Hidden, true)
		m := p + ".mlp"
		f := b.bloomGelu(m+".gelu", b.linearRows(m+".dense_h_to_4h", x, c.Hidden, c.Intermediate, c.MLPBias))
		h = b.node(p+".mlp_residual", "Add", []string{h, b.linearRows(m+".dense_4h_to_h", f, c.Intermediate, c.Hidden, c.MLPBias)})
	}
	b.lmHead(b.layerNorm("transformer.ln_f", h, c.Hidden, true))
	return nil
}
