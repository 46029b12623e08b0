package engine

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// clipModel has Clip in the forms exporters write (opset 13 on): constant bounds of shape []
// and [1], either omitted or empty-named, a bound the model computes at run time (a tenth of
// the sequence length, as a float), and a clamp of relative positions as DeBERTa-v2 has: int64
// positions built from the sequence length, shifted and clipped to [0, 3].
func clipModel(t *testing.T) *graph.Model {
	t.Helper()
	init := func(name string, dt graph.DType, shape []int64, data []byte) *graph.Tensor {
		w, err := graph.NewTensor(name, dt, shape, data)
		require.NoError(t, err)
		return w
	}
	node := func(op string, ins []string, out string, attrs ...graph.Attribute) graph.NodeSpec {
		return graph.NodeSpec{Name: out, OpType: op, Inputs: ins, Outputs: []string{out}, Attrs: graph.NewAttributes(attrs...)}
	}
	m, err := graph.Build(graph.Spec{
		Inputs: []graph.ValueSpec{{Name: "x", DType: graph.Float32, Shape: graph.Shape{graph.Sym("batch"), graph.Sym("seq")}}},
		Initializers: []*graph.Tensor{
			init("lo", graph.Float32, nil, kernels.BytesOf([]float32{-0.5})),
			init("hi", graph.Float32, []int64{1}, kernels.BytesOf([]float32{0.5})),
			init("one", graph.Int64, nil, kernels.BytesOf([]int64{1})),
			init("zero", graph.Int64, nil, kernels.BytesOf([]int64{0})),
			init("top", graph.Int64, []int64{1}, kernels.BytesOf([]int64{3})),
			init("tenth", graph.Float32, nil, kernels.BytesOf([]float32{0.1})),
		},
		Nodes: []graph.NodeSpec{
			node("Clip", []string{"x", "lo", "hi"}, "both"),
			node("Clip", []string{"x", "", "hi"}, "max_only"),
			node("Clip", []string{"x", "lo"}, "min_only"),
			node("Clip", []string{"x", "", ""}, "neither"),
			node("Shape", []string{"x"}, "shape"),
			node("Gather", []string{"shape", "one"}, "len"),
			node("Cast", []string{"len"}, "len_f", graph.Attribute{Name: "to", Kind: graph.AttrInt, Int: int64(graph.Float32)}),
			node("Mul", []string{"len_f", "tenth"}, "bound"),
			node("Clip", []string{"x", "", "bound"}, "runtime_max"),
			node("Range", []string{"zero", "len", "one"}, "pos"),
			node("Sub", []string{"pos", "top"}, "rel"),
			node("Clip", []string{"rel", "zero", "top"}, "buckets"),
		},
		Outputs: []string{"both", "max_only", "min_only", "neither", "runtime_max", "buckets"},
		Opsets:  map[string]int64{"": 18},
	})
	require.NoError(t, err)
	return m
}

// TestClipModel runs clipModel on the CPU and on the simulated device: the outputs are
// min(max(x, min), max) and the same bytes on both.
func TestClipModel(t *testing.T) {
	m := clipModel(t)
	const batch, seq = 3, 7
	x := kernels.MustTensor(graph.Float32, batch, seq)
	xs := x.Float32s()
	for i := range xs {
		xs[i] = float32(i%9)/4 - 1 // -1 to 1 in steps of 1/4
	}
	xs[5], xs[6] = float32(math.NaN()), float32(math.Inf(-1))
	clip := func(v float32, lo, hi float64) float32 {
		return float32(math.Min(math.Max(float64(v), lo), hi))
	}
	inf := math.Inf(1)
	want := map[string]func(v float32) float32{
		"both":     func(v float32) float32 { return clip(v, -0.5, 0.5) },
		"max_only": func(v float32) float32 { return clip(v, -inf, 0.5) },
		"min_only": func(v float32) float32 { return clip(v, -0.5, inf) },
		"neither":  func(v float32) float32 { return v },
		"runtime_max": func(v float32) float32 { // seq * 0.1 in float32
			return float32(math.Min(float64(v), float64(float32(seq)*float32(0.1))))
		},
	}
	var cpuOut []kernels.Tensor
	for _, kind := range []string{kernels.BackendCPU, kernels.BackendSim} {
		be, al := newHostBackend(t, kind, 1<<24)
		env := Envelope{"batch": {Lo: 1, Hi: 4}, "seq": {Lo: 1, Hi: 16}}
		_, s := newSession(t, m, be, al, RuntimeOptions{Envelope: env})
		out, err := s.Run(context.Background(), map[string]kernels.Tensor{"x": x})
		require.NoError(t, err, kind)
		for i, v := range m.Outputs {
			f, ok := want[v.Name]
			if !ok {
				continue
			}
			got := out[i].Float32s()
			for j, xv := range xs {
				w := f(xv)
				if math.IsNaN(float64(w)) {
					require.True(t, math.IsNaN(float64(got[j])), "%s %s[%d]: NaN stays NaN", kind, v.Name, j)
					continue
				}
				require.Equal(t, w, got[j], "%s %s[%d] of %v", kind, v.Name, j, xv)
			}
		}
		require.Equal(t, []int64{0, 0, 0, 0, 1, 2, 3}, out[5].Int64s(), "%s: positions -3..3 clipped to [0, 3]", kind)
		if kind == kernels.BackendCPU {
			cpuOut = out
			continue
		}
		for i := range out {
			require.True(t, bytes.Equal(cpuOut[i].Data, out[i].Data), "%s differs between cpu and sim", m.Outputs[i].Name)
		}
	}
}
