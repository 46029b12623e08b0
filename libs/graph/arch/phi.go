package arch

import (
	"encoding/json"
	"fmt"
	"math"

	"carve.dev/libs/graph/rewrite"
)

// phi (Phi-1, Phi-1.5, Phi-2): attention and the MLP in parallel from one LayerNorm, biased
// q, k, v and dense projections, a rotary over part of each head (rotate-half), a gelu_new MLP,
// a final LayerNorm and an LM head with a bias, built in the order the rewrite leaves its dynamo
// export.

func init() {
	register(&family{name: "phi", read: readPhi, build: buildPhi, tied: false})
}

func readPhi(c *Config, r *reader) {
	r.heads()
	c.Eps = r.float(1e-5, "layer_norm_eps")
	c.Activation = r.gelu("hidden_act", r.str("hidden_act", "gelu_new"))
	c.AttnBias, c.OutBias, c.MLPBias = true, true, true
	if r.boolean("qk_layernorm", false) {
		r.fail("qk_layernorm", "true: phi's LayerNorm of q and k is not built yet")
	}
	r.rope(c.HeadDim, "partial_rotary_factor")
	if !r.hasRopeField("partial_rotary_factor") { // PhiConfig's default rotates half of each head
		c.RotaryDim = int64(math.Round(float64(c.HeadDim) * 0.5))
	}
	if c.RotaryDim == 0 {
		r.fail("partial_rotary_factor", "0: phi rotates part of each head; want a factor above 0")
	}
}

// buildPhi builds phi: q, k and v each the rewrite's Gemm over rows, viewed as heads and each of
// q and k turned over its first rotary dims; the MLP (fc1, gelu, fc2) computed after the
// attention and before its dense projection, as the rewrite orders the parallel block; both
// added to the layer's input.
func buildPhi(b *builder) error {
	c := b.c
	if err := b.needFusions(rewrite.LayerNorm, rewrite.Gelu, rewrite.Rotary); err != nil {
		return err
	}
	b.allowZero = true
	h := b.embed("model.embed_tokens.weight")
	b.rotaryPrologue()
	qd, kvd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	rotate := func(name, x string) string {
		if c.RotaryDim == c.HeadDim {
			return b.rotary(name, x)
		}
		rot, pass := b.rotarySlices(name, x)
		return b.rotaryPartial(name, rot, pass)
	}
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d", i)
		a := p + ".self_attn"
		x := b.layerNorm(p+".input_layernorm", h, c.Hidden, true)
		b.rotaryCaches()
		b.maskChain(true)
		q := rotate(a+".q_rot", b.bhsd(a+".q4", b.heads4(a+".q3", b.linearRows(a+".q_proj", x, c.Hidden, qd, c.AttnBias), c.Heads)))
		k := rotate(a+".k_rot", b.bhsd(a+".k4", b.heads4(a+".k3", b.linearRows(a+".k_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads)))
		v := b.bhsd(a+".v4", b.heads4(a+".v3", b.linearRows(a+".v_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads))
		y := b.merge(a+".merged", b.attention(a+".attn", q, k, v))
		m := p + ".mlp"
		f := b.linearRows(m+".fc2", b.gelu(m+".act", b.linearRows(m+".fc1", x, c.Hidden, c.Intermediate, c.MLPBias)), c.Intermediate, c.Hidden, c.MLPBias)
		o := b.linearRows(a+".dense", y, qd, c.Hidden, c.OutBias)
		h = b.node(p+".residual", "Add", []string{b.node(p+".parallel", "Add", []string{o, f}), h})
	}
	b.lmHeadBias(b.layerNorm("model.final_layernorm", h, c.Hidden, true))
	return nil
}

// hasRopeField reports whether the config names a rotary parameter, at its top level or in
// rope_parameters or rope_scaling.
func (r *reader) hasRopeField(name string) bool {
	if raw, _ := r.lookup(name); raw != nil {
		return true
	}
	for _, n := range []string{"rope_parameters", "rope_scaling"} {
		if raw, _ := r.lookup(n); raw != nil {
			var p map[string]json.RawMessage
			if json.Unmarshal(raw, &p) == nil && p[name] != nil {
				return true
			}
		}
	}
	return false
}
