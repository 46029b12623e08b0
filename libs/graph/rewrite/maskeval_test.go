package rewrite

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// maskModel builds a model whose output "mask" [batch, 1, seq, seq] is computed by nodes from
// x [batch, seq, 4] (read only through its shape) and, when pad, attention_mask [batch, seq].
func maskModel(t *testing.T, pad bool, nodes []graph.NodeSpec, inits ...*graph.Tensor) *graph.Value {
	t.Helper()
	b, s := graph.Sym("batch"), graph.Sym("seq")
	spec := graph.Spec{
		Inputs:       []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{b, s, graph.Const(4)}}},
		Initializers: inits,
		Nodes:        nodes,
		Outputs:      []string{"mask"},
		Opsets:       map[string]int64{"": 20},
		IRVersion:    9,
	}
	if pad {
		spec.Inputs = append(spec.Inputs, graph.ValueSpec{Name: "am", DType: graph.Int64, Shape: graph.Shape{b, s}})
	}
	m, err := graph.Build(spec)
	require.NoError(t, err)
	return m.Value("mask")
}

func node(op string, out string, attrs []graph.Attribute, ins ...string) graph.NodeSpec {
	return graph.NodeSpec{Name: out, OpType: op, Inputs: ins, Outputs: []string{out}, Attrs: graph.NewAttributes(attrs...)}
}

// index grids i [1, 1, seq, 1] (queries) and j [1, 1, 1, seq] (keys) from x's shape, plus
// the consts the masks use.
func grids(offset int64) ([]graph.NodeSpec, []*graph.Tensor) {
	inits := []*graph.Tensor{
		int64Init("zero", nil, 0), int64Init("one", nil, 1), int64Init("idx1", []int64{1}, 1),
		int64Init("ax_q", []int64{3}, 0, 1, 3), int64Init("ax_k", []int64{3}, 0, 1, 2),
		int64Init("off", nil, offset), float32Init("f0", 0), float32Init("fmin", -math.MaxFloat32),
	}
	nodes := []graph.NodeSpec{
		node("Shape", "shape", nil, "x"),
		node("Gather", "seqlen", nil, "shape", "one"),
		node("Range", "r", nil, "zero", "seqlen", "one"),
		node("Unsqueeze", "i", nil, "r", "ax_q"),
		node("Unsqueeze", "j", nil, "r", "ax_k"),
		node("Add", "i_off", nil, "i", "off"),
	}
	return nodes, inits
}

func TestRecogniseMask(t *testing.T) {
	where := func(keep string) []graph.NodeSpec {
		return []graph.NodeSpec{node("Where", "mask", nil, keep, "f0", "fmin")}
	}
	padding := []graph.NodeSpec{
		node("Cast", "am_b", []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Bool)}}, "am"),
		node("Unsqueeze", "am4", nil, "am_b", "axp"),
	}
	for _, tc := range []struct {
		name   string
		pad    bool
		offset int64
		nodes  []graph.NodeSpec
		causal bool
		window int64 // keys a row sees before its own (window_left), 0 for no bound
		right  int64 // keys after its own (window_right) without causality, 0 for no bound
		padded bool
		// queries: the padding masks the queries' rows too
		queries bool
		why     string // a part of the reason when it is not recognised
	}{
		{name: "causal j <= i", nodes: append([]graph.NodeSpec{node("LessOrEqual", "keep", nil, "j", "i_off")}, where("keep")...), causal: true},
		{name: "causal i - j >= 0", nodes: append([]graph.NodeSpec{node("Sub", "d", nil, "i_off", "j"), node("GreaterOrEqual", "keep", nil, "d", "zero")}, where("keep")...), causal: true},
		{name: "causal by Trilu", nodes: []graph.NodeSpec{
			node("Concat", "sq", []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: 0}}, "seqlen1", "seqlen1"),
			node("Unsqueeze", "seqlen1", nil, "seqlen", "ax0"),
			node("ConstantOfShape", "fill", []graph.Attribute{{Name: "value", Kind: graph.AttrTensor, Tensor: &graph.HostTensor{DType: graph.Float32, Shape: []int64{1}, Data: []byte{0xff, 0xff, 0x7f, 0xff}}}}, "sq"),
			node("Trilu", "tri", []graph.Attribute{{Name: "upper", Kind: graph.AttrInt, Int: 1}}, "fill", "one"),
			node("Unsqueeze", "mask", nil, "tri", "ax01"),
		}, causal: true},
		{name: "padding only", pad: true, nodes: append(padding, where("am4")...), padded: true},
		{name: "causal and padding", pad: true, nodes: append(append(padding, node("LessOrEqual", "c", nil, "j", "i_off"), node("And", "keep", nil, "c", "am4")), where("keep")...), causal: true, padded: true},
		// DeBERTa's: the outer product of the attention mask with itself
		{name: "padding of keys and queries", pad: true, nodes: append(append(padding, node("Unsqueeze", "amq", nil, "am_b", "axq"), node("And", "keep", nil, "am4", "amq")), where("keep")...),
			padded: true, queries: true},
		{name: "padding of keys and queries, causal", pad: true, nodes: append(append(padding, node("Unsqueeze", "amq", nil, "am_b", "axq"), node("And", "kq", nil, "am4", "amq"),
			node("LessOrEqual", "c", nil, "j", "i_off"), node("And", "keep", nil, "c", "kq")), where("keep")...), causal: true, padded: true, queries: true},
		{name: "padding of queries alone", pad: true, nodes: append(append(padding, node("Unsqueeze", "keep", nil, "am_b", "axq")), where("keep")...), why: "no band"},
		{name: "padding of keys and the next query", pad: true, nodes: append(append(padding, node("Unsqueeze", "amq", nil, "am_b", "axq"),
			node("Slice", "amq1", nil, "amq", "idx1", "big", "ax2"), node("Concat", "amq2", []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: 2}}, "amq1", "amq_last"),
			node("Slice", "amq_last", nil, "amq", "neg1", "big", "ax2"), node("And", "keep", nil, "am4", "amq2")), where("keep")...), why: "no band"},
		{name: "keys from the query on", nodes: append([]graph.NodeSpec{node("GreaterOrEqual", "keep", nil, "j", "i_off")}, where("keep")...), window: 1},
		{name: "the diagonal masked", nodes: append([]graph.NodeSpec{node("Equal", "e", nil, "j", "i_off"), node("Not", "keep", nil, "e")}, where("keep")...), why: "no band"},
		{name: "sliding window of 3", offset: -3, nodes: append([]graph.NodeSpec{
			node("LessOrEqual", "c", nil, "j", "i"), node("Greater", "w", nil, "j", "i_off"), node("And", "keep", nil, "c", "w"),
		}, where("keep")...), causal: true, window: 3},
		{name: "sliding window of 5 and padding", pad: true, offset: -5, nodes: append(append(padding,
			node("LessOrEqual", "c", nil, "j", "i"), node("Greater", "w", nil, "j", "i_off"), node("And", "cw", nil, "c", "w"), node("And", "keep", nil, "cw", "am4"),
		), where("keep")...), causal: true, window: 5, padded: true},
		{name: "a band both ways |i - j| <= 2", nodes: append([]graph.NodeSpec{
			node("Sub", "d", nil, "i", "j"), node("Abs", "ad", nil, "d"), node("LessOrEqual", "keep", nil, "ad", "two"),
		}, where("keep")...), window: 3, right: 3},
		// windows too large to probe, taken as a parameter
		{name: "a window of 4096", offset: -4096, nodes: append([]graph.NodeSpec{
			node("LessOrEqual", "c", nil, "j", "i"), node("Greater", "w", nil, "j", "i_off"), node("And", "keep", nil, "c", "w"),
		}, where("keep")...), causal: true, window: 4096},
		{name: "a window of 4096 and padding, j > i - 4096 as i - j < 4096", pad: true, offset: -4096, nodes: append(append(padding,
			node("LessOrEqual", "c", nil, "j", "i"), node("Sub", "d", nil, "i", "j"), node("Less", "w", nil, "d", "k4096"),
			node("And", "cw", nil, "c", "w"), node("And", "keep", nil, "cw", "am4"),
		), where("keep")...), causal: true, window: 4096, padded: true},
		{name: "a window of 4096 by Trilu", nodes: []graph.NodeSpec{
			node("Concat", "sq", []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: 0}}, "seqlen1", "seqlen1"),
			node("Unsqueeze", "seqlen1", nil, "seqlen", "ax0"),
			node("ConstantOfShape", "ones", []graph.Attribute{{Name: "value", Kind: graph.AttrTensor, Tensor: &graph.HostTensor{DType: graph.Bool, Shape: []int64{1}, Data: []byte{1}}}}, "sq"),
			node("Trilu", "low", []graph.Attribute{{Name: "upper", Kind: graph.AttrInt, Int: 0}}, "ones", "zero"),
			node("Trilu", "band", []graph.Attribute{{Name: "upper", Kind: graph.AttrInt, Int: 1}}, "low", "kneg4095"),
			node("Unsqueeze", "keep", nil, "band", "ax01"),
			node("Where", "mask", nil, "keep", "f0", "fmin"),
		}, causal: true, window: 4096},
		{name: "a window constant made a float", nodes: append([]graph.NodeSpec{
			node("Cast", "wf", []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Float32)}}, "k4096"),
			node("Cast", "wi", []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Int64)}}, "wf"),
			node("Sub", "lo", nil, "i", "wi"),
			node("LessOrEqual", "c", nil, "j", "i"), node("Greater", "w", nil, "j", "lo"), node("And", "keep", nil, "c", "w"),
		}, where("keep")...), why: "window constant is used other than"},
		{name: "a window constant folded", nodes: append([]graph.NodeSpec{
			node("Mul", "w2", nil, "k4096", "two"), node("Sub", "lo", nil, "i", "w2"),
			node("LessOrEqual", "c", nil, "j", "i"), node("Greater", "w", nil, "j", "lo"), node("And", "keep", nil, "c", "w"),
		}, where("keep")...), why: "constant 8192"},
		{name: "two unrelated large constants", offset: -100, nodes: append([]graph.NodeSpec{
			node("Sub", "lo", nil, "i", "k4096"), node("Greater", "w1", nil, "j", "lo"), node("Greater", "w2", nil, "j", "i_off"),
			node("LessOrEqual", "c", nil, "j", "i"), node("And", "cw", nil, "c", "w1"), node("And", "keep", nil, "cw", "w2"),
		}, where("keep")...), why: "not one window constant"},
		{name: "positions scaled", nodes: append([]graph.NodeSpec{node("Mul", "j2", nil, "j", "two"), node("LessOrEqual", "keep", nil, "j2", "i_off")}, where("keep")...), why: "index arithmetic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodes, inits := grids(tc.offset)
			inits = append(inits, int64Init("axp", []int64{2}, 1, 2), int64Init("ax0", []int64{1}, 0),
				int64Init("ax01", []int64{2}, 0, 1), int64Init("axq", []int64{2}, 1, 3), int64Init("ax2", []int64{1}, 2),
				int64Init("big", []int64{1}, 1<<40), int64Init("neg1", []int64{1}, -1), int64Init("two", nil, 2), int64Init("k4096", nil, 4096), int64Init("kneg4095", nil, -4095))
			m := maskModel(t, tc.pad, append(nodes, tc.nodes...), inits...)
			seq := graph.Sym("seq")
			rec, why := recogniseMask(m, seq, seq)
			if tc.why != "" {
				require.NotEmpty(t, why)
				require.True(t, strings.Contains(why, tc.why), "reason %q lacks %q", why, tc.why)
				return
			}
			require.Empty(t, why)
			want := graph.AttentionBand{Left: tc.window - 1, Right: tc.right - 1}
			if tc.causal {
				want.Right = 0
			}
			require.Equal(t, want, rec.band)
			require.Equal(t, tc.padded, rec.pad != nil)
			require.Equal(t, tc.queries, rec.queries)
			require.Positive(t, rec.probes)
		})
	}
}
