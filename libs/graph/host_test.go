package graph_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
)

// TestHostValues checks the data of host values against the shapes they describe: a Shape
// node's data is its input's shape, a Reshape's target resolves to the output shape
// onnxruntime produced, an Expand's target broadcasts to it.
func TestHostValues(t *testing.T) {
	for _, m := range testmodels.Models() {
		t.Run(m.Name, func(t *testing.T) {
			g := loadFixture(t, m)
			b, err := graph.Bind(g, m.Dims(3, 5, 4))
			require.NoError(t, err)
			hosts := 0
			for _, n := range g.Nodes {
				for _, o := range n.Outputs {
					if o != nil && o.Host {
						h, ok := b.Host(o)
						require.True(t, ok, o.Name)
						require.Equal(t, b.Shape(o), h.Shape)
						size, err := graph.ByteSize(h.DType, h.Shape)
						require.NoError(t, err)
						require.Len(t, h.Data, int(size))
						hosts++
					}
				}
				switch n.OpType {
				case "Shape":
					data := hostInts(t, b, n.Outputs[0])
					full := b.Shape(n.Inputs[0])
					start, end := n.Attrs.Int("start", 0), n.Attrs.Int("end", int64(len(full)))
					if start < 0 {
						start += int64(len(full))
					}
					if end < 0 {
						end += int64(len(full))
					}
					end = min(end, int64(len(full)))
					require.Equal(t, full[start:end], data, "%s", n)
				case "Reshape":
					target := hostInts(t, b, n.Inputs[1])
					in := b.Shape(n.Inputs[0])
					total, err := graph.NumElements(in)
					require.NoError(t, err)
					known, infer := int64(1), -1
					for i, d := range target {
						switch {
						case d == -1:
							infer = i
							continue
						case d == 0 && n.Attrs.Int("allowzero", 0) == 0:
							target[i] = in[i]
						}
						known *= target[i]
					}
					if infer >= 0 {
						target[infer] = total / known
					}
					require.Equal(t, target, b.Shape(n.Outputs[0]), "%s", n)
				}
			}
			for _, v := range g.Values {
				if v.Kind == graph.KindConstant {
					_, ok := b.Host(v)
					require.True(t, ok, "constant %s has host data", v.Name)
				}
				if v.Kind == graph.KindInput {
					_, ok := b.Host(v)
					require.False(t, ok, "input %s has no host data", v.Name)
				}
			}
			if m.Name != "contrib_attention" && m.Name != "contrib_mha" && m.Name != "contrib_norm" {
				require.Positive(t, hosts, "shape computations run on the host")
			}
		})
	}
}

func hostInts(t *testing.T, b *graph.Binding, v *graph.Value) []int64 {
	t.Helper()
	h, ok := b.Host(v)
	require.True(t, ok, "%s is a host value", v.Name)
	vals, err := h.Int64s()
	require.NoError(t, err)
	return vals
}

// TestUnnamedDims: a dynamic dim without a name gets one, so bindings can still set it.
func TestUnnamedDims(t *testing.T) {
	m, err := graph.Parse(newModel().input("x", f32, nil, 4).node("Neg", []string{"x"}, []string{"y"}).output("y").bytes(t), "")
	require.NoError(t, err)
	require.Equal(t, []string{"x.0"}, m.DimNames)
	b, err := graph.Bind(m, map[string]int64{"x.0": 5})
	require.NoError(t, err)
	require.Equal(t, []int64{5, 4}, b.Shape(m.Value("y")))
}

func TestSupportedOps(t *testing.T) {
	ops := graph.SupportedOps()
	for _, want := range []string{"MatMul", "Reshape", "Range", "CumSum", "Trilu", "com.microsoft.MatMulNBits",
		"com.microsoft.GroupQueryAttention", "com.microsoft.SkipSimplifiedLayerNormalization"} {
		require.Contains(t, ops, want)
	}
	// Every op of every fixture is supported (the fixtures load), and the histograms the
	// fixture script recorded agree with the loaded graphs.
	for _, m := range testmodels.Models() {
		g := loadFixture(t, m)
		hist := map[string]int{}
		for _, n := range g.Nodes {
			k := n.OpType
			if n.Domain != "" {
				k = n.Domain + "." + n.OpType
			}
			hist[k]++
		}
		require.Equal(t, m.Ops, hist, m.Name)
	}
}

// TestHostData: a shape computation's data is known at load as dims over the named dims, an
// element that reads a static dim a constant; values computed on the device, inputs and
// values of another model have none.
func TestHostData(t *testing.T) {
	ints := func(name string, vals ...int64) *graph.Tensor {
		b := make([]byte, 0, 8*len(vals))
		for _, v := range vals {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
		tn, err := graph.NewTensor(name, graph.Int64, []int64{int64(len(vals))}, b)
		require.NoError(t, err)
		return tn
	}
	spec := graph.Spec{
		Inputs:       []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("batch"), graph.Sym("seq"), graph.Const(64)}}},
		Initializers: []*graph.Tensor{ints("last", -1), ints("end", math.MaxInt64)},
		Nodes: []graph.NodeSpec{
			{OpType: "Shape", Inputs: []string{"x"}, Outputs: []string{"shape"}},
			{OpType: "Slice", Inputs: []string{"shape", "last", "end"}, Outputs: []string{"head"}},
			{OpType: "Neg", Inputs: []string{"x"}, Outputs: []string{"y"}},
		},
		Outputs: []string{"y"},
		Opsets:  map[string]int64{"": 18},
	}
	m, err := graph.Build(spec)
	require.NoError(t, err)
	d, ok := m.HostData(m.Value("shape"))
	require.True(t, ok)
	require.Equal(t, "[batch seq 64]", fmt.Sprint(d))
	d, ok = m.HostData(m.Value("head"))
	require.True(t, ok)
	require.Len(t, d, 1)
	v, ok := d[0].Value()
	require.True(t, ok, "the last dim is static: %s", d[0])
	require.Equal(t, int64(64), v)
	d, ok = m.HostData(m.Value("last"))
	require.True(t, ok, "a small integer initializer")
	require.Equal(t, "[-1]", fmt.Sprint(d))
	for _, name := range []string{"x", "y"} {
		_, ok := m.HostData(m.Value(name))
		require.False(t, ok, name)
	}
	other, err := graph.Build(spec)
	require.NoError(t, err)
	_, ok = m.HostData(other.Value("shape"))
	require.False(t, ok, "a value of another model")
	_, ok = m.HostData(nil)
	require.False(t, ok)
}
