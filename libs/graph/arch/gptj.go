package arch

import (
	"fmt"
	"math"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// gptj (GPT-J): attention and the MLP in parallel from one LayerNorm, q, k, v and out
// projections without biases, a rotary over the first rotary_dim dims of each head on
// interleaved pairs (rotate every two, which the rewrite leaves as exported) from each layer's
// own sinusoid table, a biased gelu_new MLP and an LM head with a bias, built in the order the
// rewrite leaves its dynamo export.

func init() {
	register(&family{name: "gptj", read: readGPTJ, build: buildGPTJ, tied: false})
}

func readGPTJ(c *Config, r *reader) {
	c.Hidden = r.need("n_embd", "hidden_size")
	c.Layers = int(r.need("n_layer", "num_hidden_layers"))
	c.Heads = r.need("n_head", "num_attention_heads")
	c.KVHeads = c.Heads
	r.perHead("n_head", "n_embd")
	c.Intermediate = 4 * c.Hidden
	if v, ok := r.opt("n_inner"); ok {
		c.Intermediate = v
	}
	c.Vocab = r.need("vocab_size")
	// The sinusoid tables have n_positions rows, a weight of each layer's.
	c.Positions = r.need("n_positions", "max_position_embeddings")
	c.Eps = r.float(1e-5, "layer_norm_epsilon")
	c.Activation = r.gelu("activation_function", r.str("activation_function", "gelu_new"))
	c.MLPBias = true
	c.RotaryDim = r.need("rotary_dim")
	if c.RotaryDim >= c.HeadDim && c.HeadDim > 0 && r.err == nil {
		r.fail("rotary_dim", fmt.Sprintf("%d: gptj rotating every dim of its head of %d (an empty pass-through part) is not built yet", c.RotaryDim, c.HeadDim))
	}
}

// gptjTables are one layer's rotary tables, each [1, seq, 1, rot]: the layer's sinusoid table
// gathered at the positions, split into sin and cos, each repeated for its pair.
type gptjTables struct{ sin, cos string }

// buildGPTJ builds gptj: q, k and v products viewed as heads (their count named), v transposed
// first; each layer's table gathered, k's and q's first rotary dims sliced and turned, then q and
// k transposed. The rewrite puts the tables of every later layer, which read the positions only,
// ahead of the first layer's attention, and the MLP (fc_in, gelu, fc_out, the rewrite's Gemm
// over rows) after the attention's output projection; both are added to the layer's input.
func buildGPTJ(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm, rewrite.Gelu); err != nil {
		return err
	}
	b.explicitHeads, b.allowZero = true, true
	h := b.embed("transformer.wte.weight")
	pos := b.node("positions.row", "Unsqueeze", []string{b.node("positions", "Range", []string{b.ints("arch.0", true, 0), b.seq, b.ints("arch.1", true, 1)}), b.vec(0)})
	rot, hd := c.RotaryDim, c.HeadDim
	var idx string // the positions repeated for each of the table's columns, [1, seq, rot]
	table := func(i int) (sin, cos string) {
		p := fmt.Sprintf("transformer.h.%d.attn.embed_positions", i)
		w := b.floatWeight(p, c.Positions, rot)
		t := b.node(p+".tiled", "Tile", []string{b.node(p+".expanded", "Expand", []string{w, b.vec(1, 1, 1)}), b.vec(1, 1, 1)})
		if idx == "" {
			u := b.node("positions.index", "Unsqueeze", []string{pos, b.vec(-1)})
			idx = b.node("positions.index.tiled", "Tile", []string{b.node("positions.index.expanded", "Expand", []string{u, b.vec(1, 1, 1)}), b.vec(1, 1, rot)})
		}
		sc := b.node(p+".gathered", "GatherElements", []string{t, idx}, attrInt("axis", 1))
		sin, cos = p+".sin", p+".cos"
		b.spec.Nodes = append(b.spec.Nodes, nodeSpec(p+".split", "Split", []string{sc}, []string{sin, cos}, attrInt("axis", 2), attrInt("num_outputs", 2)))
		if b.dt != graph.Float32 {
			sin = b.node(sin+".cast", "Cast", []string{sin}, attrInt("to", int64(b.dt)))
			cos = b.node(cos+".cast", "Cast", []string{cos}, attrInt("to", int64(b.dt)))
		}
		return sin, cos
	}
	repeat := func(name, x string) string {
		e := b.node(name+".pairs", "Expand", []string{b.node(name+".u", "Unsqueeze", []string{x, b.vec(2, 4)}), b.vec(1, 1, 1, 1, 2)})
		return b.node(name+".repeated", "Reshape", []string{e, b.vec(1, -1, 1, rot)}, attrInt("allowzero", 1))
	}
	// The rotated and the passed dims of a head, [..., :rot] and [..., rot:].
	slices := func(name, x string) (string, string) {
		axis, step := b.vec(3), b.vec(1)
		return b.node(name+".rot", "Slice", []string{x, b.vec(0), b.vec(rot), axis, step}),
			b.node(name+".pass", "Slice", []string{x, b.vec(rot), b.vec(math.MaxInt64), axis, step})
	}
	tables := make([]gptjTables, c.Layers)
	qd := c.Heads * hd
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("transformer.h.%d", i)
		a := p + ".attn"
		x := b.layerNorm(p+".ln_1", h, c.Hidden, true)
		q := b.linear(a+".q_proj", x, c.Hidden, qd, false)
		k := b.linear(a+".k_proj", x, c.Hidden, qd, false)
		v := b.linear(a+".v_proj", x, c.Hidden, qd, false)
		q, k, v = b.heads4(a+".q3", q, c.Heads), b.heads4(a+".k3", k, c.Heads), b.heads4(a+".v3", v, c.Heads)
		v = b.bhsd(a+".v4", v)
		var sin, cos string
		if i == 0 {
			sin, cos = table(0)
		}
		kr, kp := slices(a+".k_rot", k)
		qr, qp := slices(a+".q_rot", q)
		if i == 0 {
			tables[0] = gptjTables{repeat(a+".sin", sin), repeat(a+".cos", cos)}
		}
		t := tables[i]
		shape := b.concat(b.batch1, b.seq1, b.vec(c.Heads), b.vec(rot))
		kr = b.rotateInterleaved(a+".k_rot.turned", kr, t.cos, t.sin, shape)
		qr = b.rotateInterleaved(a+".q_rot.turned", qr, t.cos, t.sin, shape)
		k = b.node(a+".k", "Concat", []string{kr, kp}, attrInt("axis", -1))
		q = b.bhsd(a+".q4", b.node(a+".q", "Concat", []string{qr, qp}, attrInt("axis", -1)))
		if i == 0 {
			b.mergeShape()
			for j := 1; j < c.Layers; j++ {
				s, co := table(j)
				lp := fmt.Sprintf("transformer.h.%d.attn", j)
				tables[j] = gptjTables{repeat(lp+".sin", s), repeat(lp+".cos", co)}
			}
		}
		k = b.bhsd(a+".k4", k)
		y := b.merge(a+".merged", b.attention(a+".attention", q, k, v))
		o := b.linear(a+".out_proj", y, qd, c.Hidden, false)
		m := p + ".mlp"
		f := b.linearRows(m+".fc_out", b.gelu(m+".act", b.linearRows(m+".fc_in", x, c.Hidden, c.Intermediate, c.MLPBias)), c.Intermediate, c.Hidden, c.MLPBias)
		h = b.node(p+".residual", "Add", []string{b.node(p+".parallel", "Add", []string{o, f}), h})
	}
	x := b.layerNorm("transformer.ln_f", h, c.Hidden, true)
	x = b.node("transformer.ln_f.view", "Reshape", []string{x, b.concat(b.vec(-1), b.seq1, b.vec(c.Hidden))}, attrInt("allowzero", 1))
	b.lmHeadBias(x)
	return nil
}
