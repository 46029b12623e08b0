package arch

import (
	"encoding/json"
	"fmt"
	"math"

	"carve.dev/libs/graph/rewrite"
)

// style is how a rotary decoder of the Llama lineage differs from Llama.
type style struct {
	norm      string // "rms" or "layer" (stablelm)
	projFirst bool   // the q, k and v projections all come before their views (stablelm)
	// qkNorm: "": none; "head": RMSNorm over each head (qwen3); "head_t": the same after the
	// heads' transpose (gemma3); "full": over each projection (olmo2).
	qkNorm     string
	postNorm   bool // olmo2: norms after attention and the MLP, before the residual add, and none before
	fusedQKV   bool // phi3's qkv_proj
	fusedGated bool // phi3's gate_up_proj
	geglu      bool // gemma: gelu_tanh(gate) * up
	qkvBias    bool // biases on q, k and v only (qwen2)
	embedScale bool // gemma: the embedding times sqrt(hidden)
	sandwich   bool // gemma2, gemma3: norms before and after attention and the MLP, both before the residual add
	moe        bool // mixtral: the MLP is a mixture of experts (Config.Experts), com.microsoft.MoE
	// explicitHeads: the views name the head count instead of -1 (stablelm).
	explicitHeads bool
	// geluMLP: the MLP is c_fc, gelu (tanh) and c_proj, biased, with the rewrite's Gemm over
	// rows for every linear layer (starcoder2).
	geluMLP bool
}

var llamaStyles = map[string]style{
	"llama":   {norm: "rms"},
	"mistral": {norm: "rms"},
	"mixtral": {norm: "rms", moe: true},
	"qwen2":   {norm: "rms", qkvBias: true},
	"qwen3":   {norm: "rms", qkNorm: "head"},
	"phi3":    {norm: "rms", fusedQKV: true, fusedGated: true},
	"granite": {norm: "rms"},
	"smollm3": {norm: "rms"},
	"olmo2":   {norm: "rms", qkNorm: "full", postNorm: true},
	"gemma":   {norm: "rms", geglu: true, embedScale: true},
	"gemma2":  {norm: "rms", geglu: true, embedScale: true, sandwich: true},
	// gemma3_text: Gemma3ForCausalLM's config (the text model of Gemma3).
	"gemma3_text": {norm: "rms", geglu: true, embedScale: true, sandwich: true, qkNorm: "head_t"},
	"stablelm":    {norm: "layer", projFirst: true, explicitHeads: true},
	"starcoder2":  {norm: "layer", geluMLP: true},
}

func init() {
	for name, st := range llamaStyles {
		f := &family{name: name, read: readLlama, build: buildLlama, tied: st.embedScale}
		if name == "granite" || name == "smollm3" || name == "olmo2" || name == "qwen3" || name == "stablelm" {
			f.tied = false
		}
		if name == "starcoder2" {
			f.read, f.tied = readStarcoder2, true
		}
		register(f)
	}
}

// readLlama reads the fields of the Llama lineage.
func readLlama(c *Config, r *reader) {
	st := llamaStyles[c.Family]
	r.heads()
	if st.norm == "layer" {
		c.Eps = r.float(1e-5, "layer_norm_eps")
	} else {
		c.Eps = r.float(1e-6, "rms_norm_eps")
	}
	c.Activation = r.str("hidden_act", "silu")
	if v := r.str("hidden_activation", ""); v != "" {
		c.Activation = v
	}
	want := "silu"
	if st.geglu {
		want = "gelu_pytorch_tanh"
		if c.Activation == "gelu" { // gemma's configs say gelu and mean the tanh approximation
			c.Activation = want
		}
	}
	if c.Activation != want {
		r.fail("hidden_act", fmt.Sprintf("%q: the %s family's MLP is built with %s", c.Activation, c.Family, want))
	}
	c.AttnBias = r.boolean("attention_bias", false)
	c.OutBias = c.AttnBias
	c.MLPBias = r.boolean("mlp_bias", false)
	switch c.Family {
	case "qwen2":
		c.AttnBias, c.OutBias = true, false
		r.slidingWindow(r.boolean("use_sliding_window", false))
	case "qwen3", "smollm3":
		r.slidingWindow(r.boolean("use_sliding_window", false))
	case "mistral", "phi3":
		r.slidingWindow(true)
	case "mixtral":
		r.slidingWindow(true)
		c.Experts = r.need("num_local_experts")
		c.ExpertsPerToken = r.need("num_experts_per_tok")
		if c.ExpertsPerToken < 1 || c.ExpertsPerToken > c.Experts {
			r.fail("num_experts_per_tok", fmt.Sprintf("%d: want 1 to num_local_experts (%d)", c.ExpertsPerToken, c.Experts))
		}
	case "stablelm":
		c.AttnBias, c.OutBias = r.boolean("use_qkv_bias", false), false
		if r.boolean("qk_layernorm", false) {
			r.fail("qk_layernorm", "true: stablelm's per-head LayerNorm of q and k is not built yet")
		}
		if r.boolean("use_parallel_residual", false) {
			r.fail("use_parallel_residual", "true: stablelm's parallel residual is not built yet")
		}
	case "granite":
		c.EmbedScale = r.float(1, "embedding_multiplier")
		c.ResidScale = r.float(1, "residual_multiplier")
		if s := r.float(1, "logits_scaling"); s != 0 {
			c.LogitsScale = 1 / s
		}
		c.AttnScale = r.float(c.AttnScale, "attention_multiplier")
	case "gemma":
		c.EmbedScale = math.Sqrt(float64(c.Hidden))
	case "gemma2", "gemma3_text":
		c.EmbedScale = math.Sqrt(float64(c.Hidden))
		c.AttnScale = 1 / math.Sqrt(r.float(float64(c.HeadDim), "query_pre_attn_scalar"))
		c.Softcap = r.float(0, "attn_logit_softcapping")
		c.FinalSoftcap = r.float(0, "final_logit_softcapping")
		c.LocalRope = c.Family == "gemma3_text" // rope_local_base_freq: the sliding layers' tables
		r.slidingWindow(true)
	}
	r.rope(c.HeadDim, "partial_rotary_factor")
	if c.Family == "smollm3" {
		if raw, _ := r.lookup("no_rope_layers"); raw != nil {
			var use []int
			if err := json.Unmarshal(raw, &use); err != nil || len(use) != c.Layers {
				r.fail("no_rope_layers", fmt.Sprintf("want %d entries of 0 or 1", c.Layers))
			}
			for _, u := range use {
				c.NoRope = append(c.NoRope, u == 0)
			}
		}
	}
}

// readStarcoder2 reads starcoder2's fields: norm_epsilon, use_bias (every linear layer and
// norm), its gelu MLP, the sliding window.
func readStarcoder2(c *Config, r *reader) {
	r.heads()
	c.Eps = r.float(1e-5, "norm_epsilon")
	c.Activation = r.gelu("hidden_act", r.str("hidden_act", "gelu_pytorch_tanh"))
	if !r.boolean("use_bias", true) {
		r.fail("use_bias", "false: starcoder2 without biases is not built yet")
	}
	c.AttnBias, c.OutBias, c.MLPBias = true, true, true
	if t := r.str("mlp_type", "default"); t != "default" {
		r.fail("mlp_type", fmt.Sprintf("%q: starcoder2's MLP is built as c_fc, gelu, c_proj (default)", t))
	}
	r.slidingWindow(true)
	r.rope(c.HeadDim, "partial_rotary_factor")
}

// buildLlama builds the decoder in the order the rewrite leaves the family's export.
func buildLlama(b *builder) error {
	c, st := b.c, llamaStyles[b.c.Family]
	if st.geluMLP {
		if err := b.needFusions(rewrite.LayerNorm, rewrite.Gelu, rewrite.Rotary); err != nil {
			return err
		}
	}
	b.explicitHeads = st.explicitHeads
	b.allowZero = st.geluMLP
	h := b.embed("model.embed_tokens.weight")
	h = b.scale("embedding.scaled", h, c.EmbedScale)
	b.rotaryPrologue()
	norm := func(name, x string) string {
		if st.norm == "layer" {
			return b.layerNorm(name, x, c.Hidden, true)
		}
		return b.rmsNorm(name, x, c.Hidden)
	}
	linear := b.linear
	if st.geluMLP {
		linear = b.linearRows
	}
	qd, kvd := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("model.layers.%d", i)
		a := p + ".self_attn"
		rope := c.RotaryDim > 0 && (i >= len(c.NoRope) || !c.NoRope[i])
		b.band = c.band(i)
		b.local = b.band.Left >= 0
		x := h
		if !st.postNorm {
			x = norm(p+".input_layernorm", h)
		}
		gemm := c.AttnBias && !b.skip[rewrite.MatMulBias]
		if gemm {
			// The rewrite's Gemm of each projection comes last: the caches and the mask come first,
			// then each projection with its rotary.
			if rope {
				b.rotaryCaches()
			}
			b.maskChain(true)
		}
		var q, k, v string
		switch {
		case st.fusedQKV:
			qkv := b.linear(a+".qkv_proj", x, c.Hidden, qd+2*kvd, c.AttnBias)
			sl := func(name string, from, to int64) string {
				return b.node(name, "Slice", []string{qkv, b.vec(from), b.vec(to), b.vec(2), b.vec(1)})
			}
			q, k, v = sl(a+".q", 0, qd), sl(a+".k", qd, qd+kvd), sl(a+".v", qd+kvd, qd+2*kvd)
			q = b.bhsd(a+".q4", b.heads4(a+".q3", q, c.Heads))
			k = b.bhsd(a+".k4", b.heads4(a+".k3", k, c.KVHeads))
			v = b.bhsd(a+".v4", b.heads4(a+".v3", v, c.KVHeads))
		case st.qkNorm == "head":
			q = b.heads4(a+".q3", b.linear(a+".q_proj", x, c.Hidden, qd, c.AttnBias), c.Heads)
			k = b.heads4(a+".k3", b.linear(a+".k_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads)
			v = b.bhsd(a+".v4", b.heads4(a+".v3", b.linear(a+".v_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads))
			q = b.bhsd(a+".q4", b.rmsNorm(a+".q_norm", q, c.HeadDim))
			k = b.bhsd(a+".k4", b.rmsNorm(a+".k_norm", k, c.HeadDim))
		case st.qkNorm == "head_t":
			q = b.bhsd(a+".q4", b.heads4(a+".q3", b.linear(a+".q_proj", x, c.Hidden, qd, c.AttnBias), c.Heads))
			k = b.bhsd(a+".k4", b.heads4(a+".k3", b.linear(a+".k_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads))
			v = b.bhsd(a+".v4", b.heads4(a+".v3", b.linear(a+".v_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads))
			q = b.rmsNorm(a+".q_norm", q, c.HeadDim)
			k = b.rmsNorm(a+".k_norm", k, c.HeadDim)
		case st.qkNorm == "full":
			q = b.linear(a+".q_proj", x, c.Hidden, qd, c.AttnBias)
			k = b.linear(a+".k_proj", x, c.Hidden, kvd, c.AttnBias)
			v = b.bhsd(a+".v4", b.heads4(a+".v3", b.linear(a+".v_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads))
			q = b.bhsd(a+".q4", b.heads4(a+".q3", b.rmsNorm(a+".q_norm", q, qd), c.Heads))
			k = b.bhsd(a+".k4", b.heads4(a+".k3", b.rmsNorm(a+".k_norm", k, kvd), c.KVHeads))
		case st.projFirst:
			q = b.linear(a+".q_proj", x, c.Hidden, qd, c.AttnBias)
			k = b.linear(a+".k_proj", x, c.Hidden, kvd, c.AttnBias)
			v = b.linear(a+".v_proj", x, c.Hidden, kvd, c.AttnBias)
			q = b.bhsd(a+".q4", b.heads4(a+".q3", q, c.Heads))
			k = b.bhsd(a+".k4", b.heads4(a+".k3", k, c.KVHeads))
			v = b.bhsd(a+".v4", b.heads4(a+".v3", v, c.KVHeads))
		case gemm:
			q = b.bhsd(a+".q4", b.heads4(a+".q3", linear(a+".q_proj", x, c.Hidden, qd, true), c.Heads))
			if rope {
				q = b.rotary(a+".q_rot", q)
			}
			k = b.bhsd(a+".k4", b.heads4(a+".k3", linear(a+".k_proj", x, c.Hidden, kvd, true), c.KVHeads))
			if rope {
				k = b.rotary(a+".k_rot", k)
			}
			v = b.bhsd(a+".v4", b.heads4(a+".v3", linear(a+".v_proj", x, c.Hidden, kvd, true), c.KVHeads))
			rope = false // done
		default:
			q = b.bhsd(a+".q4", b.heads4(a+".q3", b.linear(a+".q_proj", x, c.Hidden, qd, c.AttnBias), c.Heads))
			k = b.bhsd(a+".k4", b.heads4(a+".k3", b.linear(a+".k_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads))
			v = b.bhsd(a+".v4", b.heads4(a+".v3", b.linear(a+".v_proj", x, c.Hidden, kvd, c.AttnBias), c.KVHeads))
		}
		if rope {
			if c.RotaryDim < c.HeadDim {
				qr, qp := b.rotarySlices(a+".q_rot", q)
				kr, kp := b.rotarySlices(a+".k_rot", k)
				q = b.rotaryPartial(a+".q_rot", qr, qp)
				k = b.rotaryPartial(a+".k_rot", kr, kp)
			} else {
				q = b.rotary(a+".q_rot", q)
				k = b.rotary(a+".k_rot", k)
			}
			b.otherCaches()
		}
		y := b.attention(a+".attn", q, k, v)
		o := linear(a+".o_proj", b.merge(a+".merged", y), qd, c.Hidden, c.OutBias)
		if st.postNorm || st.sandwich {
			o = norm(p+".post_attention_layernorm", o)
		}
		h = b.node(p+".attn_residual", "Add", []string{h, b.scale(p+".attn_scaled", o, c.ResidScale)})
		m := p + ".mlp"
		x = h
		switch {
		case st.sandwich:
			x = norm(p+".pre_feedforward_layernorm", h)
		case !st.postNorm:
			x = norm(p+".post_attention_layernorm", h)
		}
		if st.moe {
			h = b.node(p+".mlp_residual", "Add", []string{h, b.moeBlock(m, x)})
			continue
		}
		var act string
		switch {
		case st.geluMLP:
			d := linear(m+".c_proj", b.gelu(m+".act", linear(m+".c_fc", x, c.Hidden, c.Intermediate, c.MLPBias)), c.Intermediate, c.Hidden, c.MLPBias)
			h = b.node(p+".mlp_residual", "Add", []string{h, d})
			continue
		case st.fusedGated:
			gu := b.linear(m+".gate_up_proj", x, c.Hidden, 2*c.Intermediate, c.MLPBias)
			b.spec.Nodes = append(b.spec.Nodes, nodeSpec(m+".split", "Split", []string{gu}, []string{m + ".gate", m + ".up"}, attrInt("axis", 2), attrInt("num_outputs", 2)))
			act = b.nodeIn("dev.carve", m+".act", "SwiGLU", []string{m + ".gate", m + ".up"}, attrFloat("alpha", 1))
		case st.geglu:
			g := b.linear(m+".gate_proj", x, c.Hidden, c.Intermediate, c.MLPBias)
			g = b.node(m+".gelu", "Gelu", []string{g}, attrString("approximate", "tanh"))
			u := b.linear(m+".up_proj", x, c.Hidden, c.Intermediate, c.MLPBias)
			act = b.node(m+".act", "Mul", []string{g, u})
		default:
			act = b.swiglu(m, x, c.MLPBias)
		}
		d := b.linear(m+".down_proj", act, c.Intermediate, c.Hidden, c.MLPBias)
		if st.postNorm || st.sandwich {
			d = norm(p+".post_feedforward_layernorm", d)
		}
		h = b.node(p+".mlp_residual", "Add", []string{h, b.scale(p+".mlp_scaled", d, c.ResidScale)})
	}
	b.lmHead(norm("model.norm", h))
	return nil
}
