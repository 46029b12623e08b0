package graph_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// attentionSpec is one ai.onnx Attention node over graph inputs.
func attentionSpec(attrs graph.Attributes, outputs []string, inputs ...graph.ValueSpec) graph.Spec {
	s := graph.Spec{Opsets: map[string]int64{"": 23}}
	var names []string
	for _, in := range inputs {
		if in.Name == "" {
			names = append(names, "")
			continue
		}
		if !slices.Contains(names, in.Name) { // an input read twice is declared once
			s.Inputs = append(s.Inputs, in)
		}
		names = append(names, in.Name)
	}
	s.Nodes = []graph.NodeSpec{{Name: "attn", OpType: "Attention", Inputs: names, Outputs: outputs, Attrs: attrs}}
	for _, o := range outputs {
		if o != "" {
			s.Outputs = append(s.Outputs, o)
		}
	}
	return s
}

func vs(name string, dt graph.DType, dims ...any) graph.ValueSpec {
	v := graph.ValueSpec{Name: name, DType: dt}
	for _, d := range dims {
		switch x := d.(type) {
		case int:
			v.Shape = append(v.Shape, graph.Const(int64(x)))
		case string:
			v.Shape = append(v.Shape, graph.Sym(x))
		}
	}
	return v
}

func TestInferONNXAttention(t *testing.T) {
	f := graph.Float32
	for _, tc := range []struct {
		name   string
		attrs  graph.Attributes
		inputs []graph.ValueSpec
		outs   []string
		want   []string // the outputs' types
	}{
		{
			name:   "gqa with padding mask",
			inputs: []graph.ValueSpec{vs("q", f, "b", 4, "s", 16), vs("k", f, "b", 2, "s", 16), vs("v", f, "b", 2, "s", 8), vs("m", graph.Bool, "b", 1, 1, "s")},
			outs:   []string{"y"},
			want:   []string{"y float32[b, 4, s, 8]"},
		},
		{
			name:   "3-D",
			attrs:  graph.NewAttributes(graph.Attribute{Name: "q_num_heads", Kind: graph.AttrInt, Int: 4}, graph.Attribute{Name: "kv_num_heads", Kind: graph.AttrInt, Int: 2}),
			inputs: []graph.ValueSpec{vs("q", f, "b", "s", 64), vs("k", f, "b", "t", 32), vs("v", f, "b", "t", 16)},
			outs:   []string{"y"},
			want:   []string{"y float32[b, s, 32]"},
		},
		{
			// nn.MultiheadAttention's packed projection [S, B, 3, H, D], read three times
			name: "layouts",
			attrs: graph.NewAttributes(graph.Attribute{Name: graph.AttrQLayout, Kind: graph.AttrString, String: "sb0hd"},
				graph.Attribute{Name: graph.AttrKLayout, Kind: graph.AttrString, String: "sb1hd"},
				graph.Attribute{Name: graph.AttrVLayout, Kind: graph.AttrString, String: "sb2hd"},
				graph.Attribute{Name: graph.AttrYLayout, Kind: graph.AttrString, String: "sbhd"}),
			inputs: []graph.ValueSpec{vs("p", f, "s", "b", 3, 4, 8), vs("p", f), vs("p", f)},
			outs:   []string{"y"},
			want:   []string{"y float32[s, b, 4, 8]"},
		},
		{
			name:   "K and V's layouts only",
			attrs:  graph.NewAttributes(graph.Attribute{Name: graph.AttrKLayout, Kind: graph.AttrString, String: "bshd"}, graph.Attribute{Name: graph.AttrVLayout, Kind: graph.AttrString, String: "bs1hd"}),
			inputs: []graph.ValueSpec{vs("q", f, "b", 4, "s", 16), vs("k", f, "b", "t", 2, 16), vs("v", f, "b", "t", 2, 2, 8)},
			outs:   []string{"y"},
			want:   []string{"y float32[b, 4, s, 8]"},
		},
		{
			name: "past and present",
			inputs: []graph.ValueSpec{vs("q", f, "b", 4, 1, 16), vs("k", f, "b", 4, 1, 16), vs("v", f, "b", 4, 1, 16),
				vs("m", f, "b", 1, 1, "p1"), vs("pk", f, "b", 4, "p", 16), vs("pv", f, "b", 4, "p", 16)},
			outs: []string{"y", "present_key", "present_value"},
			want: []string{"y float32[b, 4, 1, 16]", "present_key float32[b, 4, p + 1, 16]", "present_value float32[b, 4, p + 1, 16]"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(attentionSpec(tc.attrs, tc.outs, tc.inputs...))
			require.NoError(t, err)
			for i, o := range tc.outs {
				require.Equal(t, tc.want[i], m.Value(o).String())
			}
		})
	}
}

func TestInferONNXAttentionErrors(t *testing.T) {
	f := graph.Float32
	for _, tc := range []struct {
		name   string
		attrs  graph.Attributes
		inputs []graph.ValueSpec
		wants  string
	}{
		{"types", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", graph.Float16, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4)}, "one type"},
		{"ranks", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 3, 8), vs("v", f, 1, 2, 3, 4)}, "all 4-D"},
		{"head size", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 5), vs("v", f, 1, 2, 3, 4)}, "head size of K"},
		{"gqa ratio", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 3, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4)}, "multiple of kv heads"},
		{"3-D without heads", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 3, 8), vs("k", f, 1, 3, 8), vs("v", f, 1, 3, 8)}, "q_num_heads"},
		{"mask type", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4), vs("m", graph.Int64, 3, 3)}, "must be bool or float32"},
		{"mask dim", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4), vs("m", graph.Bool, 3, 3, 3)}, "is 1 or 2"},
		{"mask too long", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4), vs("m", graph.Bool, 3, 4)}, "at most the total"},
		{"layout letter", lay(graph.AttrQLayout, "bhxd"), []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4)}, "is not an axis"},
		{"layout d not last", lay(graph.AttrKLayout, "bhds"), []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 4, 3), vs("v", f, 1, 2, 3, 4)}, "must be the last axis"},
		{"layout twice", lay(graph.AttrVLayout, "bhhd"), []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4)}, "twice"},
		{"layout rank", lay(graph.AttrQLayout, "bs0hd"), []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4)}, "has rank 5"},
		{"layout index", lay(graph.AttrQLayout, "bs3hd"), []graph.ValueSpec{vs("q", f, 1, 3, 3, 2, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4)}, "the index 3"},
		{"layout output index", lay(graph.AttrYLayout, "bsh0d"), []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4)}, "is not an axis"},
		{"layout heads", lay(graph.AttrVLayout, "bshd"), []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 3, 3, 4)}, "heads of V"},
		{"lone past", graph.Attributes{}, []graph.ValueSpec{vs("q", f, 1, 2, 3, 4), vs("k", f, 1, 2, 3, 4), vs("v", f, 1, 2, 3, 4), {}, vs("pk", f, 1, 2, 3, 4)}, "go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Build(attentionSpec(tc.attrs, []string{"y"}, tc.inputs...))
			var me *graph.ModelError
			require.ErrorAs(t, err, &me)
			require.Contains(t, err.Error(), tc.wants)
		})
	}
}

// lay is one layout attribute.
func lay(name, layout string) graph.Attributes {
	return graph.NewAttributes(graph.Attribute{Name: name, Kind: graph.AttrString, String: layout})
}

// TestInferONNXAttentionBindChecks: conditions on named dims are checked at Bind.
func TestInferONNXAttentionBindChecks(t *testing.T) {
	f := graph.Float32
	m, err := graph.Build(attentionSpec(graph.Attributes{}, []string{"y"},
		vs("q", f, "b", 2, "s", 4), vs("k", f, "b", 2, "t", 4), vs("v", f, "b", 2, "t", 4), vs("m", graph.Bool, "mb", 1, "s", "mt")))
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"b": 2, "s": 3, "t": 5, "mb": 1, "mt": 5})
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"b": 2, "s": 3, "t": 5, "mb": 3, "mt": 5})
	var be *graph.BindError
	require.ErrorAs(t, err, &be)
	require.Contains(t, err.Error(), "dim 0 of attn_mask")
	_, err = graph.Bind(m, map[string]int64{"b": 2, "s": 3, "t": 5, "mb": 2, "mt": 6})
	require.ErrorContains(t, err, "last dim of attn_mask")
}

// TestInferONNXAttentionRelativeBias: carve's relative-bias inputs (graph.AttnRelC2P to
// AttnRelP2CIndex): each table with its int32 index of S + T - 1 entries, its rows the
// queries (c2p) or the keys (p2c), no past; conditions on named dims at Bind.
func TestInferONNXAttentionRelativeBias(t *testing.T) {
	f, i32 := graph.Float32, graph.Int32
	qkv := []graph.ValueSpec{vs("q", f, "b", 2, "s", 4), vs("k", f, "b", 2, "t", 4), vs("v", f, "b", 2, "t", 4)}
	with := func(extra ...graph.ValueSpec) []graph.ValueSpec {
		return append(append(append([]graph.ValueSpec{}, qkv...), graph.ValueSpec{}, graph.ValueSpec{}, graph.ValueSpec{}, graph.ValueSpec{}), extra...)
	}
	m, err := graph.Build(attentionSpec(graph.Attributes{}, []string{"y"}, with(
		vs("c2p", f, "b", 2, "s", 16), vs("ci", i32, "n"), vs("p2c", f, 1, 1, "t", 16), vs("pi", i32, "n"))...))
	require.NoError(t, err)
	require.Equal(t, "y float32[b, 2, s, 4]", m.Value("y").String())
	_, err = graph.Bind(m, map[string]int64{"b": 2, "s": 3, "t": 5, "n": 7})
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"b": 2, "s": 3, "t": 5, "n": 8})
	require.ErrorContains(t, err, "length of rel_c2p_index against queries + keys - 1")
	m, err = graph.Build(attentionSpec(graph.Attributes{}, []string{"y"}, with(vs("c2p", f, "b", 2, "t", 16), vs("ci", i32, "n"))...))
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"b": 2, "s": 5, "t": 5, "n": 9})
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"b": 2, "s": 3, "t": 5, "n": 7})
	require.ErrorContains(t, err, "rows of rel_c2p against the queries")

	for _, tc := range []struct {
		name   string
		inputs []graph.ValueSpec
		wants  string
	}{
		{"table without index", with(vs("c2p", f, "b", 2, "s", 16)), "go together"},
		{"index without table", with(graph.ValueSpec{}, graph.ValueSpec{}, vs("pi", i32, 7)), "go together"},
		{"table type", with(vs("c2p", graph.Float16, "b", 2, "s", 16), vs("ci", i32, 7)), "must be float32"},
		{"table rank", with(vs("c2p", f, "s", 16), vs("ci", i32, 7)), "must be float32"},
		{"index type", with(vs("c2p", f, "b", 2, "s", 16), vs("ci", graph.Int64, 7)), "must be int32"},
		{"heads", with(vs("c2p", f, "b", 3, "s", 16), vs("ci", i32, 7)), "dim 1 of rel_c2p (3) is 1 or 2"},
		{"past", append(append([]graph.ValueSpec{}, qkv...), graph.ValueSpec{}, vs("pk", f, "b", 2, "p", 4), vs("pv", f, "b", 2, "p", 4),
			graph.ValueSpec{}, vs("c2p", f, "b", 2, "s", 16), vs("ci", i32, 7)), "takes no past_key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Build(attentionSpec(graph.Attributes{}, []string{"y"}, tc.inputs...))
			require.ErrorContains(t, err, tc.wants)
		})
	}
}
