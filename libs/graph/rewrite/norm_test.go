package rewrite_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/rewrite/rewritetest"
)

// fuseOne fuses s and returns the fused graph's node producing y.
func fuseOne(t *testing.T, s graph.Spec, kind rewrite.Kind, skip ...rewrite.Kind) (*graph.Node, *rewrite.Report) {
	t.Helper()
	m, err := graph.Build(s)
	require.NoError(t, err)
	f, rep, err := rewrite.Fuse(m, rewrite.Options{Skip: skip})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Count(kind), "%+v", rep)
	require.Empty(t, rep.Unfused)
	n := f.Value("y").Producer
	if n.OpType == "Identity" || n.OpType == "Mul" && kind == rewrite.SiLU {
		n = n.Inputs[0].Producer
	}
	return n, rep
}

func TestNorms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		norm  rewritetest.Norm
		op    string
		input graph.DType
		ones  bool
	}{
		{"rms, weight", rewritetest.Norm{Weight: true}, "RMSNormalization", graph.Float32, false},
		{"rms, division, no weight", rewritetest.Norm{Div: true}, "RMSNormalization", graph.Float32, true},
		{"rms, x*x", rewritetest.Norm{Square: true, Weight: true}, "RMSNormalization", graph.Float32, false},
		{"rms in float32 between bfloat16 casts", rewritetest.Norm{Weight: true, DType: graph.BFloat16}, "RMSNormalization", graph.BFloat16, false},
		{"layer norm, weight and bias", rewritetest.Norm{Layer: true, Weight: true, Bias: true}, "LayerNormalization", graph.Float32, false},
		{"layer norm, division, no weight", rewritetest.Norm{Layer: true, Div: true}, "LayerNormalization", graph.Float32, true},
		{"layer norm, x*x, weight", rewritetest.Norm{Layer: true, Square: true, Weight: true}, "LayerNormalization", graph.Float32, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.norm.Rows, tc.norm.H, tc.norm.Eps = 3, 8, 1e-5
			kind := rewrite.RMSNorm
			if tc.norm.Layer {
				kind = rewrite.LayerNorm
			}
			n, _ := fuseOne(t, tc.norm.Spec(), kind)
			require.Equal(t, tc.op, n.OpType)
			require.Equal(t, "x", n.Inputs[0].Name)
			require.Equal(t, tc.input, n.Inputs[0].DType)
			require.Equal(t, float32(1e-5), n.Attrs.Float("epsilon", 0))
			require.Equal(t, int64(-1), n.Attrs.Int("axis", 0))
			require.Equal(t, tc.ones, strings.HasPrefix(n.Inputs[1].Name, "rewrite.ones"), n.Inputs[1].Name)
			require.Equal(t, tc.norm.Bias, n.Input(2) != nil)
		})
	}
}

func TestNormsLeftAlone(t *testing.T) {
	base := rewritetest.Norm{Rows: 4, H: 4, Weight: true, Eps: 1e-6}
	opIndex := func(s *graph.Spec, op string) int {
		i := slices.IndexFunc(s.Nodes, func(n graph.NodeSpec) bool { return n.OpType == op })
		require.GreaterOrEqual(t, i, 0, op)
		return i
	}
	for _, tc := range []struct {
		name  string
		layer bool
		edit  func(s *graph.Spec)
		wants string
	}{
		{"epsilon is an input", false, func(s *graph.Spec) {
			s.Inputs = append(s.Inputs, graph.ValueSpec{Name: "eps", DType: graph.Float32, Shape: graph.Shape{}})
			s.Nodes[opIndex(s, "Add")].Inputs[1] = "eps"
		}, "non-negative constant epsilon"},
		{"mean over the rows", false, func(s *graph.Spec) {
			i := opIndex(s, "ReduceMean")
			axis0, err := graph.NewTensor("axis0", graph.Int64, []int64{1}, make([]byte, 8))
			if err != nil {
				panic(err)
			}
			s.Initializers = append(s.Initializers, axis0)
			s.Nodes[i].Inputs[1] = "axis0"
		}, "does not average exactly the last axis"},
		{"reduced axis dropped", false, func(s *graph.Spec) {
			i := opIndex(s, "ReduceMean")
			s.Nodes[i].Attrs = graph.NewAttributes(graph.Attribute{Name: "keepdims", Kind: graph.AttrInt, Int: 0})
		}, "does not keep the reduced axis"},
		{"root read twice", false, func(s *graph.Spec) { s.Outputs = append(s.Outputs, s.Nodes[opIndex(s, "Sqrt")].Outputs[0]) }, "the root"},
		{"centered read three times", true, func(s *graph.Spec) { s.Outputs = append(s.Outputs, s.Nodes[opIndex(s, "Sub")].Outputs[0]) }, "the centered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base
			n.Layer = tc.layer
			s := n.Spec()
			tc.edit(&s)
			m, err := graph.Build(s)
			require.NoError(t, err)
			_, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			kind := rewrite.RMSNorm
			if tc.layer {
				kind = rewrite.LayerNorm
			}
			require.Zero(t, rep.Count(kind))
			require.NotEmpty(t, rep.Unfused)
			require.Equal(t, kind, rep.Unfused[0].Kind)
			require.Contains(t, rep.Unfused[0].Reason, tc.wants)
		})
	}
}

func TestSiLU(t *testing.T) {
	n, rep := fuseOne(t, rewritetest.SiLU(2, 8), rewrite.SiLU, rewrite.SwiGLU)
	require.Equal(t, "", n.Domain)
	require.Equal(t, "Swish", n.OpType)
	require.Equal(t, float32(1), n.Attrs.Float("alpha", 0))
	require.Contains(t, rep.Fused[0].Detail, "gating gate")

	s := rewritetest.SiLU(2, 8)
	s.Nodes[1].Inputs[1] = "up" // x * sigmoid(x) becomes x * up: the sigmoid feeds nothing of the form
	s.Nodes[0].Inputs[0] = "up" // sigmoid(up) * x
	s.Nodes[1].Inputs = []string{"x", s.Nodes[0].Outputs[0]}
	m, err := graph.Build(s)
	require.NoError(t, err)
	_, rep, err = rewrite.Fuse(m, rewrite.Options{})
	require.NoError(t, err)
	require.Empty(t, rep.Fused)
	require.Contains(t, rep.Unfused[0].Reason, "not multiplied by its own input")
}

// TestSwiGLU: the gate's Mul of a Swish (after the SiLU pass) or of an x*sigmoid(x) (SiLU
// skipped) becomes one SwiGLU(x, up); operands that might differ in shape, and a gate read
// elsewhere, stay as exported.
func TestSwiGLU(t *testing.T) {
	// GatedMatMul skipped: it reports this SwiGLU, of graph inputs rather than products, as
	// unfused (TestGatedMatMul covers it).
	for _, skip := range [][]rewrite.Kind{{rewrite.GatedMatMul}, {rewrite.SiLU, rewrite.GatedMatMul}} {
		n, rep := fuseOne(t, rewritetest.SiLU(2, 8), rewrite.SwiGLU, skip...)
		require.Equal(t, graph.DomainCarve, n.Domain)
		require.Equal(t, "SwiGLU", n.OpType)
		require.Equal(t, "x", n.Inputs[0].Name)
		require.Equal(t, "up", n.Inputs[1].Name)
		require.Equal(t, float32(1), n.Attrs.Float("alpha", 0))
		require.Equal(t, 3, rep.NodesBefore)
		require.Equal(t, 1, rep.NodesAfter, "Sigmoid, Mul and Mul become one node")
		require.Contains(t, rep.Fused[len(rep.Fused)-1].Detail, "swish(x, alpha 1) * up")
	}

	for _, tc := range []struct {
		name, wants string
		edit        func(s *graph.Spec)
	}{
		{"up broadcast", "differ in rank", func(s *graph.Spec) {
			s.Inputs[1].Shape = []graph.Dim{graph.Const(8)}
		}},
		{"up of another dim", "may differ in dim 0", func(s *graph.Spec) {
			s.Inputs[1].Shape = []graph.Dim{graph.Const(1), graph.Const(8)}
		}},
		{"gate read twice", "is read by", func(s *graph.Spec) {
			s.Outputs = append(s.Outputs, s.Nodes[1].Outputs[0])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := rewritetest.SiLU(2, 8)
			tc.edit(&s)
			m, err := graph.Build(s)
			require.NoError(t, err)
			_, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Zero(t, rep.Count(rewrite.SwiGLU))
			require.Len(t, rep.Unfused, 1, "%+v", rep.Unfused)
			require.Equal(t, rewrite.SwiGLU, rep.Unfused[0].Kind)
			require.Contains(t, rep.Unfused[0].Reason, tc.wants)
		})
	}
}

// TestGelu: GELU's tanh and erf forms, their products in any order and x^3 as Pow or x*x*x,
// become one Gelu of x; another constant, or a value of the pattern read elsewhere, stays.
func TestGelu(t *testing.T) {
	for _, tc := range []struct {
		name   string
		g      rewritetest.Gelu
		approx string
	}{
		{"tanh, dynamo's order", rewritetest.Gelu{}, "tanh"},
		{"tanh, x * ((1 + t) * 0.5)", rewritetest.Gelu{Order: 1}, "tanh"},
		{"tanh, (x * (1 + t)) * 0.5, x*x*x", rewritetest.Gelu{Order: 2, Cube: true}, "tanh"},
		{"erf, bert's order", rewritetest.Gelu{Erf: true, Order: 2}, "none"},
		{"erf, dynamo's order", rewritetest.Gelu{Erf: true}, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.g.Rows, tc.g.H = 2, 8
			n, rep := fuseOne(t, tc.g.Spec(), rewrite.Gelu)
			require.Equal(t, "Gelu", n.OpType)
			require.Equal(t, "", n.Domain)
			require.Equal(t, []string{"x"}, []string{n.Inputs[0].Name})
			require.Equal(t, tc.approx, n.Attrs.String("approximate", ""))
			require.Len(t, rep.Fused[0].Replaced, len(tc.g.Spec().Nodes), "every exported node goes")
		})
	}
	for _, tc := range []struct {
		name  string
		g     rewritetest.Gelu
		edit  func(s *graph.Spec)
		wants string
	}{
		{"another scale", rewritetest.Gelu{Scale: 1.1}, nil, "not sqrt(2/pi)"},
		{"the tanh read elsewhere", rewritetest.Gelu{}, func(s *graph.Spec) {
			i := slices.IndexFunc(s.Nodes, func(n graph.NodeSpec) bool { return n.OpType == "Tanh" })
			s.Outputs = append(s.Outputs, s.Nodes[i].Outputs[0])
		}, "not by one Add"},
		{"erf of another value", rewritetest.Gelu{Erf: true, Order: 2}, func(s *graph.Spec) {
			s.Inputs = append(s.Inputs, graph.ValueSpec{Name: "z", DType: graph.Float32, Shape: s.Inputs[0].Shape})
			s.Nodes[len(s.Nodes)-2].Inputs[0] = "z" // x * (1 + erf(x/sqrt2)) becomes z * (...)
		}, "not by x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.g.Rows, tc.g.H = 2, 8
			s := tc.g.Spec()
			if tc.edit != nil {
				tc.edit(&s)
			}
			m, err := graph.Build(s)
			require.NoError(t, err)
			_, rep, err := rewrite.Fuse(m, rewrite.Options{})
			require.NoError(t, err)
			require.Zero(t, rep.Count(rewrite.Gelu))
			require.NotEmpty(t, rep.Unfused)
			require.Equal(t, rewrite.Gelu, rep.Unfused[0].Kind)
			require.Contains(t, rep.Unfused[0].Reason, tc.wants)
		})
	}
}
