package rewrite

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// TestHostScalar: a one-element float computed from static dims and constants is known at
// load, whatever ops spell it; one that reads a symbolic dim, a graph input's data, a value
// computed on the device or an op the evaluator does not know is not, and the reason says
// which.
func TestHostScalar(t *testing.T) {
	f32 := []graph.Attribute{{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Float32)}}
	axis0 := []graph.Attribute{{Name: "axis", Kind: graph.AttrInt, Int: 0}}
	inits := []*graph.Tensor{
		int64Init("last", []int64{1}, -1), int64Init("end", []int64{1}, math.MaxInt64),
		int64Init("two", nil, 2), int64Init("one", nil, 1), int64Init("zero", nil, 0),
		float32Init("half", -0.5), float32Init("unit", 1),
	}
	nodes := []graph.NodeSpec{
		node("Shape", "shape", nil, "x"),
		node("Slice", "d", nil, "shape", "last", "end"), // [64]
		node("Cast", "df", f32, "d"),
		// TorchScript: Sqrt(1 / Sqrt(d))
		node("Sqrt", "sd", nil, "df"),
		node("Div", "inv", nil, "unit", "sd"),
		node("Sqrt", "torchscript", nil, "inv"),
		// Reciprocal(Sqrt(d)) and Pow(d, -0.5)
		node("Reciprocal", "reciprocal", nil, "sd"),
		node("Gather", "d2", axis0, "shape", "two"),
		node("Cast", "d2f", f32, "d2"),
		node("Pow", "pow", nil, "d2f", "half"),
		// the sequence length
		node("Gather", "seq", axis0, "shape", "one"),
		node("Cast", "seqf", f32, "seq"),
		node("Sqrt", "symbolic", nil, "seqf"),
		// the whole shape, then its last element: refused though the last dim is static
		node("Cast", "shapef", f32, "shape"),
		node("Gather", "lastf", axis0, "shapef", "two"),
		// a graph input's data, the device's values, an op the evaluator does not know
		node("Sqrt", "input", nil, "s"),
		node("Gather", "row", axis0, "x", "zero"),
		node("Gather", "col", axis0, "row", "zero"),
		node("Gather", "device", axis0, "col", "zero"),
		node("ReduceMean", "mean", []graph.Attribute{{Name: "keepdims", Kind: graph.AttrInt, Int: 0}}, "x"),
		node("Sqrt", "unknown", nil, "mean"),
	}
	outs := []string{"torchscript", "reciprocal", "pow", "symbolic", "lastf", "input", "device", "unknown"}
	m, err := graph.Build(graph.Spec{
		Inputs: []graph.ValueSpec{
			{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("batch"), graph.Sym("seq"), graph.Const(64)}},
			{Name: "s", DType: graph.Float32, Shape: graph.Shape{}},
		},
		Initializers: inits, Nodes: nodes, Outputs: outs, Opsets: map[string]int64{"": 18},
	})
	require.NoError(t, err)
	for name, want := range map[string]float64{
		"torchscript": float64(float32(math.Sqrt(float64(float32(1 / float32(8)))))),
		"reciprocal":  0.125,
		"pow":         0.125,
		"unit":        1,
	} {
		got, why := hostScalar(m, m.Value(name))
		require.Empty(t, why, name)
		require.Equal(t, want, got, name)
	}
	for name, want := range map[string]string{
		"symbolic": "seq = [seq] depends on the dim seq",
		"lastf":    "shape = [batch seq 64] depends on the dims batch, seq",
		"input":    "it reads the data of the input s",
		"device":   "it reads row float32[seq, 64], computed on the device",
		"unknown":  "it is computed by mean (ReduceMean), an op the evaluator does not know",
		"d":        "it is int64[1], not a one-element float",
		"x":        "it is float32[batch, seq, 64], not a one-element float",
	} {
		_, why := hostScalar(m, m.Value(name))
		require.Equal(t, want, why, name)
	}
}
