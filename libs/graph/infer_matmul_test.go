package graph_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// gatedSpec is one dev.carve.GatedMatMul node over graph inputs a, wg and wu, producing y.
func gatedSpec(inputs ...graph.ValueSpec) graph.Spec {
	s := graph.Spec{Opsets: map[string]int64{"": 18, graph.DomainCarve: 1}, Inputs: inputs, Outputs: []string{"y"}}
	var names []string
	for _, in := range inputs {
		names = append(names, in.Name)
	}
	s.Nodes = []graph.NodeSpec{{Name: "gmm", OpType: "GatedMatMul", Domain: graph.DomainCarve, Inputs: names, Outputs: []string{"y"},
		Attrs: graph.NewAttributes(graph.Attribute{Name: "alpha", Kind: graph.AttrFloat, Float: 1})}}
	return s
}

func TestInferGatedMatMul(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs []graph.ValueSpec
		want   string
	}{
		{"2-D", []graph.ValueSpec{vs("a", graph.Float32, 5, 8), vs("wg", graph.Float32, 8, 12), vs("wu", graph.Float32, 8, 12)}, "y float32[5, 12]"},
		{"decode step bfloat16", []graph.ValueSpec{vs("a", graph.BFloat16, "b", 1, 1536), vs("wg", graph.BFloat16, 1536, 8960), vs("wu", graph.BFloat16, 1536, 8960)}, "y bfloat16[b, 1, 8960]"},
		{"float16 rank 4", []graph.ValueSpec{vs("a", graph.Float16, 2, 3, "s", 4), vs("wg", graph.Float16, 4, 6), vs("wu", graph.Float16, 4, 6)}, "y float16[2, 3, s, 6]"},
		{"symbolic K and N", []graph.ValueSpec{vs("a", graph.Float32, "s", "k"), vs("wg", graph.Float32, "k", "n"), vs("wu", graph.Float32, "k", "n")}, "y float32[s, n]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(gatedSpec(tc.inputs...))
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Value("y").String())
		})
	}
}

func TestInferGatedMatMulErrors(t *testing.T) {
	f, h := graph.Float32, graph.Float16
	for _, tc := range []struct {
		name   string
		inputs []graph.ValueSpec
		wants  string
	}{
		{"two inputs", []graph.ValueSpec{vs("a", f, 5, 8), vs("wg", f, 8, 12)}, "GatedMatMul takes 3 inputs, has 2"},
		{"four inputs", []graph.ValueSpec{vs("a", f, 5, 8), vs("wg", f, 8, 12), vs("wu", f, 8, 12), vs("x", f, 12)}, "GatedMatMul takes 3 inputs, has 4"},
		{"integer", []graph.ValueSpec{vs("a", graph.Int64, 5, 8), vs("wg", graph.Int64, 8, 12), vs("wu", graph.Int64, 8, 12)}, "needs A of float32, float16 or bfloat16, has int64"},
		{"mixed types", []graph.ValueSpec{vs("a", f, 5, 8), vs("wg", h, 8, 12), vs("wu", f, 8, 12)}, "are float32, float16 and float32; they must have one type"},
		{"A 1-D", []graph.ValueSpec{vs("a", f, 8), vs("wg", f, 8, 12), vs("wu", f, 8, 12)}, "needs A of rank 2 or more [..., K], has [8]"},
		{"weight 3-D", []graph.ValueSpec{vs("a", f, 5, 8), vs("wg", f, 1, 8, 12), vs("wu", f, 8, 12)}, "needs 2-D weights Wg and Wu [K, N], has [1, 8, 12] and [8, 12]"},
		{"weight 1-D", []graph.ValueSpec{vs("a", f, 5, 8), vs("wg", f, 8, 12), vs("wu", f, 8)}, "needs 2-D weights"},
		{"K of A", []graph.ValueSpec{vs("a", f, 5, 7), vs("wg", f, 8, 12), vs("wu", f, 8, 12)}, "last dim of A against K of Wg: 7 != 8"},
		{"K of Wu", []graph.ValueSpec{vs("a", f, 5, 8), vs("wg", f, 8, 12), vs("wu", f, 9, 12)}, "K of Wu against K of Wg: 9 != 8"},
		{"N of Wu", []graph.ValueSpec{vs("a", f, 5, 8), vs("wg", f, 8, 12), vs("wu", f, 8, 10)}, "N of Wu against N of Wg: 10 != 12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Build(gatedSpec(tc.inputs...))
			var me *graph.ModelError
			require.ErrorAs(t, err, &me)
			require.Contains(t, me.Problem, tc.wants)
			require.Equal(t, "GatedMatMul", me.Node.OpType)
		})
	}
}

// TestInferGatedMatMulBindChecks: K and N that are named dims are checked at Bind.
func TestInferGatedMatMulBindChecks(t *testing.T) {
	f := graph.Float32
	m, err := graph.Build(gatedSpec(vs("a", f, "s", "k"), vs("wg", f, "k", "n"), vs("wu", f, "k2", "n2")))
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"s": 3, "k": 8, "n": 12, "k2": 8, "n2": 12})
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		dims  map[string]int64
		wants string
	}{
		{"K", map[string]int64{"s": 3, "k": 8, "n": 12, "k2": 9, "n2": 12}, "K of Wu against K of Wg"},
		{"N", map[string]int64{"s": 3, "k": 8, "n": 12, "k2": 8, "n2": 11}, "N of Wu against N of Wg"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Bind(m, tc.dims)
			var be *graph.BindError
			require.ErrorAs(t, err, &be)
			require.ErrorContains(t, err, tc.wants)
		})
	}
}

// moeSpec is one com.microsoft.MoE node over graph inputs (an empty name is an absent optional
// input), producing y.
func moeSpec(inputs []graph.ValueSpec, names ...string) graph.Spec {
	s := graph.Spec{Opsets: map[string]int64{"": 18, "com.microsoft": 1}, Inputs: inputs, Outputs: []string{"y"}}
	s.Nodes = []graph.NodeSpec{{Name: "moe", OpType: "MoE", Domain: "com.microsoft", Inputs: names, Outputs: []string{"y"},
		Attrs: graph.NewAttributes(graph.Attribute{Name: "k", Kind: graph.AttrInt, Int: 2},
			graph.Attribute{Name: "activation_type", Kind: graph.AttrString, String: "swiglu"})}}
	return s
}

func TestInferMoE(t *testing.T) {
	f, h := graph.Float32, graph.Float16
	w := func(dt graph.DType) []graph.ValueSpec {
		return []graph.ValueSpec{vs("r", dt, "t", 4), vs("w1", dt, 4, 16, 8), vs("w2", dt, 4, 8, 8)}
	}
	for _, tc := range []struct {
		name   string
		inputs []graph.ValueSpec
		names  []string
		want   string
	}{
		{"2-D, no biases", append([]graph.ValueSpec{vs("x", f, "t", 8)}, w(f)...), []string{"x", "r", "w1", "", "w2"}, "y float32[t, 8]"},
		{"3-D float16", append([]graph.ValueSpec{vs("x", h, "b", "s", 8)}, w(h)...), []string{"x", "r", "w1", "", "w2"}, "y float16[b, s, 8]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(moeSpec(tc.inputs, tc.names...))
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Value("y").String())
		})
	}
	for _, tc := range []struct {
		name  string
		names []string
		x     graph.ValueSpec
		wants string
	}{
		{"no fc2", []string{"x", "r", "w1"}, vs("x", f, "t", 8), "input 4 is missing"},
		{"1-D input", []string{"x", "r", "w1", "", "w2"}, vs("x", f, 8), "MoE needs input [num_rows, hidden] or [batch, seq, hidden], has [8]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Build(moeSpec(append([]graph.ValueSpec{tc.x}, w(f)...), tc.names...))
			var me *graph.ModelError
			require.ErrorAs(t, err, &me)
			require.Contains(t, me.Problem, tc.wants)
		})
	}
}
