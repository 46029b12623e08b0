package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// moeCase is one com.microsoft.MoE configuration: the fixture's (swiglu interleaved, k 2,
// normalized, no biases) and the rest of the op.
type moeCase struct {
	name                     string
	dt                       graph.DType
	lead                     []int64 // the input's leading dims: [rows] or [batch, seq]
	hidden, inter, e, k      int
	act                      string
	fusion                   int
	normalize                bool
	legacy                   bool
	bias1, bias2, fc3, bias3 bool
	attrs                    []any     // more attributes (swiglu_limit, activation_alpha, ...)
	logits                   []float64 // router logits; random when nil
}

func (c moeCase) rows() int {
	n := 1
	for _, d := range c.lead {
		n *= int(d)
	}
	return n
}

func (c moeCase) fc1Out() int {
	if c.act == "swiglu" {
		return 2 * c.inter
	}
	return c.inter
}

// shapes are the inputs' shapes (nil for an absent one) in the case's layout.
func (c moeCase) shapes() [][]int64 {
	e, h, i, f := int64(c.e), int64(c.hidden), int64(c.inter), int64(c.fc1Out())
	s := make([][]int64, 8)
	s[0] = append(slices.Clone(c.lead), h)
	s[1] = []int64{int64(c.rows()), e}
	s[2], s[4] = []int64{e, f, h}, []int64{e, h, i}
	if c.legacy {
		s[2], s[4] = []int64{e, h, f}, []int64{e, i, h}
	}
	if c.bias1 {
		s[3] = []int64{e, f}
	}
	if c.bias2 {
		s[5] = []int64{e, h}
	}
	if c.fc3 {
		s[6] = []int64{e, i, h}
		if c.legacy {
			s[6] = []int64{e, h, i}
		}
	}
	if c.bias3 {
		s[7] = []int64{e, i}
	}
	return s
}

func (c moeCase) node() *kernels.Node {
	attrs := append([]any{"k", c.k, "activation_type", c.act}, c.attrs...)
	if c.fusion != 0 {
		attrs = append(attrs, "swiglu_fusion", c.fusion)
	}
	if c.normalize {
		attrs = append(attrs, "normalize_routing_weights", 1)
	}
	n := &kernels.Node{Name: "moe", Op: "MoE", Domain: kernels.DomainMicrosoft, Attrs: kernels.Attrs(attrs...)}
	for _, s := range c.shapes() {
		if s == nil {
			n.Inputs = append(n.Inputs, kernels.Value{})
			continue
		}
		n.Inputs = append(n.Inputs, kernels.Value{DType: c.dt, Shape: s})
	}
	n.Outputs = []kernels.Value{{DType: c.dt, Shape: n.Inputs[0].Shape}}
	return n
}

// inputs draws the case's inputs, rounded to its dtype: the tensors and their values.
func (c moeCase) inputs(r *rand.Rand) ([]kernels.Tensor, [][]float64) {
	shapes := c.shapes()
	ts, vals := make([]kernels.Tensor, len(shapes)), make([][]float64, len(shapes))
	for i, s := range shapes {
		if s == nil {
			continue
		}
		v := randF64(r, numel(s))
		scale := 1.0
		switch i {
		case 1:
			scale = 2
			if c.logits != nil {
				v, scale = slices.Clone(c.logits), 1
			}
		case 2, 6:
			scale = 1 / math.Sqrt(float64(c.hidden))
		case 4:
			scale = 1 / math.Sqrt(float64(c.inter))
		case 3, 5, 7:
			scale = 0.5
		}
		for j := range v {
			v[j] *= scale
		}
		ts[i] = tensorOf(c.dt, s, v)
		vals[i] = float64sOf(ts[i])
	}
	return ts, vals
}

// refMoE is the op computed plainly in float64 from the case's definition.
func refMoE(c moeCase, in [][]float64) []float64 {
	rows, h, inter, e, f := c.rows(), c.hidden, c.inter, c.e, c.fc1Out()
	// w(k, ex, o, i) is weight (o, i) of expert ex's matrix k (of nOut x nIn, [out, in] or legacy [in, out])
	w := func(k, ex, o, i, nOut, nIn int) float64 {
		if c.legacy {
			return in[k][(ex*nIn+i)*nOut+o]
		}
		return in[k][(ex*nOut+o)*nIn+i]
	}
	bias := func(k, ex, o, n int) float64 {
		if in[k] == nil {
			return 0
		}
		return in[k][ex*n+o]
	}
	act := func(v float64) float64 {
		switch c.act {
		case "relu":
			return math.Max(v, 0)
		case "gelu":
			return 0.5 * v * (1 + math.Tanh(0.7978845608*(v+0.044715*v*v*v)))
		case "silu":
			return v / (1 + math.Exp(-v))
		}
		return v
	}
	at := kernels.Attrs(c.attrs...)
	limit := float64(at.Float("swiglu_limit", float32(math.Inf(1))))
	alpha, beta := float64(at.Float("activation_alpha", 1)), float64(at.Float("activation_beta", 0))
	out := make([]float64, rows*h)
	for t := range rows {
		x, l := in[0][t*h:(t+1)*h], in[1][t*e:(t+1)*e]
		mx := slices.Max(l)
		p := make([]float64, e)
		var sum float64
		for j := range p {
			p[j] = math.Exp(l[j] - mx)
			sum += p[j]
		}
		ids := make([]int, e)
		for j := range p {
			p[j] /= sum
			ids[j] = j
		}
		slices.SortFunc(ids, func(a, b int) int { // probability descending, ties to the larger index
			if p[a] != p[b] {
				if p[a] > p[b] {
					return -1
				}
				return 1
			}
			return b - a
		})
		ids = ids[:c.k]
		var top float64
		for _, j := range ids {
			top += p[j]
		}
		for _, ex := range ids {
			wt := p[ex]
			if c.normalize {
				wt /= top
			}
			if wt == 0 {
				continue
			}
			h1 := make([]float64, f)
			for o := range f {
				h1[o] = bias(3, ex, o, f)
				for i := range h {
					h1[o] += x[i] * w(2, ex, o, i, f, h)
				}
			}
			a := make([]float64, inter)
			for o := range inter {
				switch {
				case c.act == "swiglu":
					g, lin := h1[2*o], h1[2*o+1]
					if c.fusion == 2 {
						g, lin = h1[o], h1[inter+o]
					}
					g = math.Min(g, limit)
					lin = math.Max(math.Min(lin, limit), -limit)
					a[o] = g / (1 + math.Exp(-alpha*g)) * (lin + beta)
				case c.fc3:
					h3 := bias(7, ex, o, inter)
					for i := range h {
						h3 += x[i] * w(6, ex, o, i, inter, h)
					}
					a[o] = act(h1[o]) * h3
				default:
					a[o] = act(h1[o])
				}
			}
			for o := range h {
				y := bias(5, ex, o, h)
				for i := range inter {
					y += a[i] * w(4, ex, o, i, h, inter)
				}
				out[t*h+o] += wt * y
			}
		}
	}
	return out
}

// moeTol is the case's tolerance against the float64 reference: float32 products, and one
// rounding of the output for 16-bit types.
func moeTol(dt graph.DType) float64 {
	switch dt {
	case graph.Float16:
		return 2e-3
	case graph.BFloat16:
		return 1.6e-2
	}
	return 2e-5
}

func checkMoE(t *testing.T, r *rand.Rand, c moeCase) kernels.Instance {
	t.Helper()
	in, vals := c.inputs(r)
	n := c.node()
	outs, inst := run(t, n, in...)
	got := float64sOf(outs[0])
	want := refMoE(c, vals)
	g32, w32 := make([]float32, len(got)), make([]float32, len(want))
	for i := range got {
		g32[i], w32[i] = float32(got[i]), float32(want[i])
	}
	closeTo(t, w32, g32, moeTol(c.dt), c.name)
	return inst
}

func TestMoE(t *testing.T) {
	r := rng(t, 41)
	f32s, f16s, bf16s := graph.Float32, graph.Float16, graph.BFloat16
	fixture := moeCase{dt: f32s, lead: []int64{7}, hidden: 16, inter: 24, e: 4, k: 2, act: "swiglu", fusion: 1, normalize: true}
	with := func(name string, edit func(*moeCase)) moeCase {
		c := fixture
		c.name = name
		edit(&c)
		return c
	}
	// rows 0 and 1 tie: all four experts, then experts 1 and 2 (k 2 takes 3 and 2, then 2 and 1)
	ties := make([]float64, 7*4)
	for i := range ties {
		ties[i] = float64(i%5) - 2
	}
	copy(ties, []float64{0.5, 0.5, 0.5, 0.5, -1, 2, 2, 0})
	// row 0's second expert has probability 0 (a weight of 0: skipped)
	zero := slices.Clone(ties)
	copy(zero, []float64{0, -1e4, -1e4, -1e4})
	cases := []moeCase{
		with("fixture: swiglu interleaved, k 2, normalized", func(*moeCase) {}),
		with("k 1", func(c *moeCase) { c.k, c.normalize = 1, false }),
		with("k 4 of 4, not normalized", func(c *moeCase) { c.k, c.normalize = 4, false }),
		with("swiglu concatenated, biases", func(c *moeCase) { c.fusion, c.bias1, c.bias2 = 2, true, true }),
		with("swiglu limit alpha beta", func(c *moeCase) {
			c.attrs = []any{"swiglu_limit", float32(0.5), "activation_alpha", float32(1.702), "activation_beta", float32(1)}
		}),
		with("swiglu concatenated limit alpha beta", func(c *moeCase) {
			c.fusion, c.attrs = 2, []any{"swiglu_limit", float32(0.3), "activation_alpha", float32(1.702), "activation_beta", float32(1)}
		}),
		with("3-D input", func(c *moeCase) { c.lead = []int64{2, 3} }),
		with("ties", func(c *moeCase) { c.logits = ties }),
		with("ties k 1", func(c *moeCase) { c.logits, c.k = ties, 1 }),
		with("zero weight", func(c *moeCase) { c.logits, c.normalize = zero, false }),
		with("legacy swiglu (hidden == inter)", func(c *moeCase) { c.inter, c.legacy = 16, true }),
		with("one row", func(c *moeCase) { c.lead = []int64{1} }),
		with("float16", func(c *moeCase) { c.dt = f16s }),
		with("bfloat16 concatenated with biases", func(c *moeCase) { c.dt, c.fusion, c.bias1, c.bias2 = bf16s, 2, true, true }),
	}
	for _, act := range []string{"relu", "gelu", "silu", "identity"} {
		cases = append(cases,
			with(act+" with biases", func(c *moeCase) { c.act, c.fusion, c.bias1, c.bias2 = act, 0, true, true }),
			with(act+" legacy with biases", func(c *moeCase) { c.act, c.fusion, c.bias1, c.bias2, c.legacy = act, 0, true, true, true }),
			with(act+" gated by fc3", func(c *moeCase) { c.act, c.fusion, c.bias1, c.bias2, c.fc3, c.bias3 = act, 0, true, true, true, true }))
	}
	cases = append(cases,
		with("silu legacy fc3 float16", func(c *moeCase) { c.act, c.fusion, c.fc3, c.legacy, c.dt = "silu", 0, true, true, f16s }),
		with("gelu hidden == inter (the current layout)", func(c *moeCase) { c.act, c.fusion, c.inter = "gelu", 0, 16 }),
		with("relu 3-D bfloat16 legacy", func(c *moeCase) {
			c.act, c.fusion, c.lead, c.legacy, c.dt, c.bias2 = "relu", 0, []int64{3, 2}, true, bf16s, true
		}),
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inst := checkMoE(t, r, c)
			require.Equal(t, "grouped", inst.Tactic())
		})
	}
}

// The rule of onnxruntime's legacy layout: fc2 [E, inter, hidden] when the sizes differ, a
// swiglu fc1 [E, hidden, 2*inter] when they are equal.
func TestMoELayoutRule(t *testing.T) {
	for _, c := range []struct {
		hidden, inter, fc1d1, fc2d1 int64
		swiglu, want                bool
	}{
		{16, 24, 48, 16, true, false},
		{16, 24, 16, 24, true, true},
		{16, 24, 24, 16, false, false},
		{16, 24, 16, 24, false, true},
		{16, 16, 32, 16, true, false},
		{16, 16, 16, 16, true, true},
		{16, 16, 16, 16, false, false}, // square weights: the current layout
	} {
		require.Equal(t, c.want, kernels.MoELegacy(c.hidden, c.inter, c.fc1d1, c.fc2d1, c.swiglu), "%+v", c)
	}
}

func TestMoEEmpty(t *testing.T) {
	c := moeCase{dt: graph.Float32, lead: []int64{0}, hidden: 16, inter: 24, e: 4, k: 2, act: "swiglu", fusion: 1}
	in, _ := c.inputs(rng(t, 1))
	out, inst := run(t, c.node(), in...)
	require.Empty(t, out[0].Data)
	require.Empty(t, inst.Recipe().Parts)
}

// A route of weight 0 is skipped: expert 1's fc2 holds an infinity, which 0 * inf would make NaN.
func TestMoESkipsZeroWeights(t *testing.T) {
	c := moeCase{dt: graph.Float32, lead: []int64{1}, hidden: 8, inter: 8, e: 4, k: 2, act: "silu", logits: []float64{0, -1e4, -1e5, -1e5}}
	in, _ := c.inputs(rng(t, 2))
	in[4].Float32s()[c.hidden*c.inter] = float32(math.Inf(1))
	out := out1(t, c.node(), in...)
	for _, v := range out.Float32s() {
		require.False(t, math.IsNaN(float64(v)) || math.IsInf(float64(v), 0), "%v", out.Float32s())
	}
}

func TestMoERefusals(t *testing.T) {
	base := moeCase{dt: graph.Float32, lead: []int64{5}, hidden: 16, inter: 24, e: 4, k: 2, act: "swiglu", fusion: 1}
	edit := func(f func(n *kernels.Node)) *kernels.Node {
		n := base.node()
		f(n)
		return n
	}
	attrs := func(pairs ...any) func(n *kernels.Node) {
		return func(n *kernels.Node) { n.Attrs = kernels.Attrs(pairs...) }
	}
	sw := []any{"k", 2, "activation_type", "swiglu", "swiglu_fusion", 1}
	for _, tc := range []struct {
		name string
		n    *kernels.Node
		want string
	}{
		{"sparse mixer", edit(attrs(append(sw, "use_sparse_mixer", 1)...)), "use_sparse_mixer 1 (sparse-mixer routing) is not supported"},
		{"k above the experts", edit(attrs("k", 5, "activation_type", "swiglu", "swiglu_fusion", 1)), "k 5 is more than the 4 experts"},
		{"k 0", edit(attrs("k", 0, "activation_type", "swiglu", "swiglu_fusion", 1)), "k 0: want at least 1 expert per row"},
		{"no k", edit(attrs("activation_type", "swiglu", "swiglu_fusion", 1)), "attribute k (experts per row) is required"},
		{"unknown activation", edit(attrs("k", 2, "activation_type", "tanh")), `activation_type "tanh" is not supported; want relu, gelu, silu, identity or swiglu`},
		{"no activation", edit(attrs("k", 2)), "attribute activation_type is required (relu, gelu, silu, identity or swiglu)"},
		{"swiglu unfused", edit(attrs("k", 2, "activation_type", "swiglu")), "activation_type swiglu with swiglu_fusion 0 is not supported"},
		{"fc1 shape", edit(func(n *kernels.Node) { n.Inputs[2].Shape = []int64{4, 24, 16} }),
			"fc1_experts_weights (input 2) has shape [4 24 16], want [4 48 16] (hidden 16, inter 24, fc1 outputs 48, 4 experts, layout [num_experts, out, in])"},
		{"fc1 experts", edit(func(n *kernels.Node) { n.Inputs[2].Shape = []int64{3, 48, 16} }), "fc1_experts_weights (input 2) has shape [3 48 16], want [4 48 16]"},
		{"fc2 shape", edit(func(n *kernels.Node) { n.Inputs[4].Shape = []int64{4, 12, 32} }), "fc2_experts_weights (input 4) has shape [4 12 32], want [4 16 24]"},
		{"router rows", edit(func(n *kernels.Node) { n.Inputs[1].Shape = []int64{6, 4} }), "router_probs (input 1) has shape [6 4], want [5 4]"},
		{"router rank", edit(func(n *kernels.Node) { n.Inputs[1].Shape = []int64{5, 4, 1} }), "router_probs has shape [5 4 1], want [num_rows, num_experts]"},
		{"input rank", edit(func(n *kernels.Node) { n.Inputs[0].Shape = []int64{16}; n.Outputs[0].Shape = []int64{16} }), "input has shape [16], want [num_rows, hidden] or [batch, seq, hidden]"},
		{"weights rank", edit(func(n *kernels.Node) { n.Inputs[4].Shape = []int64{4, 384} }), "want 3-D weights"},
		{"fc1 bias", edit(func(n *kernels.Node) { n.Inputs[3] = kernels.Value{DType: graph.Float32, Shape: []int64{4, 24}} }), "fc1_experts_bias (input 3) has shape [4 24], want [4 48]"},
		{"no fc2", edit(func(n *kernels.Node) { n.Inputs = n.Inputs[:3] }), "required input 4 (fc2_experts_weights) is missing"},
		{"fc3 with swiglu", edit(func(n *kernels.Node) {
			n.Inputs[6] = kernels.Value{DType: graph.Float32, Shape: []int64{4, 24, 16}}
		}), "fc3_experts_weights with activation_type swiglu is not supported"},
		{"fc3 bias without fc3", edit(func(n *kernels.Node) {
			n.Attrs = kernels.Attrs("k", 2, "activation_type", "silu")
			n.Inputs[2].Shape = []int64{4, 24, 16}
			n.Inputs[7] = kernels.Value{DType: graph.Float32, Shape: []int64{4, 24}}
		}), "fc3_experts_bias (input 7) needs fc3_experts_weights (input 6)"},
		{"mixed types", edit(func(n *kernels.Node) { n.Inputs[4].DType = graph.Float16 }), "fc2_experts_weights (input 4) is float16, the input float32"},
		{"integers", edit(func(n *kernels.Node) {
			for i := range n.Inputs {
				if n.Inputs[i].Present() {
					n.Inputs[i].DType = graph.Int32
				}
			}
			n.Outputs[0].DType = graph.Int32
		}), "input is int32; the CPU kernel takes float32, float16 or bfloat16"},
		{"output shape", edit(func(n *kernels.Node) { n.Outputs[0].Shape = []int64{5, 24} }), "output 0 has shape [5 24], want [5 16]"},
		{"too many inputs", edit(func(n *kernels.Node) {
			n.Inputs = append(n.Inputs, kernels.Value{DType: graph.Float32, Shape: []int64{1}})
		}), "has 9 inputs, want 3 to 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := registry.Select(tc.n, dev)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The workspace: R <= W over a range of rows (bound_test.go's families check more), W == R at a
// fixed shape, refused one byte short, and no allocations.
func TestMoEWorkspace(t *testing.T) {
	r := rng(t, 43)
	for _, c := range []moeCase{
		{dt: graph.Float32, lead: []int64{9}, hidden: 16, inter: 24, e: 4, k: 2, act: "swiglu", fusion: 1, normalize: true},
		{dt: graph.Float16, lead: []int64{3, 3}, hidden: 16, inter: 24, e: 4, k: 2, act: "silu", bias1: true, bias2: true, fc3: true, bias3: true},
		{dt: graph.Float32, lead: []int64{9}, hidden: 16, inter: 24, e: 4, k: 1, act: "relu", legacy: true, bias2: true},
	} {
		in, _ := c.inputs(r)
		n := c.node()
		inst := requireRefusesSmallWorkspace(t, n, in...)
		requireNoAllocs(t, n, in...)
		rr, err := inst.Recipe().Size()
		require.NoError(t, err)
		w, err := registry.Bound(kernels.RangeOf(n), dev)
		require.NoError(t, err)
		require.Equal(t, rr, w.Bytes, "W of a fixed shape is its R")
		rg := kernels.RangeOf(n)
		for _, i := range []int{0, 1} {
			rg.Inputs[i].Dims[0] = kernels.DimRange{Lo: 1, Hi: 40}
		}
		rg.Outputs[0].Dims[0] = kernels.DimRange{Lo: 1, Hi: 40}
		wr, err := registry.Bound(rg, dev)
		require.NoError(t, err)
		require.LessOrEqual(t, rr, wr.Bytes)
	}
}

// The result does not depend on the worker count.
func TestMoEParallelMatchesSerial(t *testing.T) {
	r := rng(t, 44)
	c := moeCase{dt: graph.Float32, lead: []int64{300}, hidden: 64, inter: 96, e: 4, k: 2, act: "swiglu", fusion: 1, normalize: true, bias1: true, bias2: true}
	in, _ := c.inputs(r)
	one := runOn(t, 1, c.node(), in...)
	four := runOn(t, 4, c.node(), in...)
	require.Equal(t, one[0].Data, four[0].Data)
}
