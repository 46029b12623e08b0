package graph_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	pb "carve.dev/libs/graph/internal/onnxpb"
)

// TestClip: Clip (opset 13) takes either bound, both or neither, as omitted trailing inputs or
// empty names; its output has the input's type and shape, and integer host data is clipped.
func TestClip(t *testing.T) {
	i32 := int32(pb.TensorProto_INT32)
	base := func() *mb {
		return newModel().input("x", f32, "batch", 4).input("n", i32, "len").
			initFloat("lo", nil, -1).initFloat("hi", []int64{1}, 2).
			initRaw("ilo", i32, nil, []byte{3, 0, 0, 0}).input("ihi", i32)
	}
	for _, tc := range []struct {
		name string
		ins  []string
		dt   graph.DType
	}{
		{"both", []string{"x", "lo", "hi"}, graph.Float32},
		{"min only", []string{"x", "lo"}, graph.Float32},
		{"max only", []string{"x", "", "hi"}, graph.Float32},
		{"neither", []string{"x"}, graph.Float32},
		{"neither, empty names", []string{"x", "", ""}, graph.Float32},
		{"int both", []string{"n", "ilo", "ihi"}, graph.Int32},
		{"int max at run time only", []string{"n", "", "ihi"}, graph.Int32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Parse(base().node("Clip", tc.ins, []string{"y"}).output("y").bytes(t), "")
			require.NoError(t, err)
			y := m.Value("y")
			require.Equal(t, tc.dt, y.DType)
			require.Equal(t, m.Value(tc.ins[0]).Shape, y.Shape)
			require.False(t, y.Host, "runtime input: nothing to evaluate on the host")
			b, err := graph.Bind(m, map[string]int64{"batch": 3, "len": 5})
			require.NoError(t, err)
			require.Equal(t, b.Shape(m.Value(tc.ins[0])), b.Shape(y))
		})
	}

	for _, tc := range []struct {
		name string
		m    *mb
		want string
	}{
		{"float bound of an int input", base().node("Clip", []string{"n", "lo"}, []string{"y"}), `Clip min (input 1, "lo") is float32, want the input's int32`},
		{"int bound of a float input", base().node("Clip", []string{"x", "", "ihi"}, []string{"y"}), `Clip max (input 2, "ihi") is int32, want the input's float32`},
		{"vector bound", base().initFloat("v", []int64{2}, 0, 1).node("Clip", []string{"x", "v"}, []string{"y"}), "elements of Clip min (input 1), a scalar: 2 != 1"},
		{"matrix bound", base().initFloat("v", []int64{1, 1}, 0).node("Clip", []string{"x", "", "v"}, []string{"y"}), `Clip max (input 2, "v") has shape [1, 1], want a scalar`},
		{"four inputs", base().node("Clip", []string{"x", "lo", "hi", "hi"}, []string{"y"}), "Clip takes at most 3 inputs, has 4"},
		{"bool", newModel().input("c", int32(pb.TensorProto_BOOL), 2).node("Clip", []string{"c"}, []string{"y"}), "Clip of bool: the input must be numeric"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := graph.Parse(tc.m.output("y").bytes(t), "")
			var me *graph.ModelError
			require.True(t, errors.As(err, &me), "typed error, got %v", err)
			require.Contains(t, me.Problem, tc.want)
		})
	}

	// A bound of a symbolic length is checked at Bind.
	m, err := graph.Parse(newModel().input("x", f32, 4).input("v", f32, "k").
		node("Clip", []string{"x", "v"}, []string{"y"}).output("y").bytes(t), "")
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"k": 1})
	require.NoError(t, err)
	_, err = graph.Bind(m, map[string]int64{"k": 2})
	require.ErrorContains(t, err, "elements of Clip min (input 1), a scalar")
}

// TestClipHostData: Clip of a shape (DeBERTa's relative positions clamp index arithmetic of
// this kind) evaluates on the host: min(max(x, min), max), so a min above the max gives the max.
func TestClipHostData(t *testing.T) {
	for _, tc := range []struct {
		name string
		ins  []string
		want []int64
	}{
		{"both", []string{"s", "three", "eight"}, []int64{3, 8, 4}},
		{"min only", []string{"s", "three"}, []int64{3, 20, 4}},
		{"max only", []string{"s", "", "eight"}, []int64{2, 8, 4}},
		{"neither", []string{"s", "", ""}, []int64{2, 20, 4}},
		{"min above max", []string{"s", "eight", "three"}, []int64{3, 3, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := graph.Parse(newModel().input("x", f32, "batch", "seq", 4).
				initInt64("three", nil, 3).initInt64("eight", nil, 8).
				node("Shape", []string{"x"}, []string{"s"}).
				node("Clip", tc.ins, []string{"y"}).output("y").bytes(t), "")
			require.NoError(t, err)
			y := m.Value("y")
			require.Equal(t, graph.Int64, y.DType)
			require.True(t, y.Host)
			b, err := graph.Bind(m, map[string]int64{"batch": 2, "seq": 20})
			require.NoError(t, err)
			require.Equal(t, tc.want, hostInts(t, b, y))
		})
	}
}

// TestBroadcastSlicedTable: a table of k rows sliced to the sequence ([0:seq], min(seq, k)
// rows) and added to a [batch, seq, .] input, as position embeddings are, broadcasts to
// [batch, seq, .], not to broadcast(seq, min(seq, k)), so that the shapes downstream fold (a
// Reshape's -1 to a constant head size); Bind still refuses a sequence longer than the table.
func TestBroadcastSlicedTable(t *testing.T) {
	m, err := graph.Parse(newModel().input("x", f32, "batch", "seq", 4).initFloat("pos", []int64{6, 4}, make([]float32, 24)...).
		initInt64("zero", []int64{1}, 0).initInt64("shape", []int64{4}, 0, 0, 2, 2).
		node("Shape", []string{"x"}, []string{"len"}, attrInt("start", 1), attrInt("end", 2)).
		node("Slice", []string{"pos", "zero", "len", "zero"}, []string{"rows"}).
		node("Add", []string{"x", "rows"}, []string{"y"}).
		node("Reshape", []string{"y", "shape"}, []string{"z"}).output("z").bytes(t), "")
	require.NoError(t, err)
	require.Equal(t, "[min(seq, 6), 4]", m.Value("rows").Shape.String())
	require.Equal(t, "[batch, seq, 4]", m.Value("y").Shape.String())
	require.Equal(t, "[batch, seq, 2, 2]", m.Value("z").Shape.String())
	for _, seq := range []int64{1, 5, 6} {
		b, err := graph.Bind(m, map[string]int64{"batch": 2, "seq": seq})
		require.NoError(t, err)
		require.Equal(t, []int64{2, seq, 4}, b.Shape(m.Value("y")))
	}
	_, err = graph.Bind(m, map[string]int64{"batch": 2, "seq": 7})
	require.ErrorContains(t, err, "broadcast")
}
