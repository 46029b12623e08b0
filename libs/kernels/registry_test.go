package kernels_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

func cpuRegistry(t *testing.T) *kernels.Registry {
	t.Helper()
	r := kernels.NewRegistry()
	require.NoError(t, cpu.Register(r))
	return r
}

func TestUnknownOpListsWhatIsSupported(t *testing.T) {
	r := cpuRegistry(t)
	n := &kernels.Node{Name: "lstm1", Op: "LSTM", Inputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{1}}}}
	_, err := r.Select(n, kernels.CPU(1))
	var u *kernels.UnsupportedOpError
	require.ErrorAs(t, err, &u)
	require.Equal(t, "lstm1", u.Node)
	require.Equal(t, kernels.OpKey{Op: "LSTM"}, u.Op)
	require.Contains(t, u.Supported, kernels.OpKey{Domain: kernels.DomainMicrosoft, Op: "GroupQueryAttention"})
	msg := err.Error()
	require.Contains(t, msg, `"lstm1"`)
	require.Contains(t, msg, "MatMul")
	require.Contains(t, msg, "com.microsoft.MatMulNBits")

	_, err = r.Bound(&kernels.NodeRange{Name: "x", Op: "Attention", Domain: "org.example"}, kernels.CPU(1)) // neither ai.onnx's nor com.microsoft's
	require.ErrorAs(t, err, &u)

	_, err = r.Lookup("cuda-sm90", kernels.OpKey{Op: "MatMul"})
	var ub *kernels.UnknownBackendError
	require.ErrorAs(t, err, &ub)
	require.Equal(t, []string{"cpu"}, ub.Known)
}

func TestRegistryListingAndDomains(t *testing.T) {
	r := cpuRegistry(t)
	require.Equal(t, []string{"cpu"}, r.Backends())
	ops := r.Ops("cpu")
	require.NotEmpty(t, ops)
	for i := 1; i < len(ops); i++ {
		a, b := ops[i-1].Op, ops[i].Op
		require.True(t, a.Domain < b.Domain || a.Domain == b.Domain && a.Op < b.Op, "listing not sorted at %v, %v", a, b)
	}
	var mm kernels.OpInfo
	for _, o := range ops {
		require.NotEmpty(t, o.Tactics, o.Op)
		if o.Op.Op == "MatMul" {
			mm = o
		}
	}
	var names []string
	for _, tac := range mm.Tactics {
		names = append(names, tac.Name)
	}
	require.Equal(t, []string{"gemm", "f16-convert", "naive"}, names)
	// "ai.onnx" is the default domain
	k, err := r.Lookup("cpu", kernels.Key("ai.onnx", "Add"))
	require.NoError(t, err)
	require.Equal(t, kernels.OpKey{Op: "Add"}, k.Op())
	require.Error(t, cpu.Register(r), "registering twice is an error")
}

func TestExecuteAndSizes(t *testing.T) {
	r := cpuRegistry(t)
	a := kernels.MustTensor(graph.Float32, 2, 2)
	copy(a.Float32s(), []float32{1, 2, 3, 4})
	n := &kernels.Node{Op: "Add", Inputs: []kernels.Value{{DType: graph.Float32, Shape: a.Shape}, {DType: graph.Float32, Shape: a.Shape}}, Outputs: []kernels.Value{{DType: graph.Float32, Shape: a.Shape}}}
	inst, err := r.Select(n, kernels.CPU(0))
	require.NoError(t, err)
	require.Equal(t, "direct", inst.Tactic())
	out := []kernels.Tensor{kernels.MustTensor(graph.Float32, 2, 2)}
	require.NoError(t, kernels.Execute(inst, []kernels.Tensor{a, a}, out, alloc.Region{}, 0))
	require.Equal(t, []float32{2, 4, 6, 8}, out[0].Float32s())
	// a run with the wrong shapes is refused
	bad := []kernels.Tensor{kernels.MustTensor(graph.Float32, 4)}
	var re *kernels.RunError
	require.ErrorAs(t, inst.Run([]kernels.Tensor{a, a}, bad, nil, 0), &re)

	_, err = kernels.Product(1<<40, 1<<40)
	var of *graph.OverflowError
	require.ErrorAs(t, err, &of)
	_, err = kernels.ByteSize(graph.Float32, []int64{1 << 62})
	require.True(t, errors.As(err, &of))
	_, err = kernels.AddSizes(1<<62, 1<<62)
	require.ErrorAs(t, err, &of)
	_, err = kernels.NewTensor(graph.String, 2)
	require.Error(t, err)
	// a node whose sizes overflow is rejected at Select, not at run time
	huge := &kernels.Node{Op: "Relu", Inputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{1 << 40, 1 << 30}}}, Outputs: []kernels.Value{{DType: graph.Float32, Shape: []int64{1 << 40, 1 << 30}}}}
	_, err = r.Select(huge, kernels.CPU(1))
	require.ErrorAs(t, err, &of)
}

func TestAttrs(t *testing.T) {
	ht := &graph.HostTensor{DType: graph.Int64, Shape: []int64{1}, Data: make([]byte, 8)}
	a := kernels.Attrs("i", 3, "f", 0.5, "s", "x", "is", []int64{1, 2}, "fs", []float32{1}, "t", ht, "ss", []string{"a"})
	require.Equal(t, int64(3), a.Int("i", 0))
	require.Equal(t, float32(0.5), a.Float("f", 0))
	require.Equal(t, "x", a.String("s", ""))
	require.Equal(t, []int64{1, 2}, a.Ints("is"))
	got, ok := a.Tensor("t")
	require.True(t, ok)
	require.Same(t, ht, got)
	//lint:ignore SA5012 the odd argument list is the point: Attrs must panic on it
	require.Panics(t, func() { kernels.Attrs("odd") })
	require.Panics(t, func() { kernels.Attrs("x", struct{}{}) })
	require.True(t, strings.HasPrefix(kernels.OpKey{Domain: "com.microsoft", Op: "X"}.String(), "com.microsoft."))
}
