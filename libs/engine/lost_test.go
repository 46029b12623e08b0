package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/sim"
)

// lostKernel wraps a kernel whose launch fails with a device-lost error, as a CUDA launch does
// when launches are synchronous and the kernel made an illegal memory access.
// It runs the kernel until armed.
type lostKernel struct {
	kernels.Kernel
	armed *atomic.Bool
}

type lostInstance struct {
	kernels.Instance
	armed *atomic.Bool
}

func (k lostKernel) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	return lostInstance{inst, k.armed}, err
}

func (i lostInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if !i.armed.Load() {
		return i.Instance.Run(in, out, ws, s)
	}
	return fmt.Errorf("test kernel: illegal address: %w", alloc.ErrDeviceLost)
}

// TestDeviceLostRefusesLaterRuns: a run that leaves the device unusable (a sticky fault: here a
// simulated kernel reading memory nothing wrote, or a launch that reports a lost device) fails
// with a *DeviceLostError that keeps the cause and, when the launch reported it, names the
// node; afterwards every run of every session of the runtime, and every new session, fails at
// once with the same error, reaching the device no more, instead of serving results computed on
// a broken device. Before, each later run failed on its own (or, on a device whose fault is not
// sticky, ran on corrupt memory).
func TestDeviceLostRefusesLaterRuns(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	in := fixtureInputs(t, m, fx.Bindings[0])
	for _, tc := range []struct {
		name    string
		breakIt func(t *testing.T, be *sim.Backend, rt *Runtime, armed *atomic.Bool)
		node    bool
	}{
		{name: "fault at a synchronize", breakIt: func(t *testing.T, be *sim.Backend, rt *Runtime, _ *atomic.Bool) {
			fresh, err := be.Device().Malloc(1 << 20) // device memory nothing wrote
			require.NoError(t, err)
			for _, v := range m.Initializers {
				if rt.weights[v.ID].ptr != 0 && v.Init.Size <= 1<<20 {
					rt.weights[v.ID].ptr = fresh
					break
				}
			}
		}},
		{name: "fault at a launch", node: true, breakIt: func(_ *testing.T, _ *sim.Backend, _ *Runtime, armed *atomic.Bool) {
			armed.Store(true)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, err := sim.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 2})
			require.NoError(t, err)
			al, err := alloc.New(be.Device(), alloc.Options{})
			require.NoError(t, err)
			opts := RuntimeOptions{Envelope: envelopeOf(fx), Sessions: 2}
			var armed atomic.Bool
			if tc.node {
				reg, err := wrappedRegistry(be, func(k kernels.Kernel) kernels.Kernel {
					if k.Op() == kernels.Key("", "Softmax") {
						return lostKernel{k, &armed}
					}
					return k
				})
				require.NoError(t, err)
				opts.Registry = reg
			}
			rt, err := NewRuntime(context.Background(), m, be, al, opts)
			require.NoError(t, err)
			s1, err := rt.NewSession()
			require.NoError(t, err)
			s2, err := rt.NewSession()
			require.NoError(t, err)
			// A fault is sticky: closing fails too, and that is not checked.
			t.Cleanup(func() { s1.Close(); s2.Close(); rt.Close(); al.Close(); be.Close() })
			_, err = s2.Run(context.Background(), in) // compiles s2's program while the device works
			require.NoError(t, err)
			require.NoError(t, rt.Lost())
			tc.breakIt(t, be, rt, &armed)

			_, err = s1.Run(context.Background(), in)
			var dl *DeviceLostError
			require.ErrorAs(t, err, &dl)
			require.ErrorIs(t, err, alloc.ErrDeviceLost)
			require.Equal(t, "sim", dl.Device)
			require.Contains(t, err.Error(), "the device sim is in an unrecoverable state; restart the process: ")
			if tc.node {
				require.NotNil(t, dl.Node)
				require.Equal(t, "Softmax", dl.Node.OpType)
				require.Contains(t, err.Error(), fmt.Sprintf("%q (Softmax): test kernel: illegal address", dl.Node.Name))
			} else {
				require.Nil(t, dl.Node)
				var ur *alloc.UninitializedReadError
				require.ErrorAs(t, err, &ur, "the cause is kept")
			}

			before := be.Counters()
			for _, s := range []*Session{s1, s2} {
				_, err := s.Run(context.Background(), in)
				require.Same(t, dl, asLost(t, err), "every later run gets the first failure")
			}
			require.Equal(t, before, be.Counters(), "refused runs reach the device no more")
			_, err = rt.NewSession()
			require.Same(t, dl, asLost(t, err))
			require.Same(t, dl, asLost(t, rt.Lost()))
		})
	}
}

func asLost(t *testing.T, err error) *DeviceLostError {
	var dl *DeviceLostError
	require.ErrorAs(t, err, &dl)
	return dl
}
