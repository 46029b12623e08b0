package graph_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

// TestSpecRoundTrip rebuilds every fixture from its Spec: the same nodes, values, dtypes,
// symbolic shapes and dims, and the same concrete shapes at a binding.
func TestSpecRoundTrip(t *testing.T) {
	for _, fm := range testmodels.Models() {
		t.Run(fm.Name, func(t *testing.T) {
			m := loadFixture(t, fm)
			r, err := graph.Build(m.Spec())
			require.NoError(t, err)
			require.Equal(t, m.DimNames, r.DimNames)
			require.Equal(t, m.Opsets, r.Opsets)
			require.Len(t, r.Nodes, len(m.Nodes))
			require.Len(t, r.Values, len(m.Values))
			for i, n := range m.Nodes {
				rn := r.Nodes[i]
				require.Equal(t, n.Name, rn.Name)
				require.Equal(t, n.OpType, rn.OpType)
				for j, o := range n.Outputs {
					if o == nil {
						require.Nil(t, rn.Outputs[j])
						continue
					}
					require.Equal(t, o.String(), rn.Outputs[j].String())
					require.Equal(t, o.Host, rn.Outputs[j].Host, o.Name)
					require.Equal(t, o.Kind, rn.Outputs[j].Kind, o.Name)
					require.Len(t, rn.Outputs[j].Consumers, len(o.Consumers), o.Name)
				}
			}
			for i, v := range m.Outputs {
				require.Equal(t, v.Name, r.Outputs[i].Name)
			}
			if len(fm.Bindings) == 0 {
				return
			}
			b1, err := graph.Bind(m, fm.Bindings[len(fm.Bindings)-1].Dims)
			require.NoError(t, err)
			b2, err := graph.Bind(r, fm.Bindings[len(fm.Bindings)-1].Dims)
			require.NoError(t, err)
			for _, v := range m.Values {
				require.Equal(t, b1.Shape(v), b2.Shape(r.Value(v.Name)), v.Name)
			}
		})
	}
}

// TestBuildSharesWeights checks that a built model reads its source's weights, and that
// closing either closes the shared mappings (Close twice is harmless).
func TestBuildSharesWeights(t *testing.T) {
	fm := testmodels.MustGet("llama") // external data: mapped on first use
	m, err := graph.Load(fm.WriteTemp(t))
	require.NoError(t, err)
	r, err := graph.Build(m.Spec())
	require.NoError(t, err)
	w := r.Initializers[0].Init
	require.Same(t, m.Initializers[0].Init, w)
	b, err := w.Bytes()
	require.NoError(t, err)
	require.Len(t, b, int(w.Size))
	require.NoError(t, r.Close())
	require.NoError(t, m.Close())
}

func f32Bytes(vals ...float32) []byte {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// tiny is a valid Spec: y = Relu(x) * w, x of shape [batch, 4].
func tiny(t *testing.T) graph.Spec {
	t.Helper()
	w, err := graph.NewTensor("w", graph.Float32, []int64{4}, f32Bytes(1, 2, 3, 4))
	require.NoError(t, err)
	return graph.Spec{
		Inputs:       []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("batch"), graph.Const(4)}}},
		Initializers: []*graph.Tensor{w},
		Nodes: []graph.NodeSpec{
			{Name: "mul", OpType: "Mul", Inputs: []string{"r", "w"}, Outputs: []string{"y"}},
			{Name: "relu", OpType: "Relu", Inputs: []string{"x"}, Outputs: []string{"r"}},
		},
		Outputs: []string{"y"},
		Opsets:  map[string]int64{"ai.onnx": 18},
	}
}

func TestBuild(t *testing.T) {
	m, err := graph.Build(tiny(t))
	require.NoError(t, err)
	require.Equal(t, []string{"batch"}, m.DimNames)
	require.Equal(t, "relu", m.Nodes[0].Name, "nodes are sorted topologically")
	require.Equal(t, "y float32[batch, 4]", m.Value("y").String())
	require.Equal(t, map[string]int64{"": 18}, m.Opsets)
	require.NoError(t, m.Close(), "a model of NewTensor weights has nothing to close")
	b, err := m.Value("w").Init.Bytes()
	require.NoError(t, err)
	require.Equal(t, f32Bytes(1, 2, 3, 4), b)
}

func TestBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(s *graph.Spec)
		wants string
	}{
		{"no opset", func(s *graph.Spec) { s.Opsets = nil }, "imports no ai.onnx opset"},
		{"old opset", func(s *graph.Spec) { s.Opsets = map[string]int64{"": 7} }, "opset 7 is not supported"},
		{"dangling input", func(s *graph.Spec) { s.Nodes[0].Inputs[0] = "nope" }, `tensor "nope": input is not`},
		{"defined twice", func(s *graph.Spec) { s.Nodes[0].Outputs[0] = "r" }, "defined more than once"},
		{"input twice", func(s *graph.Spec) { s.Inputs = append(s.Inputs, s.Inputs[0]) }, "declared twice"},
		{"input is a weight", func(s *graph.Spec) { s.Inputs[0].Name = "w" }, "declared twice or also an initializer"},
		{"missing output", func(s *graph.Spec) { s.Outputs = []string{"z"} }, "graph output is not defined"},
		{"cycle", func(s *graph.Spec) { s.Nodes[1].Inputs[0] = "y" }, "cycle"},
		{"no op", func(s *graph.Spec) { s.Nodes[0].OpType = "" }, "no op_type"},
		{"unsupported op", func(s *graph.Spec) { s.Nodes[1].OpType = "Frobnicate" }, "unsupported operators: Frobnicate"},
		{"poisoned dim", func(s *graph.Spec) {
			s.Inputs[0].Shape[0] = graph.Sym("a").Mul(graph.Const(1 << 62)).Mul(graph.Const(4))
		}, "overflow"},
		{"negative dim", func(s *graph.Spec) { s.Inputs[0].Shape[1] = graph.Const(-1) }, "negative"},
		{"bad inference", func(s *graph.Spec) { s.Inputs[0].Shape[1] = graph.Const(5) }, "Mul"},
		{"nil weight", func(s *graph.Spec) { s.Initializers = append(s.Initializers, nil) }, "nil or has no name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tiny(t)
			tc.edit(&s)
			_, err := graph.Build(s)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.wants)
		})
	}
}

func TestBuildRefusesTwoModelsWeights(t *testing.T) {
	a := loadFixture(t, testmodels.MustGet("contrib_mha"))
	b := loadFixture(t, testmodels.MustGet("contrib_attention"))
	s := a.Spec()
	s.Initializers = append(s.Initializers, b.Spec().Initializers...)
	_, err := graph.Build(s)
	var me *graph.ModelError
	require.ErrorAs(t, err, &me)
	require.Contains(t, err.Error(), "more than one loaded model")
}

func TestNewTensor(t *testing.T) {
	_, err := graph.NewTensor("w", graph.Float32, []int64{2}, f32Bytes(1))
	require.ErrorContains(t, err, "4 bytes of data, want 8")
	_, err = graph.NewTensor("w", graph.String, []int64{1}, nil)
	require.ErrorContains(t, err, "not supported")
	data := f32Bytes(1, 2)
	w, err := graph.NewTensor("w", graph.Float32, []int64{2}, data)
	require.NoError(t, err)
	data[0] = 9
	b, err := w.Bytes()
	require.NoError(t, err)
	require.Equal(t, f32Bytes(1, 2), b, "NewTensor copies its data")
}

// TestConstantData: every dense form of a Constant's value is known at load through
// Model.Constant, the same tensor at every binding; other values are not Constants; a value
// whose bytes are not its tensor's is refused (a runner uploads those bytes as they are).
func TestConstantData(t *testing.T) {
	f32 := binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5))
	spec := graph.Spec{
		Inputs: []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("n")}}},
		Nodes: []graph.NodeSpec{
			{OpType: "Constant", Outputs: []string{"v"}, Attrs: graph.NewAttributes(graph.Attribute{Name: "value", Kind: graph.AttrTensor,
				Tensor: &graph.HostTensor{DType: graph.Float32, Shape: []int64{1}, Data: f32}})},
			{OpType: "Constant", Outputs: []string{"f"}, Attrs: graph.NewAttributes(graph.Attribute{Name: "value_float", Kind: graph.AttrFloat, Float: 1.5})},
			{OpType: "Constant", Outputs: []string{"fs"}, Attrs: graph.NewAttributes(graph.Attribute{Name: "value_floats", Kind: graph.AttrFloats, Floats: []float32{1.5}})},
			{OpType: "Constant", Outputs: []string{"i"}, Attrs: graph.NewAttributes(graph.Attribute{Name: "value_int", Kind: graph.AttrInt, Int: 7})},
			{OpType: "Constant", Outputs: []string{"is"}, Attrs: graph.NewAttributes(graph.Attribute{Name: "value_ints", Kind: graph.AttrInts, Ints: []int64{7, 8}})},
			{OpType: "Add", Inputs: []string{"x", "v"}, Outputs: []string{"y"}},
		},
		Outputs: []string{"y"},
		Opsets:  map[string]int64{"": 18},
	}
	m, err := graph.Build(spec)
	require.NoError(t, err)
	b, err := graph.Bind(m, map[string]int64{"n": 3})
	require.NoError(t, err)
	want := map[string][]byte{"v": f32, "f": f32, "fs": f32,
		"i": binary.LittleEndian.AppendUint64(nil, 7), "is": binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, 7), 8)}
	for name, data := range want {
		v := m.Value(name)
		require.Equal(t, graph.KindConstant, v.Kind, name)
		c, ok := m.Constant(v)
		require.True(t, ok, name)
		require.Equal(t, data, c.Data, name)
		h, ok := b.Host(v)
		require.True(t, ok, name)
		require.Same(t, c, h, "%s: the binding's data is the model's", name)
	}
	for _, name := range []string{"x", "y"} {
		_, ok := m.Constant(m.Value(name))
		require.False(t, ok, name)
	}
	_, ok := m.Constant(nil)
	require.False(t, ok)

	spec.Nodes[0].Attrs = graph.NewAttributes(graph.Attribute{Name: "value", Kind: graph.AttrTensor,
		Tensor: &graph.HostTensor{DType: graph.Float32, Shape: []int64{2}, Data: f32}})
	_, err = graph.Build(spec)
	var me *graph.ModelError
	require.ErrorAs(t, err, &me)
	require.Contains(t, err.Error(), "holds 4 bytes")
}

// TestShapeTensor builds a model whose weight is declared by its shape only: it infers and binds
// as with data, Size counts the bytes it would take, and Bytes says it has none.
func TestShapeTensor(t *testing.T) {
	w, err := graph.NewShapeTensor("w", graph.BFloat16, []int64{4096, 14336})
	require.NoError(t, err)
	require.True(t, w.ShapeOnly())
	require.Equal(t, int64(4096*14336*2), w.Size)
	_, err = w.Bytes()
	require.ErrorIs(t, err, graph.ErrNoData)
	m, err := graph.Build(graph.Spec{
		Inputs:       []graph.ValueSpec{{Name: "x", DType: graph.BFloat16, Shape: graph.Shape{graph.Sym("n"), graph.Const(4096)}}},
		Initializers: []*graph.Tensor{w},
		Nodes:        []graph.NodeSpec{{Name: "mm", OpType: "MatMul", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}},
		Outputs:      []string{"y"},
		Opsets:       map[string]int64{"": 23},
	})
	require.NoError(t, err)
	b, err := graph.Bind(m, map[string]int64{"n": 3})
	require.NoError(t, err)
	require.Equal(t, []int64{3, 14336}, b.Shape(m.Value("y")))
	require.NoError(t, m.Close())
	_, err = graph.NewShapeTensor("bad", graph.Float32, []int64{-1})
	require.Error(t, err)
}
