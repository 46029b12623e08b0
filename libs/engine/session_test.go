package engine

import (
	"context"
	"fmt"
	"math"
	"testing"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
	"github.com/stretchr/testify/require"
)

// fixtureInputs decodes a fixture binding's inputs as host tensors.
func fixtureInputs(t testing.TB, m *graph.Model, b testmodels.Binding) map[string]kernels.Tensor {
	t.Helper()
	return bindingInputs(t, m, b, testmodels.ReadArray)
}

// bindingInputs decodes a binding's inputs, each file read by read, as host tensors.
func bindingInputs(t testing.TB, m *graph.Model, b testmodels.Binding, read func(string) (testmodels.Array, error)) map[string]kernels.Tensor {
	t.Helper()
	in := map[string]kernels.Tensor{}
	for name, file := range b.Inputs {
		a, err := read(file)
		require.NoError(t, err)
		v := m.Value(name)
		require.NotNil(t, v, name)
		in[name] = arrayTensor(t, v.DType, a)
	}
	return in
}

// arrayTensor converts a decoded .npy array to a tensor of dtype dt.
func arrayTensor(t testing.TB, dt graph.DType, a testmodels.Array) kernels.Tensor {
	t.Helper()
	tn, err := kernels.NewTensor(dt, a.Shape...)
	require.NoError(t, err)
	switch dt {
	case graph.Float32:
		copy(kernels.ViewAs[float32](tn.Data), a.Float32)
	case graph.Int64:
		copy(kernels.ViewAs[int64](tn.Data), a.Int64)
	case graph.Int32:
		for i, v := range a.Int64 {
			kernels.ViewAs[int32](tn.Data)[i] = int32(v)
		}
	default:
		t.Fatalf("fixture input dtype %s not handled", dt)
	}
	return tn
}

// maxRelErr compares got with want: max |got-want| / max(1, |want|).
func maxRelErr(got, want []float32) float64 {
	var worst float64
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if r := d / math.Max(1, math.Abs(float64(want[i]))); r > worst || math.IsNaN(r) {
			worst = r
		}
	}
	return worst
}

// newSession makes a runtime for m and one session, closed when the test ends.
func newSession(t testing.TB, m *graph.Model, dev kernels.Backend, al *alloc.Allocator, opts RuntimeOptions) (*Runtime, *Session) {
	t.Helper()
	rt, err := NewRuntime(context.Background(), m, dev, al, opts)
	require.NoError(t, err)
	s, err := rt.NewSession()
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		require.NoError(t, rt.Close())
	})
	return rt, s
}

// newCPU opens a CPU backend of memory bytes with 2 workers and an allocator over it, closed when
// the test ends.
func newCPU(t testing.TB, memory int64) (*cpu.Backend, *alloc.Allocator) {
	t.Helper()
	be, err := cpu.Open(kernels.OpenOptions{Memory: memory, Workers: 2})
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, al.Close())
		require.NoError(t, be.Close())
	})
	return be, al
}

func TestRunFixturesMatchOnnxruntime(t *testing.T) {
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			m := loadFixture(t, fx.Name)
			dev, al := newCPU(t, 1<<30)
			_, s := newSession(t, m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: envelopeOf(fx)})
			for _, b := range fx.Bindings {
				if b.Error != "" {
					continue
				}
				out, err := s.Run(context.Background(), fixtureInputs(t, m, b))
				require.NoError(t, err, "binding %v", b.Dims)
				for i, v := range m.Outputs {
					file, ok := b.Outputs[v.Name]
					if !ok {
						continue
					}
					want, err := testmodels.ReadArray(file)
					require.NoError(t, err)
					require.Equal(t, want.Shape, out[i].Shape, "%s at %v", v.Name, b.Dims)
					got := kernels.ViewAs[float32](out[i].Data)
					e := maxRelErr(got, want.Float32)
					t.Logf("%s at %v: max relative error %.3g", v.Name, b.Dims, e)
					require.LessOrEqual(t, e, 1e-4, fmt.Sprintf("%s at %v: max relative error %g", v.Name, b.Dims, e))
				}
			}
		})
	}
}

// cpuCalls counts the calls made to a CPU backend's device.
func cpuCalls(be *cpu.Backend) alloc.CPUCalls { return be.Device().(*alloc.CPUDevice).Calls() }
