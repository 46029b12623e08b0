package arch_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/arch"
	"carve.dev/libs/graph/rewrite"
)

func parseFile(t *testing.T, name string) *arch.Config {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	c, err := arch.Parse(data)
	require.NoError(t, err)
	return c
}

// params counts the elements of the model's weights of type dt: its parameters. Scalar
// constants (an embedding scale, a soft cap) are not parameters; any other initializer with
// data is a bug, weights being declared by shape only.
func params(m *graph.Model, dt graph.DType) int64 {
	var n int64
	for _, v := range m.Initializers {
		if v.DType == dt {
			if !v.Init.ShapeOnly() {
				if v.Init.Size == dt.Size() {
					continue
				}
				panic(v.Name + " has data")
			}
			n += v.Init.Size / dt.Size()
		}
	}
	return n
}

// TestPublishedSizes builds real models from their published config.json and checks their
// parameters against the published counts, to the parameter, and the KV cache's bytes per
// token against layers x 2 x kv_heads x head_dim x 2 (bf16).
func TestPublishedSizes(t *testing.T) {
	for _, tc := range []struct {
		file          string
		params        int64 // published
		layers        int
		kvHeads, head int64
		tiedCopy      int64 // a tied head's elements: the exporter's copy, not a parameter
	}{
		{"Llama-3.1-8B.config.json", 8_030_261_248, 32, 8, 128, 0},
		{"Llama-3.1-70B.config.json", 70_553_706_496, 80, 8, 128, 0},
		{"Qwen2.5-7B.config.json", 7_615_616_512, 28, 4, 128, 0},
		{"Phi-3-mini-4k-instruct.config.json", 3_821_079_552, 32, 32, 96, 0},
		{"Mixtral-8x7B-v0.1.config.json", 46_702_792_704, 32, 8, 128, 0},
		{"gemma-2-27b.config.json", 27_227_128_320, 46, 16, 128, 256000 * 4608},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := parseFile(t, tc.file)
			m, err := c.Build(arch.Options{IgnoreWindow: true})
			require.NoError(t, err)
			require.Equal(t, graph.BFloat16, m.Value(arch.Logits).DType, "torch_dtype")
			require.Equal(t, tc.params, params(m, graph.BFloat16)-tc.tiedCopy)
			require.Equal(t, tc.layers, c.Layers)
			require.Equal(t, int64(tc.layers)*2*tc.kvHeads*tc.head*2, c.KVBytesPerToken(graph.BFloat16))
			require.NoError(t, m.Close())
		})
	}
}

// TestPublishedGPT2: GPT-2's config builds to its published 124,439,808 parameters (counted in
// bf16: the float32 mask constants have data), less the tied LM head's copy of the embedding,
// which the export holds as a weight of its own.
func TestPublishedGPT2(t *testing.T) {
	c := parseFile(t, "gpt2.config.json")
	m, err := c.Build(arch.Options{DType: graph.BFloat16})
	require.NoError(t, err)
	require.True(t, c.Tied)
	require.Equal(t, int64(124_439_808), params(m, graph.BFloat16)-50257*768)
	require.Equal(t, int64(12*2*12*64*4), c.KVBytesPerToken(graph.Float32))
}

// TestWindow: a sliding window is the fused Attention's window_left on the layers that have it
// (Phi-3-mini's every layer; layer_types picks them), and none when the window is ignored.
func TestWindow(t *testing.T) {
	windows := func(m *graph.Model) []int64 {
		var w []int64
		for _, n := range m.Nodes {
			if n.OpType == "Attention" {
				w = append(w, n.Attrs.Int(graph.AttrWindowLeft, -1))
			}
		}
		return w
	}
	c := parseFile(t, "Phi-3-mini-4k-instruct.config.json")
	m, err := c.Build(arch.Options{})
	require.NoError(t, err)
	w := windows(m)
	require.Len(t, w, 32)
	for _, x := range w {
		require.Equal(t, int64(2046), x)
	}
	m, err = c.Build(arch.Options{IgnoreWindow: true})
	require.NoError(t, err)
	require.Equal(t, []int64{-1}, slices.Compact(windows(m)))

	c, err = arch.Parse([]byte(`{"model_type": "mistral", "hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 4,
		"num_key_value_heads": 2, "intermediate_size": 64, "vocab_size": 128, "sliding_window": 16,
		"layer_types": ["sliding_attention", "full_attention", "sliding_attention"]}`))
	require.NoError(t, err)
	m, err = c.Build(arch.Options{})
	require.NoError(t, err)
	require.Equal(t, []int64{15, -1, 15}, windows(m))
	_, err = arch.Parse([]byte(`{"model_type": "mistral", "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 4,
		"intermediate_size": 64, "vocab_size": 128, "sliding_window": 16, "layer_types": ["chunked_attention"]}`))
	require.ErrorContains(t, err, `"chunked_attention": want full_attention or sliding_attention`)
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		json, field, want string
	}{
		{`{"model_type": "mamba2"}`, "", `unknown model_type; supported: bloom, cohere, falcon, gemma, gemma2, gemma3_text, gpt2, gpt_bigcode, gpt_neox, gptj, granite, llama`},
		{`{"model_type": "gptj", "n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 128, "n_positions": 64}`, "rotary_dim", "missing"},
		{`{"model_type": "gptj", "n_embd": 32, "n_layer": 2, "n_head": 4, "vocab_size": 128, "n_positions": 64, "rotary_dim": 8}`, "rotary_dim", "every dim"},
		{`{"model_type": "cohere", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 128, "use_qk_norm": true}`, "use_qk_norm", "not built yet"},
		{`{"model_type": "phi", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 128, "qk_layernorm": true}`, "qk_layernorm", "not built yet"},
		{`{"model_type": "starcoder2", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 128, "use_bias": false}`, "use_bias", "not built yet"},
		{`{"model_type": "bloom", "hidden_size": 32, "n_layer": 2, "n_head": 4}`, "vocab_size", "missing"},
		{`{"hidden_size": 8}`, "model_type", "missing"},
		{`{"model_type": "llama", "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 128}`, "hidden_size", "missing"},
		{`{"model_type": "qwen2", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 64, "vocab_size": 128}`, "num_key_value_heads", "does not divide"},
		{`{"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 128, "hidden_act": "relu"}`, "hidden_act", "silu"},
		{`{"model_type": "llama", "hidden_size": "big"}`, "hidden_size", "whole number"},
		{`[1]`, "", "not a JSON object"},
	} {
		_, err := arch.Parse([]byte(tc.json))
		var ce *arch.ConfigError
		require.True(t, errors.As(err, &ce), "%s: %v", tc.json, err)
		require.Equal(t, tc.field, ce.Field, tc.json)
		require.Contains(t, err.Error(), tc.want, tc.json)
	}
}

// TestOptions: --dtype, the last position's logits, and the target's fusions change the graph as
// asked.
func TestOptions(t *testing.T) {
	c := parseFile(t, "Llama-3.1-8B.config.json")
	m, err := c.Build(arch.Options{DType: graph.Float16, LastLogits: true, Skip: []rewrite.Kind{rewrite.GatedMatMul}})
	require.NoError(t, err)
	lg := m.Value(arch.Logits)
	require.Equal(t, graph.Float16, lg.DType)
	require.Equal(t, "[batch, 1, 128256]", lg.Shape.String())
	ops := map[string]int{}
	for _, n := range m.Nodes {
		ops[n.OpType]++
	}
	require.Equal(t, 32, ops["SwiGLU"])
	require.Zero(t, ops["GatedMatMul"])
	require.Equal(t, 32, ops["Attention"])
	require.Equal(t, 65, ops["RMSNormalization"])
	b, err := graph.Bind(m, map[string]int64{arch.BatchDim: 2, arch.SeqDim: 5})
	require.NoError(t, err)
	require.Equal(t, []int64{2, 1, 128256}, b.Shape(lg))

	g, err := c.Build(arch.Options{})
	require.NoError(t, err)
	for _, n := range g.Nodes {
		require.NotEqual(t, "SwiGLU", n.OpType, "GatedMatMul where the target has it")
	}
	_, err = c.Build(arch.Options{DType: graph.Int8})
	require.Error(t, err)
}

// TestBuildKV: the GenAI decode graph of Llama-3.1-8B has GenAI's inputs and outputs, past and
// present of the context's length read and written by GroupQueryAttention (the form package
// generate recognises; the estimator's tests plan it beside the zoo's exports), and a sliding
// window becomes GroupQueryAttention's local_window_size.
func TestBuildKV(t *testing.T) {
	c := parseFile(t, "Llama-3.1-8B.config.json")
	m, err := c.BuildKV(arch.KVOptions{})
	require.NoError(t, err)
	require.Len(t, m.Inputs, 2+2*32)
	require.Len(t, m.Outputs, 1+2*32)
	require.Equal(t, "[batch, total_seq]", m.Value(arch.AttentionMask).Shape.String())
	past := m.Value("past_key_values.31.key")
	require.Equal(t, "[batch, 8, max_seq, 128]", past.Shape.String())
	require.Equal(t, graph.BFloat16, past.DType)
	require.Equal(t, "GroupQueryAttention", past.Consumers[0].OpType)
	require.Equal(t, "[batch, seq, 128256]", m.Value(arch.Logits).Shape.String())
	require.Equal(t, int64(8_030_261_248), params(m, graph.BFloat16)-2*131072*64, "the parameters and the rotary caches")
	ops := map[string]int{}
	for _, n := range m.Nodes {
		ops[n.OpType]++
	}
	require.Equal(t, 32, ops["GroupQueryAttention"])
	require.Equal(t, 32, ops["GatedMatMul"])
	require.Equal(t, 64, ops["SkipSimplifiedLayerNormalization"])

	sep, err := c.BuildKV(arch.KVOptions{SeparateQKV: true, RotaryPositions: 4096, DType: graph.Float16, Skip: []rewrite.Kind{rewrite.GatedMatMul}})
	require.NoError(t, err)
	require.Equal(t, "[4096, 64]", sep.Value("cos_cache").Shape.String())
	require.Equal(t, graph.Float16, sep.Value("present.31.value").DType)

	// int4 as GenAI's builder writes it: every product over a weight, the LM head's too, is
	// MatMulNBits of 4-bit blocks of 32 with one fp16 scale each; the embedding and norms stay fp16.
	q4, err := c.BuildKV(arch.KVOptions{DType: graph.Float16, Int4Block: 32})
	require.NoError(t, err)
	ops = map[string]int{}
	for _, n := range q4.Nodes {
		ops[n.OpType]++
	}
	require.Equal(t, 5*32+1, ops["MatMulNBits"], "q|k|v, o, gate, up, down per layer and the LM head")
	require.Zero(t, ops["MatMul"]+ops["GatedMatMul"])
	const layer = 4096*4096*2 + 4096*1024*2 + 3*4096*14336 // q, o; k, v; gate, up, down
	const quantized = 32*layer + 4096*128256
	require.Equal(t, int64(quantized/2), params(q4, graph.Uint8), "half a byte per weight")
	require.Equal(t, int64(quantized/32)+128256*4096+(2*32+1)*4096, params(q4, graph.Float16)-2*131072*64,
		"a scale per block of 32, the embedding, the norms")
	_, err = c.BuildKV(arch.KVOptions{Int4Block: 48})
	require.ErrorContains(t, err, "int4 block size 48")
	moe := parseFile(t, "Mixtral-8x7B-v0.1.config.json")
	_, err = moe.BuildKV(arch.KVOptions{Int4Block: 32})
	require.ErrorContains(t, err, "an MoE's experts are not quantized")

	phi := parseFile(t, "Phi-3-mini-4k-instruct.config.json")
	pm, err := phi.BuildKV(arch.KVOptions{})
	require.NoError(t, err, "Phi-3's packed projections are GenAI's packed q|k|v and split gate, up")
	require.Equal(t, "[3072, 9216]", pm.Value("model.layers.0.self_attn.qkv_proj.weight.T").Shape.String())
	gpt2 := parseFile(t, "gpt2.config.json")
	_, err = gpt2.BuildKV(arch.KVOptions{})
	var ce *arch.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, err.Error(), "supported: gemma3_text, granite, llama, mistral, mixtral, phi3, qwen2")

	w, err := arch.Parse([]byte(`{"model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
	  "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100, "sliding_window": 5, "max_position_embeddings": 64}`))
	require.NoError(t, err)
	wm, err := w.BuildKV(arch.KVOptions{})
	require.NoError(t, err)
	for _, n := range wm.Nodes {
		if n.OpType == "GroupQueryAttention" {
			require.Equal(t, int64(5), n.Attrs.Int("local_window_size", -1))
		}
	}
}

// TestSplit: Llama-3.1-70B over 2 ranks holds half its heads, columns and vocabulary per rank, 4 of
// its 8 KV heads; over 16 ranks one KV head replicated on 2; a split that does not divide is an
// error naming the field.
func TestSplit(t *testing.T) {
	c := parseFile(t, "Llama-3.1-70B.config.json")
	r, tp, err := c.Split(2)
	require.NoError(t, err)
	require.Equal(t, arch.TP{Ranks: 2, Heads: 32, KVHeads: 4, Intermediate: 14336, Vocab: 64128, KVReplicas: 1, AllReduces: 161}, *tp)
	require.Equal(t, c.KVBytesPerToken(graph.BFloat16)/2, r.KVBytesPerToken(graph.BFloat16))
	m, err := r.Build(arch.Options{})
	require.NoError(t, err)
	whole, err := c.Build(arch.Options{})
	require.NoError(t, err)
	norms := int64(c.Layers*2+1) * c.Hidden
	require.Equal(t, (params(whole, graph.BFloat16)-norms)/2+norms, params(m, graph.BFloat16), "everything split but the norms")
	_, tp, err = c.Split(16)
	require.NoError(t, err)
	require.Equal(t, int64(1), tp.KVHeads)
	require.Equal(t, int64(2), tp.KVReplicas)
	q := parseFile(t, "Qwen2.5-7B.config.json") // 28 heads, 4 KV heads, intermediate 18944
	kv, err := arch.Parse([]byte(`{"model_type": "llama", "hidden_size": 96, "num_hidden_layers": 2, "num_attention_heads": 12,
	  "num_key_value_heads": 4, "intermediate_size": 192, "vocab_size": 120}`))
	require.NoError(t, err)
	o, err := arch.Parse([]byte(`{"model_type": "olmo2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
	  "intermediate_size": 128, "vocab_size": 122}`))
	require.NoError(t, err)
	v, err := arch.Parse([]byte(`{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
	  "intermediate_size": 128, "vocab_size": 122}`))
	require.NoError(t, err)
	for _, tc := range []struct {
		c           *arch.Config
		ranks       int
		field, want string
	}{
		{c, 3, "num_attention_heads", "64 heads do not split over 3 ranks"},
		{q, 7, "intermediate_size", "18944 columns do not split over 7 ranks"},
		{q, 8, "num_attention_heads", "28 heads do not split over 8 ranks"},
		{kv, 3, "num_key_value_heads", "4 KV heads do not split over 3 ranks"},
		{kv, 6, "num_key_value_heads", "4 KV heads cannot be replicated over 6 ranks"},
		{v, 4, "vocab_size", "122 rows do not split over 4 ranks"},
		{o, 2, "model_type", "built for the Llama lineage"},
	} {
		_, _, err := tc.c.Split(tc.ranks)
		var ce *arch.ConfigError
		require.ErrorAs(t, err, &ce, "%d", tc.ranks)
		require.Equal(t, tc.field, ce.Field, "%d", tc.ranks)
		require.ErrorContains(t, err, tc.want)
	}
}

// opCounts counts the graph's nodes by op type.
func opCounts(m *graph.Model) map[string]int {
	ops := map[string]int{}
	for _, n := range m.Nodes {
		ops[n.OpType]++
	}
	return ops
}

// TestPublishedFamilies builds the families without a Llama lineage from their published
// config.json: the parameters within 0.5% of the published count (a tied LM head's copy of the
// embedding left out), the KV cache per token, and the fused ops each layer is made of.
func TestPublishedFamilies(t *testing.T) {
	for _, tc := range []struct {
		file      string
		published int64 // the model card's parameter count
		tiedCopy  int64
		kvPerTok  int64 // bf16 bytes
		ops       map[string]int
	}{
		// bigscience/bloom-560m: 559,214,592; ALiBi beside the padding mask, the embedding's
		// LayerNorm, q|k|v one Gemm over rows gathered per head, bloom's gelu op by op (its Tanh).
		{"bloom-560m.config.json", 559_214_592, 250880 * 1024, 24 * 2 * 16 * 64 * 2,
			map[string]int{"LayerNormalization": 50, "Attention": 24, "Gemm": 24 * 4, "Tanh": 24, "Gelu": 0, "MatMul": 1}},
		// bigcode/starcoder2-3b: 3.03B; LayerNorm with biases, biased q/k/v/o and c_fc/c_proj as
		// Gemm over rows, gelu (tanh), rotary, a window of 4096 keys.
		{"starcoder2-3b.config.json", 3_030_000_000, 49152 * 3072, 30 * 2 * 2 * 128 * 2,
			map[string]int{"LayerNormalization": 61, "Attention": 30, "RotaryEmbedding": 60, "Gemm": 30 * 6, "Gelu": 30, "MatMul": 2}},
		// microsoft/phi-2: 2,779,683,840; the parallel block of one LayerNorm, biased q/k/v/dense,
		// fc1 and fc2, 32 of each head's 80 dims rotated, an LM head with a bias.
		{"phi-2.config.json", 2_779_683_840, 0, 32 * 2 * 32 * 80 * 2,
			map[string]int{"LayerNormalization": 33, "Attention": 32, "RotaryEmbedding": 64, "Gemm": 32*6 + 1, "Gelu": 32, "MatMul": 1}},
		// EleutherAI/gpt-j-6b: 6,053,381,344; the parallel block of one LayerNorm, 64 of each
		// head's 256 dims turned on interleaved pairs op by op from each layer's sinusoid table
		// (float32, not a parameter), the biased MLP and LM head as Gemm over rows.
		{"gpt-j-6b.config.json", 6_053_381_344, 0, 28 * 2 * 16 * 256 * 2,
			map[string]int{"LayerNormalization": 29, "Attention": 28, "RotaryEmbedding": 0, "GatherElements": 28, "Neg": 56, "Gemm": 28*2 + 1, "Gelu": 28, "MatMul": 28 * 4}},
		// CohereForAI/c4ai-command-r-v01: 35B; the parallel block of one LayerNorm without a bias,
		// q and k turned on interleaved pairs op by op (in float32, Casts about them in fp16),
		// the logits times logit_scale, the tied head.
		{"c4ai-command-r-v01.config.json", 35_000_000_000, 256000 * 8192, 40 * 2 * 64 * 128 * 2,
			map[string]int{"LayerNormalization": 41, "Attention": 40, "RotaryEmbedding": 0, "GatedMatMul": 40, "Neg": 80, "Cast": 40*4 + 2 + 4 + 3, "Mul": 40*4 + 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := parseFile(t, tc.file)
			m, err := c.Build(arch.Options{DType: graph.BFloat16})
			require.NoError(t, err)
			got := params(m, graph.BFloat16) - tc.tiedCopy
			t.Logf("%d parameters, published %d (%+.3f%%)", got, tc.published, 100*float64(got-tc.published)/float64(tc.published))
			require.InDelta(t, 0, 100*float64(got-tc.published)/float64(tc.published), 0.5, "%d parameters, published %d", got, tc.published)
			require.Equal(t, tc.kvPerTok, c.KVBytesPerToken(graph.BFloat16))
			ops := opCounts(m)
			for op, n := range tc.ops {
				require.Equal(t, n, ops[op], op)
			}
			require.Equal(t, "[batch, seq, "+fmt.Sprint(c.Vocab)+"]", m.Value(arch.Logits).Shape.String())
			require.NoError(t, m.Close())
		})
	}
}

// TestBloomALiBi: bloom's slopes for a head count that is no power of two (the powers of 2^-2 for
// the first 4 heads, odd powers of 2^-1 for the other 2), and the fused Attention reading the
// padding mask plus the ALiBi bias viewed by heads, [batch, heads, 1, seq].
func TestBloomALiBi(t *testing.T) {
	c, err := arch.Parse([]byte(`{"model_type": "bloom", "hidden_size": 48, "n_layer": 2, "n_head": 6, "vocab_size": 100}`))
	require.NoError(t, err)
	require.True(t, c.Tied)
	m, err := c.Build(arch.Options{})
	require.NoError(t, err)
	data, err := m.Value("alibi.slopes").Init.Bytes()
	require.NoError(t, err)
	var slopes []float32
	for i := 0; i < len(data); i += 4 {
		slopes = append(slopes, math.Float32frombits(binary.LittleEndian.Uint32(data[i:])))
	}
	require.Equal(t, []float32{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}, slopes)
	var masks []string
	for _, n := range m.Nodes {
		if n.OpType == "Attention" {
			mask := n.Inputs[3]
			require.Equal(t, "Add", mask.Producer.OpType)
			masks = append(masks, mask.Shape.String())
		}
	}
	require.Equal(t, []string{"[batch, 6, 1, seq]", "[batch, 6, 1, seq]"}, masks)
	_, err = arch.Parse([]byte(`{"model_type": "bloom", "hidden_size": 48, "n_layer": 2, "n_head": 6, "vocab_size": 100,
		"apply_residual_connection_post_layernorm": true}`))
	var ce *arch.ConfigError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "apply_residual_connection_post_layernorm", ce.Field)
}

// TestPhiRotaryDefault: a phi config without partial_rotary_factor rotates half of each head, as
// PhiConfig's default does; one that names it rotates that part.
func TestPhiRotaryDefault(t *testing.T) {
	const base = `"model_type": "phi", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "vocab_size": 128`
	for _, tc := range []struct {
		extra string
		rot   int64
	}{{"", 8}, {`, "partial_rotary_factor": 0.25`, 4}, {`, "rope_parameters": {"rope_type": "default", "partial_rotary_factor": 1.0}`, 16}} {
		c, err := arch.Parse([]byte("{" + base + tc.extra + "}"))
		require.NoError(t, err)
		require.Equal(t, tc.rot, c.RotaryDim, tc.extra)
	}
}
