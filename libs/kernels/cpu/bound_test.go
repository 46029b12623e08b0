package cpu

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// A family is one workspace-using op with symbolic shapes: dims are int64 constants or names;
// each name takes the listed values (its range is their min and max), and derived names are
// sums of other names.
type family struct {
	name    string
	op      string
	domain  string
	attrs   graph.Attributes
	inputs  []sym
	outputs []sym
	dims    map[string][]int64
	derived map[string][]string // name -> the names it is the sum of
}

type sym struct {
	dt   graph.DType
	dims []any // int64 or string
}

func (f *family) resolve(point map[string]int64, name string) int64 {
	if parts, ok := f.derived[name]; ok {
		var s int64
		for _, p := range parts {
			s += f.resolve(point, p)
		}
		return s
	}
	return point[name]
}

func (f *family) node(point map[string]int64) *kernels.Node {
	n := &kernels.Node{Name: f.name, Op: f.op, Domain: f.domain, Attrs: f.attrs}
	conv := func(s sym) kernels.Value {
		if s.dt == graph.Undefined {
			return kernels.Value{}
		}
		v := kernels.Value{DType: s.dt}
		for _, d := range s.dims {
			switch d := d.(type) {
			case int:
				v.Shape = append(v.Shape, int64(d))
			case string:
				v.Shape = append(v.Shape, f.resolve(point, d))
			}
		}
		return v
	}
	for _, s := range f.inputs {
		n.Inputs = append(n.Inputs, conv(s))
	}
	for _, s := range f.outputs {
		n.Outputs = append(n.Outputs, conv(s))
	}
	return n
}

func (f *family) nodeRange() *kernels.NodeRange {
	lo, hi := map[string]int64{}, map[string]int64{}
	for name, vals := range f.dims {
		lo[name], hi[name] = slices.Min(vals), slices.Max(vals)
	}
	nl, nh := f.node(lo), f.node(hi)
	r := &kernels.NodeRange{Name: f.name, Op: f.op, Domain: f.domain, Attrs: f.attrs}
	conv := func(a, b kernels.Value) kernels.ValueRange {
		v := kernels.ValueRange{DType: a.DType}
		for i := range a.Shape {
			v.Dims = append(v.Dims, kernels.DimRange{Lo: a.Shape[i], Hi: b.Shape[i]})
		}
		return v
	}
	for i := range nl.Inputs {
		r.Inputs = append(r.Inputs, conv(nl.Inputs[i], nh.Inputs[i]))
	}
	for i := range nl.Outputs {
		r.Outputs = append(r.Outputs, conv(nl.Outputs[i], nh.Outputs[i]))
	}
	return r
}

// grid calls fn for every combination of the dims' values.
func (f *family) grid(fn func(point map[string]int64)) {
	names := make([]string, 0, len(f.dims))
	for n := range f.dims {
		names = append(names, n)
	}
	slices.Sort(names)
	point := map[string]int64{}
	var rec func(i int)
	rec = func(i int) {
		if i == len(names) {
			fn(point)
			return
		}
		for _, v := range f.dims[names[i]] {
			point[names[i]] = v
			rec(i + 1)
		}
	}
	rec(0)
}

var (
	f32s = graph.Float32
	i32s = graph.Int32
)

func s(dt graph.DType, dims ...any) sym { return sym{dt: dt, dims: dims} }

func families() []family {
	ms := kernels.DomainMicrosoft
	return []family{
		{name: "layernorm", op: "LayerNormalization", attrs: kernels.Attrs("axis", -1),
			inputs: []sym{s(f32s, "B", "S", 16), s(f32s, 16), s(f32s, 16)}, outputs: []sym{s(f32s, "B", "S", 16)},
			dims: map[string][]int64{"B": {1, 2, 4}, "S": {0, 1, 17, 64}}},
		{name: "layernorm-axis1", op: "LayerNormalization", attrs: kernels.Attrs("axis", 1),
			inputs: []sym{s(f32s, "B", "S", 16), s(f32s, "S", 16)}, outputs: []sym{s(f32s, "B", "S", 16)},
			dims: map[string][]int64{"B": {1, 3, 8}, "S": {1, 5}}},
		{name: "rmsnorm", op: "SimplifiedLayerNormalization",
			inputs: []sym{s(f32s, "B", "S", 8), s(f32s, 8)}, outputs: []sym{s(f32s, "B", "S", 8)},
			dims: map[string][]int64{"B": {1, 2}, "S": {1, 9, 100}}},
		{name: "skip-layernorm", op: "SkipLayerNormalization", domain: ms,
			inputs: []sym{s(f32s, "B", "S", 8), s(f32s, "B", "S", 8), s(f32s, 8), s(f32s, 8)}, outputs: []sym{s(f32s, "B", "S", 8)},
			dims: map[string][]int64{"B": {1, 2}, "S": {1, 9, 100}}},
		{name: "skip-rmsnorm", op: "SkipSimplifiedLayerNormalization", domain: ms,
			inputs: []sym{s(f32s, "B", "S", 8), s(f32s, "S", 8), s(f32s, 8)}, outputs: []sym{s(f32s, "B", "S", 8)},
			dims: map[string][]int64{"B": {1, 2}, "S": {1, 9, 100}}},
		{name: "matmul-weights", op: "MatMul",
			inputs: []sym{s(f32s, "B", "M", "K"), s(f32s, "K", "N")}, outputs: []sym{s(f32s, "B", "M", "N")},
			dims: map[string][]int64{"B": {1, 2, 3}, "M": {1, 7, 64, 65, 200}, "K": {16, 1023, 1024, 3000}, "N": {1, 64, 129}}},
		{name: "matmul-batched", op: "MatMul",
			inputs: []sym{s(f32s, "B", "M", "K"), s(f32s, "B", "K", "N")}, outputs: []sym{s(f32s, "B", "M", "N")},
			dims: map[string][]int64{"B": {1, 4}, "M": {1, 100}, "K": {8, 1500}, "N": {1, 130}}},
		{name: "matmul-f16", op: "MatMul",
			inputs: []sym{s(graph.Float16, "M", "K"), s(graph.Float16, "K", "N")}, outputs: []sym{s(graph.Float16, "M", "N")},
			dims: map[string][]int64{"M": {1, 9}, "K": {3, 40}, "N": {2, 17}}},
		{name: "attention", op: "Attention", domain: ms, attrs: kernels.Attrs("num_heads", 2, "unidirectional", 1),
			inputs:  []sym{s(f32s, "B", "S", 8), s(f32s, 8, 24), s(f32s, 24), s(i32s, "B", "T"), s(f32s, 2, "B", 2, "P", 4)},
			outputs: []sym{s(f32s, "B", "S", 8), s(f32s, 2, "B", 2, "T", 4)},
			dims:    map[string][]int64{"B": {1, 3}, "S": {1, 16}, "P": {0, 300, 495, 496, 511, 700}}, derived: map[string][]string{"T": {"P", "S"}}},
		{name: "mha", op: "MultiHeadAttention", domain: ms, attrs: kernels.Attrs("num_heads", 2),
			inputs:  []sym{s(f32s, "B", "S", 8), s(f32s, "B", "L", 8), s(f32s, "B", "L", 6), s(f32s, 22), s(i32s, "B", "L")},
			outputs: []sym{s(f32s, "B", "S", 6)},
			dims:    map[string][]int64{"B": {1, 2}, "S": {1, 5, 40}, "L": {1, 100, 511, 512, 900}}},
		{name: "gqa", op: "GroupQueryAttention", domain: ms, attrs: kernels.Attrs("num_heads", 4, "kv_num_heads", 2, "do_rotary", 1),
			inputs: []sym{s(f32s, "B", "S", 16), s(f32s, "B", "S", 8), s(f32s, "B", "S", 8), s(f32s, "B", 2, "P", 4), s(f32s, "B", 2, "P", 4),
				s(i32s, "B"), s(i32s), s(f32s, 2048, 2), s(f32s, 2048, 2)},
			outputs: []sym{s(f32s, "B", "S", 16), s(f32s, "B", 2, "T", 4), s(f32s, "B", 2, "T", 4)},
			dims:    map[string][]int64{"B": {1, 2}, "S": {1, 7, 33}, "P": {0, 100, 511, 600, 1000}}, derived: map[string][]string{"T": {"P", "S"}}},
		{name: "gqa-no-present", op: "GroupQueryAttention", domain: ms, attrs: kernels.Attrs("num_heads", 2, "kv_num_heads", 1),
			inputs: []sym{s(f32s, "B", "S", 8), s(f32s, "B", "S", 4), s(f32s, "B", "S", 4), s(f32s, "B", 1, "P", 4), s(f32s, "B", 1, "P", 4),
				s(i32s, "B"), s(i32s)},
			outputs: []sym{s(f32s, "B", "S", 8)},
			dims:    map[string][]int64{"B": {1, 2}, "S": {1, 20}, "P": {0, 490, 600}}},
		{name: "moe-swiglu", op: "MoE", domain: ms, attrs: kernels.Attrs("k", 2, "activation_type", "swiglu", "swiglu_fusion", 1, "normalize_routing_weights", 1),
			inputs:  []sym{s(f32s, "T", 16), s(f32s, "T", 4), s(f32s, 4, 48, 16), {}, s(f32s, 4, 16, 24)},
			outputs: []sym{s(f32s, "T", 16)},
			dims:    map[string][]int64{"T": {1, 2, 7, 64, 300}}},
		{name: "moe-legacy-fc3-f16", op: "MoE", domain: ms, attrs: kernels.Attrs("k", 1, "activation_type", "silu"),
			inputs: []sym{s(graph.Float16, 1, "S", 16), s(graph.Float16, "S", 4), s(graph.Float16, 4, 16, 24), s(graph.Float16, 4, 24),
				s(graph.Float16, 4, 24, 16), s(graph.Float16, 4, 16), s(graph.Float16, 4, 16, 24), s(graph.Float16, 4, 24)},
			outputs: []sym{s(graph.Float16, 1, "S", 16)},
			dims:    map[string][]int64{"S": {1, 5, 100}}},
		{name: "conv-3x3", op: "Conv", attrs: kernels.Attrs("pads", []int64{1, 1, 1, 1}),
			inputs: []sym{s(f32s, "B", 16, "H", "W"), s(f32s, 24, 16, 3, 3), s(f32s, 24)}, outputs: []sym{s(f32s, "B", 24, "H", "W")},
			dims: map[string][]int64{"B": {1, 2, 5}, "H": {1, 7, 33}, "W": {3, 40}}},
		{name: "conv-stride-grouped", op: "Conv", attrs: kernels.Attrs("group", 2, "strides", []int64{2, 2}, "auto_pad", "SAME_UPPER"),
			inputs: []sym{s(f32s, "B", 8, "H", "W"), s(f32s, 6, 4, 5, 5)}, outputs: []sym{s(f32s, "B", 6, "OH", "OW")},
			dims: map[string][]int64{"B": {1, 3}, "OH": {1, 5, 32}, "OW": {3, 16}}, derived: map[string][]string{"H": {"OH", "OH"}, "W": {"OW", "OW"}}},
		{name: "conv-1d", op: "Conv", attrs: kernels.Attrs("strides", []int64{5}),
			inputs: []sym{s(f32s, "B", 1, "T"), s(f32s, 32, 1, 5)}, outputs: []sym{s(f32s, "B", 32, "OT")},
			dims: map[string][]int64{"B": {1, 4}, "OT": {1, 800}}, derived: map[string][]string{"T": {"OT", "OT", "OT", "OT", "OT"}}},
		{name: "fusedconv-3x3", op: "FusedConv", domain: ms, attrs: kernels.Attrs("pads", []int64{1, 1, 1, 1}, "activation", "Relu"),
			inputs: []sym{s(f32s, "B", 16, "H", "W"), s(f32s, 24, 16, 3, 3), s(f32s, 24), s(f32s, "B", 24, "H", "W")}, outputs: []sym{s(f32s, "B", 24, "H", "W")},
			dims: map[string][]int64{"B": {1, 2}, "H": {1, 7, 33}, "W": {3, 40}}},
		{name: "conv-1x1", op: "Conv",
			inputs: []sym{s(f32s, "B", 16, "H", "W"), s(f32s, 8, 16, 1, 1)}, outputs: []sym{s(f32s, "B", 8, "H", "W")},
			dims: map[string][]int64{"B": {1, 2}, "H": {1, 30}, "W": {1, 50}}},
		// output positions either side of convSwapMaxCols, at least convSwapMinM channels: the
		// swapped products' recipes and the plain ones'
		{name: "conv-3x3-swapped", op: "Conv", attrs: kernels.Attrs("pads", []int64{1, 1, 1, 1}),
			inputs: []sym{s(f32s, "B", 16, "H", "W"), s(f32s, 72, 16, 3, 3), s(f32s, 72)}, outputs: []sym{s(f32s, "B", 72, "H", "W")},
			dims: map[string][]int64{"B": {1, 2}, "H": {1, 7, 20}, "W": {3, 16}}},
		{name: "conv-1x1-swapped", op: "Conv",
			inputs: []sym{s(f32s, "B", 32, "H", "W"), s(f32s, 80, 32, 1, 1)}, outputs: []sym{s(f32s, "B", 80, "H", "W")},
			dims: map[string][]int64{"B": {1, 2}, "H": {1, 14, 30}, "W": {1, 20}}},
		{name: "convtranspose", op: "ConvTranspose", attrs: kernels.Attrs("strides", []int64{2, 2}),
			inputs: []sym{s(f32s, "B", 8, "H", "W"), s(f32s, 8, 4, 2, 2)}, outputs: []sym{s(f32s, "B", 4, "OH", "OW")},
			dims: map[string][]int64{"B": {1, 2}, "H": {1, 9, 70}, "W": {2, 40}}, derived: map[string][]string{"OH": {"H", "H"}, "OW": {"W", "W"}}},
		{name: "matmulnbits", op: "MatMulNBits", domain: ms, attrs: kernels.Attrs("K", 96, "N", 40, "bits", 4, "block_size", 32),
			inputs:  []sym{s(f32s, "B", "M", 96), s(graph.Uint8, 40, 3, 16), s(f32s, 40, 3)},
			outputs: []sym{s(f32s, "B", "M", 40)},
			dims:    map[string][]int64{"B": {1, 2}, "M": {1, 33}}},
	}
}

// R <= W on a grid of shapes in each family's ranges: the bound over the ranges covers the
// recipe of every concrete shape, whatever tactic the shape selects. For a fixed shape (a
// degenerate range) W is exactly R, so a static binding wastes nothing. (W over a range may
// exceed every R of the grid: ranges are per dim, so a dim shared by two inputs is bounded as
// if the inputs varied independently.)
func TestBoundCoversRecipe(t *testing.T) {
	for _, f := range families() {
		t.Run(f.name, func(t *testing.T) {
			rng := f.nodeRange()
			w, err := registry.Bound(rng, dev)
			require.NoError(t, err)
			var maxR int64
			tactics := map[string]bool{}
			f.grid(func(point map[string]int64) {
				n := f.node(point)
				inst, err := registry.Select(n, dev)
				require.NoError(t, err, "%v", point)
				r, err := inst.Recipe().Size()
				require.NoError(t, err)
				require.LessOrEqual(t, r, w.Bytes, "R > W at %v (tactic %s, bound tactic %s)", point, inst.Tactic(), w.Tactic)
				maxR = max(maxR, r)
				tactics[inst.Tactic()] = true
				// the degenerate range of a concrete node bounds it exactly
				wn, err := registry.Bound(kernels.RangeOf(n), dev)
				require.NoError(t, err)
				require.Equal(t, r, wn.Bytes, "W of a fixed shape is its R at %v", point)
			})
			require.Positive(t, maxR)
			t.Logf("W = %d (%s), max R = %d, tactics %v", w.Bytes, w.Tactic, maxR, tactics)
		})
	}
}

func TestBoundFamiliesReachEveryTactic(t *testing.T) {
	seen := map[string]map[string]bool{}
	for _, f := range families() {
		f.grid(func(point map[string]int64) {
			inst, err := registry.Select(f.node(point), dev)
			require.NoError(t, err)
			if seen[f.op] == nil {
				seen[f.op] = map[string]bool{}
			}
			seen[f.op][inst.Tactic()] = true
		})
	}
	for op, want := range map[string][]string{"MatMul": {"gemm", "f16-convert"}, "Attention": {"full", "split-kv"}, "MultiHeadAttention": {"full", "split-kv"}, "GroupQueryAttention": {"full", "split-kv"}, "Conv": {"im2col", "gemm-1x1"}} {
		for _, tac := range want {
			require.True(t, seen[op][tac], fmt.Sprintf("%s never selects %s in the grid", op, tac))
		}
	}
}

func TestBoundRejectsBadRanges(t *testing.T) {
	r := families()[0].nodeRange()
	r.Inputs[0].Dims[0] = kernels.DimRange{Lo: 5, Hi: 2}
	_, err := registry.Bound(r, dev)
	require.Error(t, err)
}
