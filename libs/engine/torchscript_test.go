package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// TorchScript exports (what optimum writes, most ONNX files on the Hugging Face hub) differ from
// dynamo's in what a discrete device must hold besides weights and inputs: Constant nodes in all
// their attribute forms, initializers reached through Identity (tied weights), and shape
// subgraphs (Shape -> Gather -> Range, ConstantOfShape) whose host-computed results kernels read
// as data. The models here are those patterns at their smallest; each runs on the simulated
// device, eager and captured, and must give the CPU's bytes.

// tsTensor is a tensor attribute.
func tsTensor(name string, dt graph.DType, shape []int64, data []byte) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrTensor, Tensor: &graph.HostTensor{DType: dt, Shape: shape, Data: data}}
}

func tsFloats(vs ...float32) []byte {
	b := make([]byte, 0, 4*len(vs))
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

func tsConst(out string, a ...graph.Attribute) graph.NodeSpec {
	return graph.NodeSpec{Name: out, OpType: "Constant", Outputs: []string{out}, Attrs: graph.NewAttributes(a...)}
}

func tsNode(op string, in []string, out string, a ...graph.Attribute) graph.NodeSpec {
	return graph.NodeSpec{Name: out, OpType: op, Inputs: in, Outputs: []string{out}, Attrs: graph.NewAttributes(a...)}
}

func tsInt(name string, v int64) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrInt, Int: v}
}

func tsInts(name string, vs ...int64) graph.Attribute {
	return graph.Attribute{Name: name, Kind: graph.AttrInts, Ints: vs}
}

// x is the float input of every model: [batch, seq, 4].
var tsX = graph.ValueSpec{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("batch"), graph.Sym("seq"), graph.Const(4)}}

func tsBuild(t *testing.T, s graph.Spec) *graph.Model {
	t.Helper()
	s.Opsets = map[string]int64{"": 17}
	m, err := graph.Build(s)
	require.NoError(t, err)
	return m
}

func tsWeight(t *testing.T, name string, dt graph.DType, shape []int64, data []byte) *graph.Tensor {
	t.Helper()
	w, err := graph.NewTensor(name, dt, shape, data)
	require.NoError(t, err)
	return w
}

// tsConstants: Constant nodes of every dense form (value, value_float, value_floats, value_int,
// value_ints) read by kernels as data, directly and through views, and as a graph output.
func tsConstants(t *testing.T) *graph.Model {
	return tsBuild(t, graph.Spec{
		Inputs: []graph.ValueSpec{tsX},
		Nodes: []graph.NodeSpec{
			tsConst("c_value", tsTensor("value", graph.Float32, []int64{4}, tsFloats(0.5, 1, 2, -3))),
			tsConst("c_float", graph.Attribute{Name: "value_float", Kind: graph.AttrFloat, Float: 0.25}),
			tsConst("c_floats", graph.Attribute{Name: "value_floats", Kind: graph.AttrFloats, Floats: []float32{1, 2, 3, 4}}),
			tsConst("c_square", tsTensor("value", graph.Float32, []int64{2, 2}, tsFloats(-1, 7, 0.125, 3))),
			tsConst("c_shape", tsInts("value_ints", 4)),
			tsNode("Add", []string{"x", "c_value"}, "a"),
			tsNode("Mul", []string{"a", "c_float"}, "b"),
			tsNode("Add", []string{"b", "c_floats"}, "c"),
			// A view of a constant: its bytes are the constant's.
			tsNode("Reshape", []string{"c_square", "c_shape"}, "c_flat"),
			tsNode("Sub", []string{"c", "c_flat"}, "d"),
			tsNode("Identity", []string{"c_value"}, "c_same"),
			tsNode("Div", []string{"d", "c_same"}, "y"),
			// Slice's starts, ends and axes are Constants, as TorchScript writes them.
			tsConst("s_start", tsInts("value_ints", 1)),
			tsConst("s_end", tsInts("value_ints", 3)),
			tsConst("s_axis", graph.Attribute{Name: "value_int", Kind: graph.AttrInt, Int: -1}),
			tsNode("Unsqueeze", []string{"s_axis", "s_zero"}, "s_axes"),
			tsConst("s_zero", tsInts("value_ints", 0)),
			tsNode("Slice", []string{"y", "s_start", "s_end", "s_axes"}, "sliced"),
		},
		Outputs: []string{"y", "sliced", "c_floats"},
	})
}

// tsIntConstants: a Constant of value_ints and one of value_int added to an integer input, as
// position offsets are.
func tsIntConstants(t *testing.T) *graph.Model {
	return tsBuild(t, graph.Spec{
		Inputs: []graph.ValueSpec{{Name: "ids", DType: graph.Int64, Shape: graph.Shape{graph.Sym("batch"), graph.Sym("seq"), graph.Const(3)}}},
		Nodes: []graph.NodeSpec{
			tsConst("offs", tsInts("value_ints", 10, -20, 30)),
			tsConst("one", tsInt("value_int", 1)),
			tsNode("Add", []string{"ids", "offs"}, "shifted"),
			tsNode("Add", []string{"shifted", "one"}, "y"),
		},
		Outputs: []string{"y"},
	})
}

// tsTiedWeights: initializers reached through Identity (how TorchScript writes tied weights),
// read by MatMul and Add, and a small integer initializer through Identity read by a Gather.
func tsTiedWeights(t *testing.T) *graph.Model {
	w := tsWeight(t, "w", graph.Float32, []int64{4, 4}, tsFloats(1, 2, 3, 4, -1, -2, -3, -4, 0.5, 0.25, 0.125, 2, 9, 8, 7, 6))
	bias := tsWeight(t, "bias", graph.Float32, []int64{4}, tsFloats(0.1, 0.2, 0.3, 0.4))
	idx := tsWeight(t, "idx", graph.Int64, []int64{4}, kernels.BytesOf([]int64{3, 2, 1, 0}))
	return tsBuild(t, graph.Spec{
		Inputs:       []graph.ValueSpec{tsX},
		Initializers: []*graph.Tensor{w, bias, idx},
		Nodes: []graph.NodeSpec{
			tsNode("Identity", []string{"w"}, "w_tied"),
			tsNode("Identity", []string{"w_tied"}, "w_tied2"),
			tsNode("Identity", []string{"bias"}, "bias_tied"),
			tsNode("Identity", []string{"idx"}, "idx_tied"),
			tsNode("MatMul", []string{"x", "w_tied"}, "h"),
			tsNode("Add", []string{"h", "bias_tied"}, "hb"),
			tsNode("MatMul", []string{"hb", "w_tied2"}, "h2"),
			tsNode("Gather", []string{"h2", "idx_tied"}, "y", tsInt("axis", 2)),
		},
		Outputs: []string{"y"},
	})
}

// tsShapeData: shape subgraphs whose host-computed results kernels read as data, so they differ
// per binding: position ids Range(0, seq) from Shape(x) gathered from a table and added, and a
// ConstantOfShape of Concat(batch, seq, 4) cast to float and added.
func tsShapeData(t *testing.T) *graph.Model {
	table := make([]float32, 16*4)
	for i := range table {
		table[i] = float32(i)*0.5 - 3
	}
	pe := tsWeight(t, "pos_table", graph.Float32, []int64{16, 4}, tsFloats(table...))
	return tsBuild(t, graph.Spec{
		Inputs:       []graph.ValueSpec{tsX},
		Initializers: []*graph.Tensor{pe},
		Nodes: []graph.NodeSpec{
			tsNode("Shape", []string{"x"}, "shape"),
			tsConst("i0", tsInt("value_int", 0)),
			tsConst("i1", tsInt("value_int", 1)),
			tsNode("Gather", []string{"shape", "i0"}, "batch", tsInt("axis", 0)),
			tsNode("Gather", []string{"shape", "i1"}, "seq", tsInt("axis", 0)),
			tsConst("zero", tsInt("value_int", 0)),
			tsConst("step", tsInt("value_int", 1)),
			tsNode("Range", []string{"zero", "seq", "step"}, "pos"),
			tsNode("Gather", []string{"pos_table", "pos"}, "pos_emb", tsInt("axis", 0)),
			tsNode("Add", []string{"x", "pos_emb"}, "xp"),
			// The position ids themselves, as data: Cast (a kernel) reads them.
			tsNode("Cast", []string{"pos"}, "pos_f", tsInt("to", int64(graph.Float32))),
			tsNode("Unsqueeze", []string{"pos_f", "ax1"}, "pos_col"),
			tsConst("ax1", tsInts("value_ints", 1)),
			tsNode("Add", []string{"xp", "pos_col"}, "xq"),
			tsConst("ax0", tsInts("value_ints", 0)),
			tsConst("four", tsInts("value_ints", 4)),
			tsNode("Unsqueeze", []string{"batch", "ax0"}, "batch1"),
			tsNode("Unsqueeze", []string{"seq", "ax0"}, "seq1"),
			tsNode("Concat", []string{"batch1", "seq1", "four"}, "full", tsInt("axis", 0)),
			tsNode("ConstantOfShape", []string{"full"}, "ones", tsTensor("value", graph.Int64, []int64{1}, kernels.BytesOf([]int64{2}))),
			tsNode("Cast", []string{"ones"}, "ones_f", tsInt("to", int64(graph.Float32))),
			tsNode("Add", []string{"xq", "ones_f"}, "y"),
		},
		Outputs: []string{"y", "pos"},
	})
}

// requireSimMatchesCPU runs m on the simulated device against the CPU, byte for byte.
func requireSimMatchesCPU(t *testing.T, m *graph.Model, env Envelope, bindings ...Binding) {
	t.Helper()
	open := func(t *testing.T) (kernels.Backend, *alloc.Allocator) { return newSim(t, 1<<26) }
	requireDeviceMatchesCPU(t, m, env, open, func(_ graph.DType, want, got []byte) bool { return bytes.Equal(want, got) }, bindings...)
}

// requireDeviceMatchesCPU runs m on the CPU and on a discrete device that open opens, eager and
// with graphs, at each binding (twice, and the first again after the others, so that a program's
// host-computed values are copied in again when it comes back): same reports whether an output's
// bytes agree, and a second run of a pattern allocates no device memory.
func requireDeviceMatchesCPU(t *testing.T, m *graph.Model, env Envelope, open func(*testing.T) (kernels.Backend, *alloc.Allocator),
	same func(dt graph.DType, want, got []byte) bool, bindings ...Binding) {
	t.Helper()
	ctx := context.Background()
	cb, cal := newCPU(t, 1<<26)
	_, cs := newSession(t, m, cb, cal, RuntimeOptions{Envelope: env})
	order := append(append([]Binding{}, bindings...), bindings[0])
	for _, graphs := range []bool{false, true} {
		be, al := open(t)
		_, ds := newSession(t, m, be, al, RuntimeOptions{Envelope: env, Graphs: graphs})
		for _, dims := range order {
			in := tsInputs(t, m, dims)
			want, err := cs.Run(ctx, in)
			require.NoError(t, err, "cpu at %v", dims)
			var mallocs int64
			for rep := 0; rep < 2; rep++ {
				got, err := ds.Run(ctx, in)
				require.NoError(t, err, "%s (graphs %v) at %v", be.Name(), graphs, dims)
				require.Len(t, got, len(want))
				for i := range want {
					require.Equal(t, want[i].Shape, got[i].Shape, "%s at %v", m.Outputs[i].Name, dims)
					require.True(t, same(want[i].DType, want[i].Data, got[i].Data), "%s at %v (graphs %v): %s and cpu differ",
						m.Outputs[i].Name, dims, graphs, be.Name())
				}
				if rep == 0 {
					mallocs = deviceMallocs(be)
				} else {
					require.Equal(t, mallocs, deviceMallocs(be), "a second run at %v allocated (graphs %v)", dims, graphs)
				}
			}
		}
	}
}

// tsInputs fills m's inputs at dims with distinct small values.
func tsInputs(t *testing.T, m *graph.Model, dims Binding) map[string]kernels.Tensor {
	t.Helper()
	in := zeroInputs(t, m, dims)
	for name, tn := range in {
		switch tn.DType {
		case graph.Float32:
			vs := tn.Float32s()
			for i := range vs {
				vs[i] = float32(i%13)*0.75 - 2
			}
		case graph.Int64:
			vs := kernels.ViewAs[int64](tn.Data)
			for i := range vs {
				vs[i] = int64(i % 7)
			}
		default:
			t.Fatalf("input %q: no filler for %s", name, tn.DType)
		}
	}
	return in
}

// tsModels are the TorchScript patterns, by test name.
var tsModels = []struct {
	name  string
	build func(*testing.T) *graph.Model
}{{"constants", tsConstants}, {"int constants", tsIntConstants}, {"tied weights", tsTiedWeights}, {"shape data", tsShapeData}}

var tsEnv = Envelope{"batch": {Lo: 1, Hi: 2}, "seq": {Lo: 1, Hi: 8}}

var tsBindings = []Binding{{"batch": 2, "seq": 5}, {"batch": 1, "seq": 3}, {"batch": 2, "seq": 8}}

// TestTorchScriptPatternsOnSim: each pattern on the simulated device gives the CPU's bytes.
func TestTorchScriptPatternsOnSim(t *testing.T) {
	for _, tm := range tsModels {
		t.Run(tm.name, func(t *testing.T) {
			requireSimMatchesCPU(t, tm.build(t), tsEnv, tsBindings...)
		})
	}
}

// TestConstantsAreResident: on a discrete device a model's Constants are uploaded once at load,
// beside the weights (a model without initializers still has a resident block), counted by the
// estimator as the runtime reserves them; on the CPU nothing is uploaded.
func TestConstantsAreResident(t *testing.T) {
	m := tsIntConstants(t)
	require.Empty(t, m.Initializers)
	ep, err := PlanEnvelope(context.Background(), m, tsEnv, Options{Target: kernels.Target{Backend: kernels.BackendSim, Workers: 2}})
	require.NoError(t, err)
	require.Positive(t, ep.DeviceWeightBytes, "the constants take device bytes")
	sb, sal := newSim(t, 1<<26)
	rt, _ := newSession(t, m, sb, sal, RuntimeOptions{Envelope: tsEnv})
	require.Equal(t, ep.DeviceWeightBytes, rt.Reserve.DeviceWeightBytes)
	require.Equal(t, int64(2), sb.Counters().Uploads, "one upload per constant, at load")
	for _, name := range []string{"offs", "one"} {
		require.NotZero(t, rt.weights[m.Value(name).ID].ptr, name)
	}
	cep, err := PlanEnvelope(context.Background(), m, tsEnv, Options{Workers: 2})
	require.NoError(t, err)
	require.Zero(t, cep.DeviceWeightBytes)
}

// TestDeviceReadsAreCheckedAtLoad: a value a kernel reads that would have no device bytes is an
// error of the load, naming the node and the value, not of a session's first run. The check is
// given a layout that left the constants out, as a bookkeeping bug would.
func TestDeviceReadsAreCheckedAtLoad(t *testing.T) {
	m := tsConstants(t)
	sb, sal := newSim(t, 1<<26)
	rt, _ := newSession(t, m, sb, sal, RuntimeOptions{Envelope: tsEnv})
	offsets, _, err := deviceWeightLayout(m)
	require.NoError(t, err)
	require.NoError(t, rt.checkDeviceReads(rt.Reserve.Worst, offsets))
	for i := range offsets {
		offsets[i] = -1
	}
	err = rt.checkDeviceReads(rt.Reserve.Worst, offsets)
	var dr *DeviceReadError
	require.ErrorAs(t, err, &dr)
	require.Equal(t, "c_value", dr.Value.Name)
	require.Equal(t, "a", dr.Node.Name)
	require.EqualError(t, err, `engine: node 5 "a" (Add): value "c_value" (constant) has no bytes on device sim (a kernel reads it, but it is neither resident nor planned)`)
	// A view names its source.
	require.Contains(t, (&DeviceReadError{Value: m.Value("c_same"), Root: m.Value("c_value"), Device: "sim", Output: true}).Error(),
		`graph output: value "c_same", a view of "c_value" (constant)`)
}
