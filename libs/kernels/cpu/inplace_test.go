package cpu

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// requireInPlace checks n's in-place contract: the pairs declared are want, and run with each
// pair's output given its input's bytes, the kernel writes what it writes with distinct buffers,
// on 1, 2 and 4 workers.
func requireInPlace(t *testing.T, n *kernels.Node, want []kernels.InPlace, in ...kernels.Tensor) {
	t.Helper()
	for _, workers := range []int{1, 2, 4} {
		d := kernels.Target{Backend: kernels.BackendCPU, Workers: workers}
		inst, err := registry.Select(n, d)
		require.NoError(t, err)
		require.Equal(t, want, kernels.InPlaceOf(inst), "workers %d", workers)
		size, _ := inst.Recipe().Size()
		reg, keep := region(size)
		execute := func(in []kernels.Tensor, out []kernels.Tensor) {
			require.NoError(t, kernels.Execute(inst, in, out, reg, 0))
		}
		outs := func() []kernels.Tensor {
			out := make([]kernels.Tensor, len(n.Outputs))
			for i, v := range n.Outputs {
				out[i] = kernels.MustTensor(v.DType, v.Shape...)
			}
			return out
		}
		distinct := outs()
		execute(in, distinct)
		for _, p := range want {
			aliased := append([]kernels.Tensor(nil), in...)
			aliased[p.Input].Data = bytes.Clone(in[p.Input].Data)
			out := outs()
			out[p.Output] = kernels.Tensor{DType: out[p.Output].DType, Shape: out[p.Output].Shape, Data: aliased[p.Input].Data}
			execute(aliased, out)
			require.Equal(t, distinct[p.Output].Data, out[p.Output].Data, "output %d in place of input %d, workers %d (%s)", p.Output, p.Input, workers, inst.Tactic())
		}
		_ = keep[0]
	}
}

// TestElementwiseInPlace: binary ops declare each operand of the output's shape and type, not a
// broadcast one; unary ops and Clip their input; outputs of another type nothing.
func TestElementwiseInPlace(t *testing.T) {
	r := rng(t, 28)
	big := []int64{3, 5, 4099} // past the parallel grain, uneven runs
	a, b, row := randF32(r, big...), randF32(r, big...), randF32(r, 1, 1, 4099)
	out := kernels.Value{DType: graph.Float32, Shape: big}
	both := []kernels.InPlace{{Output: 0, Input: 0}, {Output: 0, Input: 1}}
	first := []kernels.InPlace{{Output: 0, Input: 0}}
	for _, op := range []string{"Add", "Sub", "Mul", "Div"} {
		t.Run(op, func(t *testing.T) {
			requireInPlace(t, node(op, graph.Attributes{}, []kernels.Tensor{a, b}, out), both, a, b)
			requireInPlace(t, node(op, graph.Attributes{}, []kernels.Tensor{a, row}, out), first, a, row)
			requireInPlace(t, node(op, graph.Attributes{}, []kernels.Tensor{row, a}, out), []kernels.InPlace{{Output: 0, Input: 1}}, row, a)
		})
	}
	t.Run("Less", func(t *testing.T) {
		requireInPlace(t, node("Less", graph.Attributes{}, []kernels.Tensor{a, b}, kernels.Value{DType: graph.Bool, Shape: big}), nil, a, b)
	})
	for _, op := range []string{"Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Sqrt", "HardSwish", "HardSigmoid", "Erf", "Gelu"} {
		t.Run(op, func(t *testing.T) {
			requireInPlace(t, node(op, graph.Attributes{}, []kernels.Tensor{a}, out), first, a)
		})
	}
	t.Run("Clip", func(t *testing.T) {
		lo, hi := f32(nil, []float32{-0.5}), f32(nil, []float32{0.5})
		requireInPlace(t, node("Clip", graph.Attributes{}, []kernels.Tensor{a, lo, hi}, out), first, a, lo, hi)
	})
}

// TestFusedConvInPlace: FusedConv's Z in place of Y on the gemm tactics; the depthwise loop,
// which adds Z after writing the row, declares nothing.
func TestFusedConvInPlace(t *testing.T) {
	r := rng(t, 29)
	for _, c := range convCases {
		t.Run(fmt.Sprint(c), func(t *testing.T) {
			n, yshape := c.node(true)
			n.Domain, n.Op = kernels.DomainMicrosoft, "FusedConv"
			n.Attrs = withAttr(n.Attrs, graph.Attribute{Name: "activation", Kind: graph.AttrString, String: "Relu"})
			in := []kernels.Tensor{randF32(r, c.x...), randF32(r, c.w...), randF32(r, c.w[0]), randF32(r, yshape...)}
			n.Inputs = []kernels.Value{value(in[0]), value(in[1]), value(in[2]), value(in[3])}
			inst, err := registry.Select(n, dev)
			require.NoError(t, err)
			want := []kernels.InPlace{{Output: 0, Input: 3}}
			if inst.Tactic() == "depthwise" {
				want = nil
			}
			requireInPlace(t, n, want, in...)
		})
	}
}
