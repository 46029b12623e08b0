package arch

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// cohere (Command R): attention and the gated MLP in parallel from one LayerNorm without a bias,
// the rotary embedding on interleaved pairs (rotate every two, which the rewrite leaves as
// exported), the logits times logit_scale, the LM head tied to the embedding, built in the order
// the rewrite leaves its dynamo export.

func init() {
	register(&family{name: "cohere", read: readCohere, build: buildCohere, tied: true})
}

func readCohere(c *Config, r *reader) {
	r.heads()
	c.Eps = r.float(1e-5, "layer_norm_eps")
	c.Activation = r.str("hidden_act", "silu")
	if c.Activation != "silu" {
		r.fail("hidden_act", fmt.Sprintf("%q: cohere's MLP is built with silu", c.Activation))
	}
	if r.boolean("attention_bias", false) {
		r.fail("attention_bias", "true: cohere with biased projections is not built yet")
	}
	if r.boolean("use_qk_norm", false) {
		r.fail("use_qk_norm", "true: cohere's LayerNorm of q and k per head (Command R+) is not built yet")
	}
	c.LogitsScale = r.float(0.0625, "logit_scale")
	r.rope(c.HeadDim, "partial_rotary_factor")
	if c.RotaryDim != c.HeadDim {
		r.fail("partial_rotary_factor", "cohere rotates every dim of each head; want no partial_rotary_factor")
	}
}

// interleavedTables computes cohere's rotary tables as its export does: the positions times the
// inverse frequencies, each repeated for its pair (repeat_interleave: Unsqueeze, Expand, Reshape),
// Cos and Sin in float32 and cast to the model's dtype, [1, 1, seq, rot]. Where that is not
// float32, the rotation, which cohere computes in float32, reads them cast back (f32).
func (b *builder) interleavedTables() (cos, sin, cos32, sin32 string) {
	rot := b.c.RotaryDim
	b.hostShape()
	r := b.node("rotary.arange", "Range", []string{b.ints("arch.0", true, 0), b.seq, b.ints("arch.1", true, 1)})
	pos := b.node("rotary.positions", "Unsqueeze", []string{r, b.vec(0, 1)})
	posF := b.node("rotary.positions.float", "Cast", []string{pos}, attrInt("to", int64(graph.Float32)))
	fr := b.node("rotary.freqs", "MatMul", []string{b.floatWeight("rotary.inv_freq", 1, rot/2, 1), posF})
	frT := b.node("rotary.freqs.t", "Transpose", []string{fr}, attrInts("perm", 0, 2, 1))
	pairs := b.node("rotary.freqs.pairs", "Expand", []string{b.node("rotary.freqs.t4", "Unsqueeze", []string{frT, b.vec(3)}), b.vec(1, 1, 1, 2)})
	emb := b.node("rotary.emb", "Reshape", []string{pairs, b.vec(1, -1, rot)}, attrInt("allowzero", 1))
	cos, sin = b.node("rotary.cos", "Cos", []string{emb}), b.node("rotary.sin", "Sin", []string{emb})
	if b.dt != graph.Float32 {
		cos = b.node("rotary.cos.cast", "Cast", []string{cos}, attrInt("to", int64(b.dt)))
		sin = b.node("rotary.sin.cast", "Cast", []string{sin}, attrInt("to", int64(b.dt)))
	}
	cos, sin = b.node("rotary.cos4", "Unsqueeze", []string{cos, b.vec(1)}), b.node("rotary.sin4", "Unsqueeze", []string{sin, b.vec(1)})
	cos32, sin32 = cos, sin
	if b.dt != graph.Float32 {
		cos32 = b.node("rotary.cos4.f32", "Cast", []string{cos}, attrInt("to", int64(graph.Float32)))
		sin32 = b.node("rotary.sin4.f32", "Cast", []string{sin}, attrInt("to", int64(graph.Float32)))
	}
	return cos, sin, cos32, sin32
}

// rotateInterleaved turns x [..., rot] by the rotary tables on interleaved pairs, op by op as
// exported (the rewrite fuses the rotate-half form only): x*cos + rotate_every_two(x)*sin, where
// rotate_every_two stacks -x[..., 1::2] and x[..., 0::2] on a new last axis and flattens them
// back to shape (gptj's and cohere's).
func (b *builder) rotateInterleaved(name, x, cos, sin, shape string) string {
	xc := b.node(name+".cos", "Mul", []string{x, cos})
	end, axis, step, last := b.vec(math.MaxInt64), b.vec(3), b.vec(2), b.vec(-1)
	even := b.node(name+".even", "Slice", []string{x, b.vec(0), end, axis, step})
	odd := b.node(name+".odd", "Slice", []string{x, b.vec(1), end, axis, step})
	neg := b.node(name+".odd.neg", "Unsqueeze", []string{b.node(name+".neg", "Neg", []string{odd}), last})
	st := b.node(name+".stack", "Concat", []string{neg, b.node(name+".even.u", "Unsqueeze", []string{even, last})}, attrInt("axis", -1))
	r := b.node(name+".rotated", "Reshape", []string{st, shape}, attrInt("allowzero", 1))
	return b.node(name, "Add", []string{xc, b.node(name+".sin", "Mul", []string{r, sin})})
}

// buildCohere builds cohere: q, k and v projected and viewed as heads, then transposed, each of q
// and k turned on interleaved pairs (in float32, as cohere computes it); the MLP computed before
// the attention, which the rewrite's Attention follows; the attention's output and then the
// MLP's added to the layer's input.
func buildCohere(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm); err != nil {
		return err
	}
	b.allowZero = true
	h := b.embed("model.embed_tokens.weight")
	_, _, cos, sin := b.interleavedTables()
	qd, kvd, hd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim, c.HeadDim
	rotate := func(name, x string, heads int64) string {
		if b.dt != graph.Float32 {
			x = b.node(name+".f32", "Cast", []string{x}, attrInt("to", int64(graph.Float32)))
		}
		y := b.rotateInterleaved(name, x, cos, sin, b.concat(b.batch1, b.vec(heads), b.seq1, b.vec(hd)))
		if b.dt != graph.Float32 {
			y = b.node(name+".cast", "Cast", []string{y}, attrInt("to", int64(b.dt)))
		}
		return y
	}
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d", i)
		a := p + ".self_attn"
		x := b.layerNorm(p+".input_layernorm", h, c.Hidden, false)
		q := b.heads4(a+".q3", b.linear(a+".q_proj", x, c.Hidden, qd, false), c.Heads)
		k := b.heads4(a+".k3", b.linear(a+".k_proj", x, c.Hidden, kvd, false), c.KVHeads)
		v := b.heads4(a+".v3", b.linear(a+".v_proj", x, c.Hidden, kvd, false), c.KVHeads)
		q, k, v = b.bhsd(a+".q4", q), b.bhsd(a+".k4", k), b.bhsd(a+".v4", v)
		q, k = rotate(a+".q_rot", q, c.Heads), rotate(a+".k_rot", k, c.KVHeads)
		m := p + ".mlp"
		d := b.linear(m+".down_proj", b.swiglu(m, x, false), c.Intermediate, c.Hidden, false)
		o := b.linear(a+".o_proj", b.merge(a+".merged", b.attention(a+".attn", q, k, v)), qd, c.Hidden, false)
		h = b.node(p+".mlp_residual", "Add", []string{b.node(p+".attn_residual", "Add", []string{h, o}), d})
	}
	b.lmHead(b.layerNorm("model.norm", h, c.Hidden, false))
	return nil
}
