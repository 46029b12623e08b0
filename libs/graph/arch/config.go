// Package arch builds, from a transformers config.json alone, the fused graph carve runs for a
// decoder architecture: the graph package rewrite makes of that model's ONNX export, with every
// weight declared by its shape only (graph.NewShapeTensor), so that a capacity planner plans a
// 70B model without an export and without a byte of its weights.
//
//	cfg, err := arch.Parse(data)             // *ConfigError names a missing or bad field
//	m, err := cfg.Build(arch.Options{Skip: fuseOptions.Skip})
//
// The graph is the canonical one: input_ids and attention_mask [batch, seq] int64 in, logits
// [batch, seq, vocab] out (or [batch, 1, vocab], Options.LastLogits), RMSNormalization or
// LayerNormalization, com.microsoft.RotaryEmbedding, ONNX Attention (opset 23) with is_causal and
// the [batch, 1, 1, keys] padding mask made from attention_mask, the fix of rows with no key kept
// that the rewrite adds, SwiGLU or GatedMatMul, Gemm for linear layers with a bias, in the order
// the rewrite leaves them. Where the rewrite leaves part of a family's export as exported (bloom's
// gelu, the rotary embedding of gptj and cohere on interleaved pairs), so does the built graph,
// op by op. The zoo's exports are the ground truth: the test in package engine plans both and
// compares (see Families for what is covered).
//
// What the exporter does and the config cannot say is followed where it changes sizes: a tied
// LM head is a weight of its own ([hidden, vocab], the exporter's transposed copy of the
// embedding), as in every dynamo export. A zero-initialised bias or a norm weight of ones that
// an export of random weights folds away is kept: real checkpoints have them.
package arch

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"carve.dev/libs/graph"
)

// ConfigError reports a config.json this package cannot build a graph from: not JSON, an
// unknown model_type, a field the family needs but lacks, or a value it cannot use.
type ConfigError struct {
	ModelType string // "" when the config has none
	Field     string // the field at fault; "" when it is not one field's
	Problem   string
	Supported []string // for an unknown model_type: the ones this package builds
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config")
	if e.ModelType != "" {
		fmt.Fprintf(&b, " (model_type %q)", e.ModelType)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": " + e.Problem)
	if len(e.Supported) > 0 {
		b.WriteString("; supported: " + strings.Join(e.Supported, ", "))
	}
	return b.String()
}

// Config is a decoder's config.json, read into what the graph needs.
type Config struct {
	ModelType    string // as in the file
	Family       string // the family that builds it (Families)
	Hidden       int64
	Layers       int
	Heads        int64
	KVHeads      int64
	HeadDim      int64
	Intermediate int64
	Vocab        int64
	MaxPositions int64 // learned position embeddings (gpt2, opt); 0 when rotary
	// Positions is max_position_embeddings, the longest context the model was made for (0 when
	// the config does not say): GenAI's context_length, the rows of its rotary caches.
	Positions int64
	Eps       float64
	Tied      bool        // tie_word_embeddings
	DType     graph.DType // torch_dtype (or dtype); 0 when the config names none
	// RotaryDim is how many dims of each head the rotary embedding turns (head_dim x
	// partial_rotary_factor); 0 for learned positions.
	RotaryDim int64
	RopeType  string // rope_scaling / rope_parameters rope_type: shapes do not depend on it
	// SlidingWindow is the attention's window in keys, the query's own included (0: none): the
	// fused Attention's window_left is SlidingWindow - 1, as an export's windowed mask fuses.
	SlidingWindow int64
	// FullLayers are the layers that attend to every earlier key despite SlidingWindow
	// (layer_types' "full_attention"); nil when every layer is windowed.
	FullLayers []bool
	// NoRope marks the layers without a rotary embedding (smollm3's no_rope_layers).
	NoRope []bool

	AttnBias   bool // q, k, v (and o, when OutBias) have biases
	OutBias    bool
	MLPBias    bool
	Activation string // the MLP's activation, as the config names it

	// Scalars the families multiply by (1 where the family has none).
	EmbedScale  float64 // gemma: sqrt(hidden); granite: embedding_multiplier
	ResidScale  float64 // granite: residual_multiplier
	LogitsScale float64 // granite: 1 / logits_scaling
	AttnScale   float64 // the attention's scale
	// Softcap is the attention scores' soft cap (gemma2: attn_logit_softcapping; 0 none):
	// scores = Softcap * tanh(scores / Softcap), ONNX Attention's softcap.
	Softcap float64
	// Experts and ExpertsPerToken: a mixture-of-experts MLP (mixtral: num_local_experts,
	// num_experts_per_tok; 0 for a dense MLP), each expert a SwiGLU MLP of Intermediate units,
	// its top-k weights renormalised.
	Experts, ExpertsPerToken int64
	// LocalRope: the sliding layers have rotary tables of their own base (gemma3's
	// rope_local_base_freq), computed beside the model's.
	LocalRope bool
	// FinalSoftcap caps the logits the same way (gemma2: final_logit_softcapping; 0 none).
	FinalSoftcap float64

	raw map[string]json.RawMessage
}

// KVBytesPerToken is what one position of one sequence takes in a KV cache of type dt: the keys
// and values of every layer, layers x 2 x kv_heads x head_dim x dt's size.
func (c *Config) KVBytesPerToken(dt graph.DType) int64 {
	return int64(c.Layers) * 2 * c.KVHeads * c.HeadDim * dt.Size()
}

// family is how one model_type is read and built.
type family struct {
	name  string
	read  func(c *Config, r *reader) // fills the family's fields; r records what is missing
	build func(b *builder) error
	// tied is the family's default for tie_word_embeddings.
	tied bool
}

var families = map[string]*family{}

func register(f *family, modelTypes ...string) {
	for _, t := range append([]string{f.name}, modelTypes...) {
		families[t] = f
	}
}

// Families returns the model_type names Parse accepts, sorted.
func Families() []string {
	out := make([]string, 0, len(families))
	for t := range families {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Parse reads a config.json. It fails with a *ConfigError for an unknown model_type (listing
// the supported ones) or a field the family needs but lacks or cannot use.
func Parse(data []byte) (*Config, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &ConfigError{Problem: "not a JSON object: " + err.Error()}
	}
	c := &Config{raw: raw, EmbedScale: 1, ResidScale: 1, LogitsScale: 1}
	r := &reader{c: c}
	c.ModelType = r.str("model_type", "")
	if c.ModelType == "" {
		if r.err != nil {
			return nil, r.err
		}
		return nil, &ConfigError{Field: "model_type", Problem: "missing: a transformers config.json names its architecture there", Supported: Families()}
	}
	f := families[c.ModelType]
	if f == nil {
		return nil, &ConfigError{ModelType: c.ModelType, Problem: "unknown model_type", Supported: Families()}
	}
	c.Family = f.name
	c.Tied = r.boolean("tie_word_embeddings", f.tied)
	c.DType = r.dtype()
	f.read(c, r)
	if r.err != nil {
		return nil, r.err
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}

// check validates the sizes every family shares.
func (c *Config) check() error {
	bad := func(field, format string, args ...any) error {
		return &ConfigError{ModelType: c.ModelType, Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"hidden_size", c.Hidden}, {"num_hidden_layers", int64(c.Layers)}, {"num_attention_heads", c.Heads},
		{"num_key_value_heads", c.KVHeads}, {"head_dim", c.HeadDim}, {"intermediate_size", c.Intermediate}, {"vocab_size", c.Vocab}} {
		if f.v < 1 {
			return bad(f.name, "%d: want at least 1", f.v)
		}
		if f.v > 1<<31 {
			return bad(f.name, "%d is too large", f.v)
		}
	}
	if c.Heads%c.KVHeads != 0 {
		return bad("num_key_value_heads", "%d does not divide num_attention_heads %d", c.KVHeads, c.Heads)
	}
	if c.RotaryDim%2 != 0 || c.RotaryDim > c.HeadDim || c.RotaryDim < 0 {
		return bad("partial_rotary_factor", "rotates %d of head_dim %d dims: want an even number, at most head_dim", c.RotaryDim, c.HeadDim)
	}
	if !(c.Eps > 0) {
		return bad("rms_norm_eps", "%g: want a positive epsilon", c.Eps)
	}
	return nil
}

// reader reads fields of a config, recording the first missing or malformed one.
type reader struct {
	c   *Config
	err *ConfigError
}

// perHead sets a multi-head attention's head size, Hidden / Heads, which field (the heads'
// count) must divide (hidden names the width in the family's config), and its scale
// 1/sqrt(head size).
func (r *reader) perHead(field, hidden string) {
	c := r.c
	if c.Heads <= 0 {
		return
	}
	c.HeadDim = c.Hidden / c.Heads
	if c.Hidden%c.Heads != 0 {
		r.fail(field, fmt.Sprintf("%d does not divide %s %d", c.Heads, hidden, c.Hidden))
	}
	c.AttnScale = 1 / math.Sqrt(float64(c.HeadDim))
}

func (r *reader) fail(field, problem string) {
	if r.err == nil {
		r.err = &ConfigError{ModelType: r.c.ModelType, Field: field, Problem: problem}
	}
}

// lookup returns the first of names the config has (not null) and its name.
func (r *reader) lookup(names ...string) (json.RawMessage, string) {
	for _, n := range names {
		if v, ok := r.c.raw[n]; ok && string(v) != "null" {
			return v, n
		}
	}
	return nil, ""
}

// need reads a required positive integer, trying each name in turn (aliases such as n_embd).
func (r *reader) need(names ...string) int64 {
	v, ok := r.opt(names...)
	if !ok {
		r.fail(names[0], "missing: the family needs it")
	}
	return v
}

// opt reads an optional integer, trying each name in turn.
func (r *reader) opt(names ...string) (int64, bool) {
	raw, name := r.lookup(names...)
	if raw == nil {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		r.fail(name, fmt.Sprintf("%s: want a whole number", raw))
		return 0, false
	}
	return int64(f), true
}

func (r *reader) float(def float64, names ...string) float64 {
	raw, name := r.lookup(names...)
	if raw == nil {
		return def
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		r.fail(name, fmt.Sprintf("%s: want a number", raw))
		return def
	}
	return f
}

func (r *reader) boolean(name string, def bool) bool {
	raw, _ := r.lookup(name)
	if raw == nil {
		return def
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		r.fail(name, fmt.Sprintf("%s: want true or false", raw))
		return def
	}
	return b
}

func (r *reader) str(name, def string) string {
	raw, _ := r.lookup(name)
	if raw == nil {
		return def
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		r.fail(name, fmt.Sprintf("%s: want a string", raw))
		return def
	}
	return s
}

// ParseDType reads a dtype as configs and people write it: float32/fp32, bfloat16/bf16,
// float16/fp16/half.
func ParseDType(s string) (graph.DType, bool) {
	switch strings.ToLower(strings.TrimPrefix(s, "torch.")) {
	case "float32", "fp32", "float":
		return graph.Float32, true
	case "bfloat16", "bf16":
		return graph.BFloat16, true
	case "float16", "fp16", "half":
		return graph.Float16, true
	}
	return 0, false
}

// dtype reads torch_dtype (transformers 4) or dtype (transformers 5).
func (r *reader) dtype() graph.DType {
	for _, name := range []string{"torch_dtype", "dtype"} {
		s := r.str(name, "")
		if s == "" {
			continue
		}
		dt, ok := ParseDType(s)
		if !ok {
			r.fail(name, fmt.Sprintf("%q: want float32, bfloat16 or float16", s))
		}
		return dt
	}
	return 0
}

// rope reads the rotary embedding's parameters: rope_parameters (transformers 5) or
// rope_theta and rope_scaling (4), and partial_rotary_factor where either puts it. Only the
// rotated width changes the graph's shapes; the scaling type changes the frequencies' values.
func (r *reader) rope(headDim int64, partialNames ...string) {
	c := r.c
	params := map[string]json.RawMessage{}
	for _, name := range []string{"rope_parameters", "rope_scaling"} {
		if raw, _ := r.lookup(name); raw != nil {
			var p map[string]json.RawMessage
			if err := json.Unmarshal(raw, &p); err != nil {
				r.fail(name, "want an object")
				return
			}
			// gemma3's rope_parameters are per layer type; every type has the same shapes.
			if len(p) > 0 && p["rope_type"] == nil && p["rope_theta"] == nil && p["type"] == nil {
				for _, k := range slices.Sorted(maps.Keys(p)) {
					var inner map[string]json.RawMessage
					if json.Unmarshal(p[k], &inner) == nil {
						p = inner
						break
					}
				}
			}
			for k, v := range p {
				if _, ok := params[k]; !ok {
					params[k] = v
				}
			}
		}
	}
	c.RopeType = "default"
	for _, k := range []string{"rope_type", "type"} {
		var s string
		if v, ok := params[k]; ok && json.Unmarshal(v, &s) == nil && s != "" {
			c.RopeType = s
			break
		}
	}
	switch c.RopeType {
	case "default", "linear", "dynamic", "yarn", "longrope", "llama3", "su", "proportional":
	default:
		r.fail("rope_scaling", fmt.Sprintf("rope_type %q is not one carve knows (default, linear, dynamic, yarn, longrope, llama3)", c.RopeType))
	}
	factor := 1.0
	if v, ok := params["partial_rotary_factor"]; ok {
		_ = json.Unmarshal(v, &factor)
	}
	factor = r.float(factor, partialNames...)
	c.RotaryDim = int64(math.Round(float64(headDim) * factor))
}

// heads reads the attention's sizes shared by the rotary families.
func (r *reader) heads() {
	c := r.c
	c.Hidden = r.need("hidden_size")
	c.Layers = int(r.need("num_hidden_layers"))
	c.Heads = r.need("num_attention_heads")
	c.KVHeads = c.Heads
	if v, ok := r.opt("num_key_value_heads"); ok {
		c.KVHeads = v
	}
	if c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
	}
	if v, ok := r.opt("head_dim"); ok {
		c.HeadDim = v
	}
	c.Intermediate = r.need("intermediate_size")
	c.Vocab = r.need("vocab_size")
	c.Positions, _ = r.opt("max_position_embeddings")
	if c.HeadDim > 0 {
		c.AttnScale = 1 / math.Sqrt(float64(c.HeadDim))
	}
}

// slidingWindow reads the attention's window, where the family uses it.
func (r *reader) slidingWindow(enabled bool) {
	if !enabled {
		return
	}
	if w, ok := r.opt("sliding_window"); ok && w > 0 {
		r.c.SlidingWindow = w
	}
	raw, _ := r.lookup("layer_types")
	if raw == nil || r.c.SlidingWindow == 0 {
		return
	}
	var types []string
	if err := json.Unmarshal(raw, &types); err != nil {
		r.fail("layer_types", fmt.Sprintf("%s: want a list of strings", raw))
		return
	}
	for _, t := range types {
		if t != "full_attention" && t != "sliding_attention" {
			r.fail("layer_types", fmt.Sprintf("%q: want full_attention or sliding_attention", t))
			return
		}
		r.c.FullLayers = append(r.c.FullLayers, t == "full_attention")
	}
}

// band is the keys layer i's queries see: causal, within the sliding window where it has one.
func (c *Config) band(i int) graph.AttentionBand {
	b := graph.AttentionBand{Left: -1, Right: 0}
	if c.SlidingWindow > 0 && !(i < len(c.FullLayers) && c.FullLayers[i]) {
		b.Left = c.SlidingWindow - 1
	}
	return b
}
