package rewrite_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/testmodels"
)

func load(t testing.TB, name string) *graph.Model {
	t.Helper()
	m, err := graph.Load(testmodels.MustGet(name).WriteTemp(t))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Close()) })
	return m
}

// fingerprint is what Fuse must not change in its input.
func fingerprint(m *graph.Model) []string {
	var out []string
	for _, n := range m.Nodes {
		s := n.Name + " " + n.OpType
		for _, v := range n.Outputs {
			if v != nil {
				s += " " + v.String()
			}
		}
		out = append(out, s)
	}
	for _, v := range m.Values {
		out = append(out, v.String())
	}
	return out
}

// TestFixtures fuses every fixture: the counts by kind, the input untouched, the fused
// graph's invariants, and idempotence.
func TestFixtures(t *testing.T) {
	type counts map[rewrite.Kind]int
	// Every SwiGLU of a gated MLP whose gate and up are MatMuls of weights becomes a GatedMatMul
	// (one per layer); the SwiGLU fusion is still counted, its node replaced in the next pass.
	llm := counts{rewrite.Attention: 2, rewrite.RMSNorm: 5, rewrite.SiLU: 2, rewrite.SwiGLU: 2, rewrite.Rotary: 4}
	gated := counts{rewrite.Attention: 2, rewrite.RMSNorm: 5, rewrite.SiLU: 2, rewrite.SwiGLU: 2, rewrite.GatedMatMul: 2, rewrite.Rotary: 4}
	want := map[string]counts{
		"gpt2": {rewrite.Attention: 2, rewrite.Gelu: 2, rewrite.TransposedWeight: 1}, "gpt2_fused": {rewrite.Attention: 2},
		"bert":          {rewrite.Attention: 2, rewrite.Gelu: 2, rewrite.MatMulBias: 12},
		"bert_fused":    {rewrite.Attention: 2, rewrite.MatMulBias: 10},
		"bert_ts_fused": {rewrite.Attention: 2, rewrite.MatMulBias: 6},
		"qwen2":         {rewrite.Attention: 2, rewrite.RMSNorm: 5, rewrite.SiLU: 2, rewrite.SwiGLU: 2, rewrite.GatedMatMul: 2, rewrite.Rotary: 4, rewrite.MatMulBias: 6},
		"qwen2_q4":      llm, "llama": gated,
		"qwen2_1p5b_graph": {rewrite.Attention: 28, rewrite.RMSNorm: 57, rewrite.SiLU: 28, rewrite.SwiGLU: 28, rewrite.GatedMatMul: 28, rewrite.Rotary: 56, rewrite.TransposedWeight: 1, rewrite.MatMulBias: 84},
		"qwen2_kv":         {rewrite.RMSNorm: 5, rewrite.SiLU: 2, rewrite.SwiGLU: 2, rewrite.GatedMatMul: 2, rewrite.MatMulBias: 6},
		"qwen2_gqa":        {rewrite.SiLU: 2, rewrite.SwiGLU: 2, rewrite.GatedMatMul: 2, rewrite.MatMulBias: 6},
	}
	// Candidates known to stay unfused. qwen2_kv (the KV-cache export): its rotary tables come
	// from position_ids, one per batch row ([batch, 1, seq, head]), and its keys are the past
	// concatenated with the new ones ([batch, heads, past_seq + seq, head]), through reshapes the
	// attention pattern cannot prove a transpose. qwen2_q4: its gate and up products are
	// com.microsoft.MatMulNBits of 4-bit weights, which GatedMatMul does not read.
	// gpt2: its attentions' Q, K and V are views of c_attn's product, but the fix of padded rows
	// reads V's transposed copy too (the mean of V), so the copies would not go.
	unfused := map[string]map[rewrite.Kind]int{"qwen2_kv": {rewrite.Rotary: 4, rewrite.Attention: 2}, "qwen2_q4": {rewrite.GatedMatMul: 2},
		"gpt2": {rewrite.AttentionLayout: 2}, "gpt2_fused": {rewrite.AttentionLayout: 2}}
	for _, fm := range testmodels.Models() {
		t.Run(fm.Name, func(t *testing.T) {
			m := load(t, fm.Name)
			before := fingerprint(m)
			f, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Equal(t, before, fingerprint(m), "the input model is not modified")
			got := counts{}
			for _, x := range rep.Fused {
				got[x.Kind]++
			}
			if want[fm.Name] == nil {
				require.Empty(t, got)
				require.Same(t, m, f)
				return
			}
			require.Equal(t, want[fm.Name], got, "unfused: %+v", rep.Unfused)
			left := map[rewrite.Kind]int{}
			for _, u := range rep.Unfused {
				left[u.Kind]++
			}
			if unfused[fm.Name] == nil {
				require.Empty(t, rep.Unfused, "every candidate of a PyTorch export fuses")
			} else {
				require.Equal(t, unfused[fm.Name], left, "unfused: %+v", rep.Unfused)
			}
			require.Equal(t, len(m.Nodes), rep.NodesBefore)
			require.Equal(t, len(f.Nodes), rep.NodesAfter)
			require.Equal(t, m.DimNames, f.DimNames)
			for i, v := range m.Outputs {
				require.Equal(t, v.Name, f.Outputs[i].Name)
				require.Equal(t, v.DType, f.Outputs[i].DType)
			}
			names := map[string]bool{}
			for _, n := range f.Nodes {
				names[n.Name] = true
			}
			refused := map[string]bool{} // nodes of one fusion that a later one replaced (Swish by SwiGLU)
			for _, x := range rep.Fused {
				for _, r := range x.Replaced {
					refused[r] = true
				}
			}
			for _, x := range rep.Fused {
				require.True(t, names[x.Node] || refused[x.Node], "fused node %s", x.Node)
				if names[x.Node] {
					require.NotNil(t, f.Value(x.Output), "the fused graph produces %s", x.Output)
				}
				require.NotNil(t, m.Value(x.Output), "the output keeps its exported name")
				require.NotEmpty(t, x.Replaced)
				for _, r := range x.Replaced {
					require.False(t, names[r], "replaced node %s is gone", r)
				}
			}
			again, rep2, err := rewrite.Fuse(f, rewrite.Options{})
			require.NoError(t, err)
			require.Same(t, f, again, "a fused graph has nothing left to fuse")
			require.Empty(t, rep2.Fused)
		})
	}
}

func TestSkip(t *testing.T) {
	m := load(t, "qwen2")
	_, rep, err := rewrite.Fuse(m, rewrite.Options{Skip: []rewrite.Kind{rewrite.Attention, rewrite.Rotary}})
	require.NoError(t, err)
	require.Zero(t, rep.Count(rewrite.Attention))
	require.Zero(t, rep.Count(rewrite.Rotary))
	require.Equal(t, 5, rep.Count(rewrite.RMSNorm))
	for _, u := range rep.Unfused {
		require.NotEqual(t, rewrite.Attention, u.Kind, "skipped kinds report no candidates")
	}
	_, rep, err = rewrite.Fuse(m, rewrite.Options{Skip: rewrite.Kinds()})
	require.NoError(t, err)
	require.Empty(t, rep.Fused)
}

// TestFusedShapes: the fused graph binds, and every value the two graphs share has the same
// concrete shape, at onnxruntime's bindings.
func TestFusedShapes(t *testing.T) {
	for _, name := range []string{"qwen2", "gpt2", "bert_ts_fused", "llama"} {
		t.Run(name, func(t *testing.T) {
			m := load(t, name)
			f, _, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			for _, bd := range testmodels.MustGet(name).Bindings {
				b1, err := graph.Bind(m, bd.Dims)
				require.NoError(t, err)
				b2, err := graph.Bind(f, bd.Dims)
				require.NoError(t, err)
				for _, v := range f.Values {
					if w := m.Value(v.Name); w != nil {
						require.Equal(t, b1.Shape(w), b2.Shape(v), "%s at %v", v.Name, bd.Dims)
					}
				}
			}
		})
	}
}

// TestGQALayerNodes counts, per layer of the GQA-form Qwen2 fixture (onnxruntime GenAI's
// layout, as tools/fixtures/gqa_builder.py writes the Qwen2.5-1.5B-shaped model), the nodes
// that run kernels, with and without the SwiGLU, GatedMatMul and bias fusions: each removes
// launches from every decode step.
func TestGQALayerNodes(t *testing.T) {
	m := load(t, "qwen2_gqa")
	const layers = 2
	perLayer := func(skip ...rewrite.Kind) map[string]int {
		f, _, err := rewrite.Fuse(m, rewrite.Options{Skip: skip})
		require.NoError(t, err)
		c := map[string]int{}
		for _, n := range f.Nodes {
			switch n.OpType {
			case "Flatten", "Reshape", "Shape", "Slice", "Concat": // views and bind-time shapes
				continue
			case "MatMul", "Gemm", "Add", "Mul", "Swish", "SwiGLU", "GatedMatMul", "GroupQueryAttention", "SkipSimplifiedLayerNormalization":
				c[n.OpType]++
			}
		}
		for k := range c {
			c[k] /= layers
		}
		return c
	}
	require.Equal(t, map[string]int{"MatMul": 7, "Add": 3, "Swish": 1, "Mul": 1, "GroupQueryAttention": 1, "SkipSimplifiedLayerNormalization": 2},
		perLayer(rewrite.SwiGLU, rewrite.MatMulBias))
	require.Equal(t, map[string]int{"MatMul": 4, "Gemm": 3, "SwiGLU": 1, "GroupQueryAttention": 1, "SkipSimplifiedLayerNormalization": 2},
		perLayer(rewrite.GatedMatMul), "q, k and v take their biases; the gate's Swish and Mul are one SwiGLU")
	require.Equal(t, map[string]int{"MatMul": 2, "Gemm": 3, "GatedMatMul": 1, "GroupQueryAttention": 1, "SkipSimplifiedLayerNormalization": 2},
		perLayer(), "the gate and up products and the SwiGLU are one GatedMatMul")
}
