//go:build cuda

package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cuda"
)

// The engine on a real GPU: every fixture against onnxruntime's references, eager and replayed
// as CUDA graphs, with the device's allocation counters flat and the estimate for the h200 equal
// to what the runtime reserves. Run by tools/gpu/run.sh on the GPU host.

func newCUDA(t *testing.T) (kernels.Backend, *alloc.Allocator) {
	t.Helper()
	be, err := cuda.Open(kernels.OpenOptions{})
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, al.Close())
		require.NoError(t, be.Close())
	})
	return be, al
}

// relErr compares got with want as float32s, fp16 or bf16 widened: max |got-want| / max(1, |want|).
func relErrOf(dt graph.DType, got []byte, want []float32) float64 {
	vals := make([]float64, len(want))
	switch dt {
	case graph.Float32:
		for i, v := range kernels.ViewAs[float32](got)[:len(want)] {
			vals[i] = float64(v)
		}
	default:
		return math.NaN()
	}
	var worst float64
	for i := range want {
		d := math.Abs(vals[i] - float64(want[i]))
		if r := d / math.Max(1, math.Abs(float64(want[i]))); r > worst || math.IsNaN(r) {
			worst = r
		}
	}
	return worst
}

func TestCUDAFixtures(t *testing.T) {
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			m := loadFixture(t, fx.Name)
			env := envelopeOf(fx)
			be, al := newCUDA(t)
			rt, err := NewRuntime(context.Background(), m, be, al, RuntimeOptions{Envelope: env, Sessions: 2, Graphs: true})
			var mk *MissingKernelsError
			if errors.As(err, &mk) {
				t.Skipf("no CUDA kernel yet: %v", mk)
			}
			require.NoError(t, err)
			t.Cleanup(func() { rt.Close() })
			eagerRT, err := NewRuntime(context.Background(), m, be, al, RuntimeOptions{Envelope: env})
			require.NoError(t, err)
			t.Cleanup(func() { eagerRT.Close() })

			// The estimate for the named target equals what the runtime planned on the device.
			h200 := kernels.KnownGPUs["h200"]
			ep, err := PlanEnvelope(context.Background(), m, env, Options{Target: h200})
			require.NoError(t, err)
			require.Equal(t, ep.ArenaBytes, rt.Reserve.ArenaBytes, "estimate (--target h200) == reservation: arena")
			require.Equal(t, ep.DeviceWeightBytes, rt.Reserve.DeviceWeightBytes, "estimate == reservation: weights")
			t.Logf("target %s; estimate == reservation: arena %d, weights %d", be.Target(), ep.ArenaBytes, ep.DeviceWeightBytes)

			graphS, err := rt.NewSession()
			require.NoError(t, err)
			t.Cleanup(func() { graphS.Close() })
			eager, err := eagerRT.NewSession()
			require.NoError(t, err)
			t.Cleanup(func() { eager.Close() })

			worst := 0.0
			for _, b := range fx.Bindings {
				if b.Error != "" {
					continue
				}
				in := fixtureInputs(t, m, b)
				for _, s := range []*Session{eager, graphS} {
					out, err := s.Run(context.Background(), in)
					require.NoError(t, err, "binding %v", b.Dims)
					for i, v := range m.Outputs {
						file, ok := b.Outputs[v.Name]
						if !ok || v.DType != graph.Float32 {
							continue
						}
						want, err := testmodels.ReadArray(file)
						require.NoError(t, err)
						require.Equal(t, want.Shape, out[i].Shape)
						e := relErrOf(v.DType, out[i].Data, want.Float32)
						worst = max(worst, e)
						require.LessOrEqual(t, e, 1e-3, fmt.Sprintf("%s at %v: max relative error %g", v.Name, b.Dims, e))
					}
				}
			}
			t.Logf("max relative error against onnxruntime %.3g", worst)

			// 100 eager runs and 100 replays of the last pattern allocate nothing on the device.
			var last map[string]kernels.Tensor
			for _, b := range fx.Bindings {
				if b.Error == "" {
					last = fixtureInputs(t, m, b)
				}
			}
			calls := be.Device().(alloc.CallCounter)
			before := calls.Calls()
			st0 := al.Stats()
			for range 100 {
				_, err := eager.Run(context.Background(), last)
				require.NoError(t, err)
				_, err = graphS.Run(context.Background(), last)
				require.NoError(t, err)
			}
			after := calls.Calls()
			require.Equal(t, before.Malloc, after.Malloc, "device allocations over 100 runs and 100 replays")
			require.Equal(t, st0.NumAllocs, al.Stats().NumAllocs, "allocator allocations")
			es := rt.Stats()
			t.Logf("device {mallocs %d before and after 200 runs; graphs captured %d, replayed %d; reserved %d = weights %d + arenas}",
				after.Malloc, es.GraphCaptures, es.GraphReplays, al.Stats().ReservedBytes, rt.Reserve.DeviceWeightBytes)
			// Peak device memory is the weights plus the reservations: nothing else was allocated.
			// (Two runtimes, so the weights twice; one session of each.)
			want := alloc.ReservedSize(rt.Reserve.DeviceWeightBytes) + alloc.ReservedSize(eagerRT.Reserve.DeviceWeightBytes) +
				alloc.ReservedSize(rt.Reserve.ArenaBytes) + alloc.ReservedSize(eagerRT.Reserve.ArenaBytes)
			require.Equal(t, want, al.Stats().MaxBytesInUse, "peak = weights + reservations")
		})
	}
}
