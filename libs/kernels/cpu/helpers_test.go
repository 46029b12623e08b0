package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// dev is the device every test selects for: a fixed worker count, so recipes do not depend
// on the machine.
var dev = kernels.Target{Backend: kernels.BackendCPU, Workers: 4}

var registry = func() *kernels.Registry {
	r := kernels.NewRegistry()
	if err := Register(r); err != nil {
		panic(err)
	}
	return r
}()

// rng returns a seeded generator and logs the seed when the test fails.
func rng(t testing.TB, seed uint64) *rand.Rand {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("random seed: %d", seed)
		}
	})
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

func f32(shape []int64, data []float32) kernels.Tensor {
	return kernels.Tensor{DType: graph.Float32, Shape: shape, Data: kernels.BytesOf(append([]float32(nil), data...))}
}

func i64(shape []int64, data []int64) kernels.Tensor {
	return kernels.Tensor{DType: graph.Int64, Shape: shape, Data: kernels.BytesOf(append([]int64(nil), data...))}
}

func i32(shape []int64, data []int32) kernels.Tensor {
	return kernels.Tensor{DType: graph.Int32, Shape: shape, Data: kernels.BytesOf(append([]int32(nil), data...))}
}

func boolT(shape []int64, data []bool) kernels.Tensor {
	b := make([]byte, len(data))
	for i, v := range data {
		if v {
			b[i] = 1
		}
	}
	return kernels.Tensor{DType: graph.Bool, Shape: shape, Data: b}
}

func randF32(r *rand.Rand, shape ...int64) kernels.Tensor {
	n := int(mustNumel(shape))
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(r.NormFloat64())
	}
	return f32(shape, d)
}

func mustNumel(shape []int64) int64 {
	n, err := kernels.NumElements(shape)
	if err != nil {
		panic(err)
	}
	return n
}

// value describes t for a Node.
func value(t kernels.Tensor) kernels.Value { return kernels.Value{DType: t.DType, Shape: t.Shape} }

// node builds a node for op with the given inputs and output values.
func node(op string, attrs graph.Attributes, in []kernels.Tensor, out ...kernels.Value) *kernels.Node {
	n := &kernels.Node{Name: "n", Op: op, Attrs: attrs, Outputs: out}
	for _, t := range in {
		if t.DType == graph.Undefined {
			n.Inputs = append(n.Inputs, kernels.Value{})
			continue
		}
		n.Inputs = append(n.Inputs, value(t))
	}
	return n
}

// region is a 256-byte aligned host region of size bytes, kept alive by the returned slice.
func region(size int64) (alloc.Region, []byte) {
	buf := make([]byte, size+alloc.DefaultPartAlign)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	off := (alloc.DefaultPartAlign - int64(p%uintptr(alloc.DefaultPartAlign))) % alloc.DefaultPartAlign
	return alloc.Region{Ptr: alloc.Ptr(p + uintptr(off)), Size: size}, buf
}

// run selects n's kernel, allocates its outputs and workspace, runs it and returns the outputs.
func run(t testing.TB, n *kernels.Node, in ...kernels.Tensor) ([]kernels.Tensor, kernels.Instance) {
	t.Helper()
	inst, err := registry.Select(n, dev)
	require.NoError(t, err)
	out := make([]kernels.Tensor, len(n.Outputs))
	for i, v := range n.Outputs {
		if !v.Present() {
			continue
		}
		out[i] = kernels.MustTensor(v.DType, v.Shape...)
	}
	size, err := inst.Recipe().Size()
	require.NoError(t, err)
	reg, keep := region(size)
	require.NoError(t, kernels.Execute(inst, in, out, reg, 0))
	_ = keep[0]
	return out, inst
}

// out1 runs n and returns its only output.
func out1(t testing.TB, n *kernels.Node, in ...kernels.Tensor) kernels.Tensor {
	t.Helper()
	o, _ := run(t, n, in...)
	return o[0]
}

// closeTo checks got against want elementwise within tol relative (absolute near zero).
func closeTo(t testing.TB, want, got []float32, tol float64, msg ...any) {
	t.Helper()
	require.Equal(t, len(want), len(got), msg...)
	for i := range want {
		w, g := float64(want[i]), float64(got[i])
		if math.IsNaN(w) && math.IsNaN(g) || w == g {
			continue
		}
		if math.Abs(w-g) > tol*math.Max(1, math.Abs(w)) {
			require.InDeltaf(t, w, g, tol*math.Max(1, math.Abs(w)), "element %d of %d %v", i, len(want), msg)
		}
	}
}

// bcastIndexRef maps an output index to the index of an input broadcast to it.
func bcastIndexRef(out, in []int64, o int) int {
	idx := 0
	stride := 1
	rest := o
	coords := make([]int, len(out))
	for d := len(out) - 1; d >= 0; d-- {
		coords[d] = rest % int(out[d])
		rest /= int(out[d])
	}
	for d := len(in) - 1; d >= 0; d-- {
		c := coords[d+len(out)-len(in)]
		if in[d] == 1 {
			c = 0
		}
		idx += c * stride
		stride *= int(in[d])
	}
	return idx
}

// sentinel fills every output with a byte pattern, to check later that nothing was written.
func sentinel(out []kernels.Tensor) {
	for _, o := range out {
		for i := range o.Data {
			o.Data[i] = 0xA5
		}
	}
}

func untouched(t testing.TB, out []kernels.Tensor) {
	t.Helper()
	for k, o := range out {
		for i, b := range o.Data {
			if b != 0xA5 {
				t.Fatalf("output %d byte %d was written (%#x)", k, i, b)
			}
		}
	}
}

// requireRefusesSmallWorkspace checks that n's instance asks for workspace, that a region one
// byte smaller than R is refused by the carver before anything is written, and that Run refuses
// a workspace carved for a smaller recipe the same way.
func requireRefusesSmallWorkspace(t *testing.T, n *kernels.Node, in ...kernels.Tensor) kernels.Instance {
	t.Helper()
	inst, err := registry.Select(n, dev)
	require.NoError(t, err)
	rec := inst.Recipe()
	size, err := rec.Size()
	require.NoError(t, err)
	require.Positive(t, size, "tactic %s has no workspace", inst.Tactic())
	out := make([]kernels.Tensor, len(n.Outputs))
	for i, v := range n.Outputs {
		if v.Present() {
			out[i] = kernels.MustTensor(v.DType, v.Shape...)
		}
	}
	sentinel(out)
	reg, keep := region(size - 1)
	err = kernels.Execute(inst, in, out, reg, 0)
	var small *alloc.WorkspaceTooSmallError
	require.ErrorAs(t, err, &small)
	require.Equal(t, size, small.Needed)
	untouched(t, out)

	// a workspace carved from a recipe whose last part is one byte short
	short := alloc.Recipe{Kernel: rec.Kernel, Parts: append([]alloc.Part(nil), rec.Parts...)}
	last := len(short.Parts) - 1
	for last > 0 && short.Parts[last].Size == 0 {
		last--
	}
	short.Parts[last].Size--
	ssize, err := short.Size()
	require.NoError(t, err)
	reg2, keep2 := region(ssize)
	ws, err := alloc.Carve(reg2, short)
	require.NoError(t, err)
	err = inst.Run(in, out, ws, 0)
	var we *kernels.WorkspaceError
	require.ErrorAs(t, err, &we)
	require.Equal(t, short.Parts[last].Name, we.Part)
	untouched(t, out)
	_, _ = keep[0], keep2[0]

	// and the full recipe works
	reg3, keep3 := region(size)
	require.NoError(t, kernels.Execute(inst, in, out, reg3, 0))
	_ = keep3[0]
	return inst
}

// requireNoAllocs checks that running n's kernel (workspace carved once, as a runner does)
// makes no heap allocations.
func requireNoAllocs(t *testing.T, n *kernels.Node, in ...kernels.Tensor) {
	t.Helper()
	inst, err := registry.Select(n, dev)
	require.NoError(t, err)
	out := make([]kernels.Tensor, len(n.Outputs))
	for i, v := range n.Outputs {
		if v.Present() {
			out[i] = kernels.MustTensor(v.DType, v.Shape...)
		}
	}
	size, err := inst.Recipe().Size()
	require.NoError(t, err)
	reg, keep := region(size)
	var ws *alloc.Workspace
	if len(inst.Recipe().Parts) > 0 {
		ws, err = alloc.Carve(reg, inst.Recipe())
		require.NoError(t, err)
	}
	require.NoError(t, inst.Run(in, out, ws, 0)) // warm the pools
	allocs := testing.AllocsPerRun(20, func() {
		if err := inst.Run(in, out, ws, 0); err != nil {
			t.Fatal(err)
		}
	})
	if raceEnabled {
		return // the race detector allocates
	}
	require.Zero(t, allocs, "%s (%s) allocates", n.Op, inst.Tactic())
	_ = keep[0]
}
