package graph_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// attrs builds attributes from name/value pairs: int, []int64, string or []float32.
func attrs(pairs ...any) graph.Attributes {
	var list []graph.Attribute
	for i := 0; i < len(pairs); i += 2 {
		a := graph.Attribute{Name: pairs[i].(string)}
		switch v := pairs[i+1].(type) {
		case int:
			a.Kind, a.Int = graph.AttrInt, int64(v)
		case []int64:
			a.Kind, a.Ints = graph.AttrInts, v
		case string:
			a.Kind, a.String = graph.AttrString, v
		case []float32:
			a.Kind, a.Floats = graph.AttrFloats, v
		}
		list = append(list, a)
	}
	return graph.NewAttributes(list...)
}

// oneNode is a model of one node over graph inputs (and initializers), producing y.
func oneNode(op string, at graph.Attributes, inits []*graph.Tensor, inputs []graph.ValueSpec, names ...string) graph.Spec {
	return graph.Spec{Opsets: map[string]int64{"": 18}, Inputs: inputs, Initializers: inits, Outputs: []string{"y"},
		Nodes: []graph.NodeSpec{{Name: "n", OpType: op, Inputs: names, Outputs: []string{"y"}, Attrs: at}}}
}

func i64Tensor(t *testing.T, name string, vals ...int64) *graph.Tensor {
	b := make([]byte, 8*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	w, err := graph.NewTensor(name, graph.Int64, []int64{int64(len(vals))}, b)
	require.NoError(t, err)
	return w
}

func f32Tensor(t *testing.T, name string, vals ...float32) *graph.Tensor {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	w, err := graph.NewTensor(name, graph.Float32, []int64{int64(len(vals))}, b)
	require.NoError(t, err)
	return w
}

func TestInferConv(t *testing.T) {
	f := graph.Float32
	for _, tc := range []struct {
		name string
		x, w graph.ValueSpec
		at   graph.Attributes
		want string
	}{
		{"3x3 pad 1", vs("x", f, "n", 3, 224, 224), vs("w", f, 64, 3, 3, 3), attrs("pads", []int64{1, 1, 1, 1}), "y float32[n, 64, 224, 224]"},
		{"7x7 stride 2", vs("x", f, "n", 3, 224, 224), vs("w", f, 64, 3, 7, 7), attrs("pads", []int64{3, 3, 3, 3}, "strides", []int64{2, 2}), "y float32[n, 64, 112, 112]"},
		{"no pads", vs("x", f, 1, 3, 10, 9), vs("w", f, 8, 3, 3, 2), attrs(), "y float32[1, 8, 8, 8]"},
		{"asymmetric pads and dilation", vs("x", f, 2, 4, 11, 7), vs("w", f, 6, 2, 3, 3), attrs("group", 2, "pads", []int64{0, 1, 2, 0}, "dilations", []int64{2, 1}), "y float32[2, 6, 9, 6]"},
		{"depthwise", vs("x", f, 1, 32, 15, 15), vs("w", f, 32, 1, 3, 3), attrs("group", 32, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}), "y float32[1, 32, 8, 8]"},
		{"SAME_UPPER stride 2", vs("x", f, 1, 3, 15, 16), vs("w", f, 4, 3, 3, 3), attrs("auto_pad", "SAME_UPPER", "strides", []int64{2, 2}), "y float32[1, 4, 8, 8]"},
		{"VALID", vs("x", f, 1, 3, 15, 16), vs("w", f, 4, 3, 3, 3), attrs("auto_pad", "VALID", "strides", []int64{2, 2}), "y float32[1, 4, 7, 7]"},
		{"1-D audio", vs("x", f, "b", 1, "t"), vs("w", f, 512, 1, 10), attrs("strides", []int64{5}), "y float32[b, 512, floordiv(t - 10, 5) + 1]"},
		{"1-D same", vs("x", f, "b", 80, "t"), vs("w", f, 384, 80, 3), attrs("pads", []int64{1, 1}), "y float32[b, 384, t]"},
		{"3-D", vs("x", f, 1, 2, 5, 6, 7), vs("w", f, 3, 2, 3, 3, 3), attrs("pads", []int64{1, 0, 1, 1, 0, 1}), "y float32[1, 3, 5, 4, 7]"},
		{"symbolic same upper", vs("x", f, 1, 3, "h", "w"), vs("w", f, 4, 3, 3, 3), attrs("auto_pad", "SAME_UPPER"), "y float32[1, 4, h, w]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(oneNode("Conv", tc.at, nil, []graph.ValueSpec{tc.x, tc.w}, "x", "w"))
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Value("y").String())
		})
	}
}

func TestInferConvBind(t *testing.T) {
	f := graph.Float32
	m, err := graph.Build(oneNode("Conv", attrs("strides", []int64{2, 2}, "auto_pad", "SAME_LOWER"), nil,
		[]graph.ValueSpec{vs("x", f, "n", 3, "h", "w"), vs("w", f, 4, 3, 3, 3)}, "x", "w"))
	require.NoError(t, err)
	b, err := graph.Bind(m, map[string]int64{"n": 2, "h": 15, "w": 16})
	require.NoError(t, err)
	require.Equal(t, []int64{2, 4, 8, 8}, b.Shape(m.Value("y")))

	// a kernel larger than the input is refused at Bind
	m, err = graph.Build(oneNode("Conv", attrs(), nil, []graph.ValueSpec{vs("x", f, 1, 3, "h", 8), vs("w", f, 4, 3, 5, 5)}, "x", "w"))
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"h": 4})
	require.ErrorContains(t, err, "hold the dilated kernel")
	_, err = graph.Bind(m, map[string]int64{"h": 5})
	require.NoError(t, err)
}

func TestInferConvErrors(t *testing.T) {
	f := graph.Float32
	for _, tc := range []struct {
		name string
		x, w graph.ValueSpec
		at   graph.Attributes
		want string
	}{
		{"channels", vs("x", f, 1, 3, 8, 8), vs("w", f, 4, 2, 3, 3), attrs(), "input channels against weight channels times group: 3 != 2"},
		{"group", vs("x", f, 1, 6, 8, 8), vs("w", f, 4, 3, 3, 3), attrs("group", 3), "6 != 9"},
		{"weight rank", vs("x", f, 1, 3, 8, 8), vs("w", f, 4, 3, 3), attrs(), "weight [4, 3, 3] has rank 3, want the input's 4"},
		{"kernel too big", vs("x", f, 1, 3, 2, 8), vs("w", f, 4, 3, 3, 3), attrs(), "hold the dilated kernel"},
		{"strides", vs("x", f, 1, 3, 8, 8), vs("w", f, 4, 3, 3, 3), attrs("strides", []int64{1}), "strides [1] has 1 values, want 2"},
		{"zero stride", vs("x", f, 1, 3, 8, 8), vs("w", f, 4, 3, 3, 3), attrs("strides", []int64{1, 0}), "want values >= 1"},
		{"auto_pad", vs("x", f, 1, 3, 8, 8), vs("w", f, 4, 3, 3, 3), attrs("auto_pad", "SAME"), `auto_pad "SAME" is not one of`},
		{"kernel_shape", vs("x", f, 1, 3, 8, 8), vs("w", f, 4, 3, 3, 3), attrs("kernel_shape", []int64{2, 2}), "differs from the weight's spatial dims"},
		{"rank 2", vs("x", f, 3, 8), vs("w", f, 4, 3), attrs(), "rank 3 or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Build(oneNode("Conv", tc.at, nil, []graph.ValueSpec{tc.x, tc.w}, "x", "w"))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestInferConvTranspose(t *testing.T) {
	f := graph.Float32
	for _, tc := range []struct {
		name string
		x, w graph.ValueSpec
		at   graph.Attributes
		want string
	}{
		{"stride 2 pad 1", vs("x", f, "n", 8, 7, 7), vs("w", f, 8, 4, 4, 4), attrs("strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}), "y float32[n, 4, 14, 14]"},
		{"output_padding", vs("x", f, 1, 8, 7, 5), vs("w", f, 8, 2, 3, 3), attrs("group", 2, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}, "output_padding", []int64{1, 0}), "y float32[1, 4, 14, 9]"},
		{"output_shape", vs("x", f, 1, 8, 7, 7), vs("w", f, 8, 3, 3, 3), attrs("strides", []int64{2, 2}, "output_shape", []int64{14, 15}), "y float32[1, 3, 14, 15]"},
		{"SAME_UPPER", vs("x", f, 1, 8, "h", 7), vs("w", f, 8, 3, 3, 3), attrs("strides", []int64{2, 2}, "auto_pad", "SAME_UPPER"), "y float32[1, 3, 2*h, 14]"},
		{"1-D", vs("x", f, 1, 8, "t"), vs("w", f, 8, 3, 4), attrs("strides", []int64{2}, "pads", []int64{1, 1}), "y float32[1, 3, 2*t]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(oneNode("ConvTranspose", tc.at, nil, []graph.ValueSpec{tc.x, tc.w}, "x", "w"))
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Value("y").String())
		})
	}
}

func TestInferPool(t *testing.T) {
	f := graph.Float32
	for _, tc := range []struct {
		name, op string
		x        graph.ValueSpec
		at       graph.Attributes
		want     string
	}{
		{"resnet stem", "MaxPool", vs("x", f, "n", 64, 112, 112), attrs("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}), "y float32[n, 64, 56, 56]"},
		{"ceil_mode", "MaxPool", vs("x", f, 1, 2, 6, 7), attrs("kernel_shape", []int64{3, 3}, "strides", []int64{2, 2}, "ceil_mode", 1), "y float32[1, 2, 3, 3]"},
		{"ceil_mode window in the padding dropped", "MaxPool", vs("x", f, 1, 2, 5, 5), attrs("kernel_shape", []int64{2, 2}, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}, "ceil_mode", 1), "y float32[1, 2, 3, 3]"},
		{"average 1-D", "AveragePool", vs("x", f, 1, 2, "t"), attrs("kernel_shape", []int64{2}, "strides", []int64{2}), "y float32[1, 2, floordiv(t - 2, 2) + 1]"},
		{"global", "GlobalAveragePool", vs("x", f, "n", 512, "h", "w"), attrs(), "y float32[n, 512, 1, 1]"},
		{"global max", "GlobalMaxPool", vs("x", f, 2, 3, 4), attrs(), "y float32[2, 3, 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(oneNode(tc.op, tc.at, nil, []graph.ValueSpec{tc.x}, "x"))
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Value("y").String())
		})
	}
	_, err := graph.Build(oneNode("MaxPool", attrs(), nil, []graph.ValueSpec{vs("x", f, 1, 2, 5, 5)}, "x"))
	require.ErrorContains(t, err, "attribute kernel_shape is required")
}

func TestInferNormsPadResize(t *testing.T) {
	f := graph.Float32
	x := vs("x", f, "n", 3, "h", 8)
	for _, tc := range []struct {
		name, op string
		inits    []*graph.Tensor
		inputs   []graph.ValueSpec
		names    []string
		at       graph.Attributes
		want     string
	}{
		{"batchnorm", "BatchNormalization", nil, []graph.ValueSpec{x, vs("s", f, 3), vs("b", f, 3), vs("m", f, 3), vs("v", f, 3)}, []string{"x", "s", "b", "m", "v"}, attrs(), "y float32[n, 3, h, 8]"},
		{"instancenorm", "InstanceNormalization", nil, []graph.ValueSpec{x, vs("s", f, 3), vs("b", f, 3)}, []string{"x", "s", "b"}, attrs(), "y float32[n, 3, h, 8]"},
		{"pad", "Pad", []*graph.Tensor{i64Tensor(t, "p", 0, 0, 1, 2, 0, 0, 3, 4)}, []graph.ValueSpec{x}, []string{"x", "p"}, attrs(), "y float32[n, 3, h + 4, 14]"},
		{"pad axes", "Pad", []*graph.Tensor{i64Tensor(t, "p", 1, -2), i64Tensor(t, "a", -1)}, []graph.ValueSpec{x}, []string{"x", "p", "", "a"}, attrs(), "y float32[n, 3, h, 7]"},
		{"resize scales", "Resize", []*graph.Tensor{f32Tensor(t, "s", 1, 1, 2, 1.5)}, []graph.ValueSpec{x}, []string{"x", "", "s"}, attrs(), "y float32[n, 3, 2*h, 12]"},
		{"resize sizes", "Resize", []*graph.Tensor{i64Tensor(t, "z", 1, 3, 5, 17)}, []graph.ValueSpec{x}, []string{"x", "", "", "z"}, attrs(), "y float32[1, 3, 5, 17]"},
		{"resize sizes axes", "Resize", []*graph.Tensor{i64Tensor(t, "z", 5, 17)}, []graph.ValueSpec{x}, []string{"x", "", "", "z"}, attrs("axes", []int64{2, 3}), "y float32[n, 3, 5, 17]"},
		{"upsample", "Upsample", []*graph.Tensor{f32Tensor(t, "s", 1, 1, 2, 2)}, []graph.ValueSpec{x}, []string{"x", "s"}, attrs(), "y float32[n, 3, 2*h, 16]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Build(oneNode(tc.op, tc.at, tc.inits, tc.inputs, tc.names...))
			require.NoError(t, err)
			require.Equal(t, tc.want, m.Value("y").String())
		})
	}
	_, err := graph.Build(oneNode("Resize", attrs(), []*graph.Tensor{f32Tensor(t, "s", 1, 1, 1.5, 1)}, []graph.ValueSpec{x}, "x", "", "s"))
	require.ErrorContains(t, err, "want a whole scale or sizes")
	_, err = graph.Build(oneNode("Pad", attrs(), []*graph.Tensor{i64Tensor(t, "p", 1, 2)}, []graph.ValueSpec{x}, "x", "p"))
	require.ErrorContains(t, err, "pads has 2 values, want 8")
}
