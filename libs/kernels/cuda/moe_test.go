package cuda

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// moeSpec is one com.microsoft.MoE configuration for the cases and the planning tests.
type moeSpec struct {
	name                     string
	lead                     []int64 // the input's leading dims: [rows] or [batch, seq]
	hidden, inter, e, k      int64
	act                      string
	fusion                   int
	normalize, legacy        bool
	bias1, bias2, fc3, bias3 bool
	attrs                    []any
	logits                   genFn // router logits; uniform [-2, 2) when nil
}

func (s moeSpec) rows() int64 {
	n := int64(1)
	for _, d := range s.lead {
		n *= d
	}
	return n
}

// node is the spec's node at dt, in its layout.
func (s moeSpec) node(dt graph.DType) kernels.Node {
	e, h, i := s.e, s.hidden, s.inter
	f := i
	if s.act == "swiglu" {
		f = 2 * i
	}
	in := make([]kernels.Value, 8)
	in[0] = v(dt, append(slices.Clone(s.lead), h)...)
	in[1] = v(dt, s.rows(), e)
	in[2], in[4], in[6] = v(dt, e, f, h), v(dt, e, h, i), v(dt, e, i, h)
	if s.legacy {
		in[2], in[4], in[6] = v(dt, e, h, f), v(dt, e, i, h), v(dt, e, h, i)
	}
	if !s.fc3 {
		in[6] = none
	}
	for idx, on := range map[int]bool{3: s.bias1, 5: s.bias2, 7: s.bias3} {
		if on {
			in[idx] = v(dt, e, []int64{3: f, 5: h, 7: i}[idx])
		}
	}
	for _, w := range []int{2, 4, 6} {
		in[w].Initializer = in[w].Present()
	}
	attrs := append([]any{"k", int(s.k), "activation_type", s.act}, s.attrs...)
	if s.fusion != 0 {
		attrs = append(attrs, "swiglu_fusion", s.fusion)
	}
	if s.normalize {
		attrs = append(attrs, "normalize_routing_weights", 1)
	}
	return nd(kernels.DomainMicrosoft, "MoE", kernels.Attrs(attrs...), in, v(dt, in[0].Shape...))
}

// moeCase is the spec as a test case at dt: weights scaled by 1/sqrt(their inputs), so that
// every stage stays near 1 and float32's tolerance compares sums, not cancellations.
func moeCase(dt graph.DType, s moeSpec) kcase {
	gen := map[int]genFn{
		2: uniform(-1/math.Sqrt(float64(s.hidden)), 1/math.Sqrt(float64(s.hidden))),
		4: uniform(-1/math.Sqrt(float64(s.inter)), 1/math.Sqrt(float64(s.inter))),
		6: uniform(-1/math.Sqrt(float64(s.hidden)), 1/math.Sqrt(float64(s.hidden))),
		1: uniform(-2, 2),
	}
	for _, b := range []int{3, 5, 7} {
		gen[b] = uniform(-0.5, 0.5)
	}
	if s.logits != nil {
		gen[1] = s.logits
	}
	return kcase{name: "MoE-" + s.name + "/" + dtTag(dt), node: s.node(dt), gen: gen, kind: "reduce"}
}

// moeSpecs: the fixture's configuration (swiglu interleaved, k 2, normalized, no biases) at a
// prompt, a decode step and a larger prefill, and the rest of the op: both tile heights,
// several tiles an expert, edges of the 64-column and 16-deep steps, the legacy layout, fc3,
// every activation, ties, zero weights, more experts than the sort's warps, and more routes
// than the sort stages at a time.
func moeSpecs() []moeSpec {
	fixture := moeSpec{lead: []int64{37}, hidden: 64, inter: 96, e: 8, k: 2, act: "swiglu", fusion: 1, normalize: true}
	with := func(name string, edit func(*moeSpec)) moeSpec {
		s := fixture
		s.name = name
		edit(&s)
		return s
	}
	specs := []moeSpec{
		with("fixture", func(*moeSpec) {}),
		with("fixture-decode", func(s *moeSpec) { s.lead, s.hidden, s.inter = []int64{1}, 128, 256 }),
		with("fixture-prefill", func(s *moeSpec) { s.lead, s.hidden, s.inter, s.e = []int64{2, 300}, 72, 100, 4 }),
		with("k1", func(s *moeSpec) { s.k, s.normalize, s.lead = 1, false, []int64{50} }),
		with("concat-biases-limit", func(s *moeSpec) {
			s.fusion, s.bias1, s.bias2 = 2, true, true
			s.attrs = []any{"swiglu_limit", float32(0.4), "activation_alpha", float32(1.702), "activation_beta", float32(1)}
		}),
		with("interleaved-limit-3d", func(s *moeSpec) {
			s.lead, s.bias1 = []int64{3, 5}, true
			s.attrs = []any{"swiglu_limit", float32(0.3), "activation_alpha", float32(1.702), "activation_beta", float32(1)}
		}),
		with("legacy-swiglu", func(s *moeSpec) { s.inter, s.legacy = 64, true }),
		with("ties", func(s *moeSpec) { s.logits, s.k = ints(0, 2), 3 }),
		with("zero-weights", func(s *moeSpec) { s.logits, s.k, s.normalize = uniform(-300, 0), 4, false }),
		with("experts64", func(s *moeSpec) { s.e, s.k, s.lead, s.hidden, s.inter = 64, 4, []int64{40}, 32, 48 }),
		with("chunks", func(s *moeSpec) { s.lead, s.hidden, s.inter, s.e = []int64{2100}, 16, 32, 4 }),
	}
	for _, act := range []string{"relu", "gelu", "silu", "identity"} {
		specs = append(specs,
			with(act+"-biases", func(s *moeSpec) { s.act, s.fusion, s.bias1, s.bias2, s.inter = act, 0, true, true, 80 }),
			with(act+"-legacy-fc3", func(s *moeSpec) {
				s.act, s.fusion, s.legacy, s.fc3, s.bias1, s.bias2, s.bias3, s.lead = act, 0, true, true, true, true, true, []int64{2, 40}
			}))
	}
	return append(specs,
		with("silu-fc3-prefill", func(s *moeSpec) {
			s.act, s.fusion, s.fc3, s.normalize, s.lead, s.e = "silu", 0, true, false, []int64{500}, 4
		}),
		with("gelu-prefill-legacy", func(s *moeSpec) {
			s.act, s.fusion, s.lead, s.e, s.legacy, s.bias1, s.bias2 = "gelu", 0, []int64{4, 130}, 4, true, true, true
		}))
}

func moeCases() []kcase {
	var cs []kcase
	for _, dt := range floatTypes {
		for _, s := range moeSpecs() {
			cs = append(cs, moeCase(dt, s))
		}
	}
	return cs
}

// The fixture's configuration plans five launches: routing, the sort (one block), the two
// products over the worst case of tiles and the combine; a decode step takes tiles of 16 slots,
// a prompt of many routes an expert tiles of 64. The workspace is the routes, the counts and
// the two products.
func TestMoESelect(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	for _, c := range []struct {
		spec      moeSpec
		dt        graph.DType
		kernels   []string
		tiles     uint32
		fc1, fc2Y uint32
	}{
		{moeSpec{lead: []int64{1}, hidden: 4096, inter: 14336, e: 8, k: 2, act: "swiglu", fusion: 1, normalize: true}, graph.Float32,
			[]string{"carve_moe_route_f32", "carve_moe_sort", "carve_moe_fc1g_f32_m16", "carve_moe_fc2_f32_m16", "carve_moe_combine_f32"}, 2, 224, 64},
		{moeSpec{lead: []int64{4, 512}, hidden: 4096, inter: 14336, e: 8, k: 2, act: "swiglu", fusion: 1, normalize: true}, graph.BFloat16,
			[]string{"carve_moe_route_bf16", "carve_moe_sort", "carve_moe_fc1g_bf16_m64", "carve_moe_fc2_bf16_m64", "carve_moe_combine_bf16"}, 71, 224, 64},
		{moeSpec{lead: []int64{100}, hidden: 64, inter: 64, e: 4, k: 1, act: "gelu"}, graph.Float16,
			[]string{"carve_moe_route_f16", "carve_moe_sort", "carve_moe_fc1_f16_m16", "carve_moe_fc2_f16_m16", "carve_moe_combine_f16"}, 10, 1, 1},
	} {
		n := c.spec.node(c.dt)
		inst, err := reg.Select(&n, h200)
		require.NoError(t, err)
		require.Equal(t, "grouped", inst.Tactic())
		recs := fakeRun(t, &n, inst)
		var names []string
		for _, l := range recs {
			names = append(names, l.kernel)
		}
		require.Equal(t, c.kernels, names)
		require.Equal(t, Dim3{X: 1, Y: 1, Z: 1}, recs[1].grid)
		require.Equal(t, Dim3{X: c.tiles, Y: c.fc1, Z: 1}, recs[2].grid, "fc1")
		require.Equal(t, Dim3{X: c.tiles, Y: c.fc2Y, Z: 1}, recs[3].grid, "fc2")
		r, m := c.spec.rows()*c.spec.k, c.spec
		var names2 []string
		var sizes []int64
		for _, p := range inst.Recipe().Parts {
			names2, sizes = append(names2, p.Name), append(sizes, p.Size)
		}
		require.Equal(t, []string{"routes", "counts", "act", "y"}, names2)
		require.Equal(t, []int64{16 * r, 4 * (2*m.e + 2), 4 * r * m.inter, 4 * r * m.hidden}, sizes)
	}
}

// The worst case of tiles is the most any split of the routes over the experts (each at most
// rows) fills, found by a search over the splits.
func TestMoEMaxTiles(t *testing.T) {
	for _, c := range []struct{ rows, e, k, bm int64 }{{1, 8, 2, 16}, {37, 8, 2, 16}, {100, 4, 2, 64}, {5, 4, 4, 16}, {70, 6, 3, 16}, {300, 3, 3, 64}} {
		r := c.rows * c.k
		best := make([]int64, r+1) // best[j]: the most tiles with j routes placed; -1 unreachable
		for j := range best {
			best[j] = -1
		}
		best[0] = 0
		for range c.e {
			next := slices.Clone(best)
			for j, b := range best {
				for n := int64(1); b >= 0 && n <= c.rows && int64(j)+n <= r; n++ {
					next[int64(j)+n] = max(next[int64(j)+n], b+(n+c.bm-1)/c.bm)
				}
			}
			best = next
		}
		require.Equal(t, slices.Max(best), moeMaxTiles(kernels.MoE{Rows: c.rows, Experts: c.e, K: c.k}, c.bm), "%+v", c)
	}
}

func TestMoERefusals(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	base := moeSpec{lead: []int64{5}, hidden: 16, inter: 24, e: 4, k: 2, act: "swiglu", fusion: 1}
	for _, c := range []struct {
		name string
		edit func(*moeSpec)
		want string
	}{
		{"experts", func(s *moeSpec) { s.e = 2000 }, "2000 experts: the CUDA kernel routes at most 1024"},
		{"k", func(s *moeSpec) { s.e, s.k = 100, 65 }, "k 65: the CUDA kernel routes a row to at most 64 experts"},
		{"sparse mixer", func(s *moeSpec) { s.attrs = []any{"use_sparse_mixer", 1} }, "use_sparse_mixer 1 (sparse-mixer routing) is not supported"},
		{"k above the experts", func(s *moeSpec) { s.k = 5 }, "k 5 is more than the 4 experts"},
		{"unknown activation", func(s *moeSpec) { s.act = "tanh" }, `activation_type "tanh" is not supported`},
	} {
		s := base
		c.edit(&s)
		n := s.node(graph.Float32)
		_, err := reg.Select(&n, h200)
		require.ErrorContains(t, err, c.want, c.name)
	}
	n := base.node(graph.Float32)
	n.Inputs[2].Shape = []int64{4, 24, 16}
	_, err = reg.Select(&n, h200)
	require.ErrorContains(t, err, "fc1_experts_weights (input 2) has shape [4 24 16], want [4 48 16]")
	n = base.node(graph.Int32)
	_, err = reg.Select(&n, h200)
	require.ErrorContains(t, err, "the input is int32; the CUDA kernels take float32, float16 or bfloat16")
}

// R <= W over ranges of rows, and W == R at a fixed shape.
func TestMoEBound(t *testing.T) {
	reg, err := Registry()
	require.NoError(t, err)
	spec := moeSpec{hidden: 64, inter: 96, e: 8, k: 2, act: "swiglu", fusion: 1, normalize: true, bias2: true}
	at := func(rows int64) kernels.Node {
		s := spec
		s.lead = []int64{rows}
		return s.node(graph.BFloat16)
	}
	lo, hi := at(1), at(4096)
	nr := rangeFrom(family{dims: []kernels.DimRange{{Lo: 1, Hi: 4096}}, make: func(d []int64) kernels.Node { return at(d[0]) }})
	w, err := reg.Bound(&nr, h200)
	require.NoError(t, err)
	for _, n := range []kernels.Node{lo, at(7), at(300), hi} {
		r, _ := recipeSize(t, reg, &n, h200)
		require.LessOrEqual(t, r, w.Bytes, fmt.Sprint(n.Inputs[0].Shape))
		wn, err := reg.Bound(kernels.RangeOf(&n), h200)
		require.NoError(t, err)
		require.Equal(t, r, wn.Bytes, "W == R at %v", n.Inputs[0].Shape)
	}
	r, _ := recipeSize(t, reg, &hi, h200)
	require.Equal(t, r, w.Bytes)
}
