//go:build cuda

package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cuda"
)

// GPU faults: out of memory at load and in the middle of a run, and a sticky CUDA error. Run by
// tools/gpu/run.sh on the GPU host.

// TestCUDAReservationExceedsFreeMemory: a runtime whose sessions' arenas exceed the device's
// free memory fails at load with a *ReservationError before anything is uploaded or reserved.
func TestCUDAReservationExceedsFreeMemory(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	be, al := newCUDA(t)
	free, total, err := be.Device().MemInfo()
	require.NoError(t, err)
	one, err := NewRuntime(context.Background(), m, be, al, RuntimeOptions{Envelope: envelopeOf(fx)})
	require.NoError(t, err)
	arena := one.Reserve.ArenaBytes
	require.NoError(t, one.Close())
	sessions := int(free/max(arena, 1)) + 2
	up := be.Counters().Uploads
	_, err = NewRuntime(context.Background(), m, be, al, RuntimeOptions{Envelope: envelopeOf(fx), Sessions: sessions})
	var re *ReservationError
	require.ErrorAs(t, err, &re)
	t.Logf("%d sessions of a %d-byte arena on a device with %d of %d bytes free: %v", sessions, arena, free, total, err)
	require.Greater(t, re.Needed, re.Available)
	require.Equal(t, up, be.Counters().Uploads, "nothing uploaded")
	st := al.Stats()
	require.Zero(t, st.ReservedBytes)
	require.Zero(t, st.BytesInUse)
}

// faultCUDA is the CUDA backend over a fault-injecting wrapper of its device. What the engine
// and the allocator ask of the device (mallocs, streams, the allocator's events, graph
// captures and launches) goes through the wrapper; what the backend does with the driver around
// the Device interface is counted and failed through the wrapper's Faults too: its copies and
// its staging buffers' events by the backend itself (cuda.Backend.InjectFaults), and its
// kernels' launches, one a node, by its registry wrapped with launchFaults.
type faultCUDA struct {
	kernels.Backend
	dev alloc.Device
	reg *kernels.Registry
}

func (b *faultCUDA) Device() alloc.Device        { return b.dev }
func (b *faultCUDA) Registry() *kernels.Registry { return b.reg }
func (b *faultCUDA) Close() error                { return nil } // the sweep closes the backend itself

// closingDevice is a backend's device whose Close closes the backend.
type closingDevice struct {
	alloc.Device
	close func() error
}

func (d closingDevice) Close() error { return d.close() }

// cudaFaultDevice sweeps the calls of kind ops, sampled as maxFailures says (0: every one).
func cudaFaultDevice(ops alloc.FaultOp, maxFailures int64) faultDevice {
	return faultDevice{name: "cuda " + ops.String(), ops: ops, failed: []alloc.FaultOp{ops}, maxFailures: maxFailures, sharedMemory: true,
		open: func(t *testing.T) (alloc.Device, func(alloc.Device, *alloc.Faults) (kernels.Backend, error)) {
			be, err := cuda.Open(kernels.OpenOptions{})
			require.NoError(t, err)
			return closingDevice{Device: be.Device(), close: be.Close}, func(d alloc.Device, f *alloc.Faults) (kernels.Backend, error) {
				be.(*cuda.Backend).InjectFaults(f)
				reg, err := launchFaults(be, f)
				return &faultCUDA{Backend: be, dev: d, reg: reg}, err
			}
		}}
}

// TestCUDAFaultInjection is TestFaultInjectionSweep on the GPU: every device malloc of the
// workload (load, reservation, runs, close) fails in turn, and a sample of its copies, of its
// events (the backend's staging events, one recorded a copy, and the allocator's, which order
// the fallback policy's dynamic workspaces) and of its launches (a node's kernels, and with
// the graphs workload the graphs' replays and the launches captured into them); each failure
// is a clean error, the session works again after a one-off failure, and the allocator holds
// nothing after close, with no goroutine left. Copies, events and launches are sampled to keep
// the test short: each takes a fresh device and a whole workload.
func TestCUDAFaultInjection(t *testing.T) {
	keep, err := cuda.Open(kernels.OpenOptions{}) // keeps the primary context alive between the sweep's devices
	require.NoError(t, err)
	defer keep.Close()
	launch := cudaFaultDevice(alloc.FaultLaunch, 16)
	launch.graphs = true
	for _, kind := range []faultDevice{
		cudaFaultDevice(alloc.FaultMalloc, 0),
		cudaFaultDevice(alloc.FaultCopy, 12),
		cudaFaultDevice(alloc.FaultEvent, 16),
		launch,
	} {
		t.Run(kind.ops.String(), func(t *testing.T) { faultSweep(t, kind) })
	}
}

// brokenKernel wraps a CUDA kernel: once armed, its launches write to an illegal address (the
// first output pointed at 0x100), which is a sticky CUDA error. Every kernel is wrapped, and
// stays broken while armed, so that the first one launched that writes its output faults (a view
// op writes nothing).
type brokenKernel struct {
	kernels.Kernel
	armed *atomic.Bool
	node  *atomic.Pointer[string] // the node whose launch was broken
}

type brokenInstance struct {
	kernels.Instance
	k    brokenKernel
	name string
}

func (k brokenKernel) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	return brokenInstance{Instance: inst, k: k, name: n.Name}, err
}

func (i brokenInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if len(out) > 0 && i.k.armed.Load() {
		bad := append([]kernels.Tensor(nil), out...)
		bad[0].Addr = 0x100
		i.k.node.CompareAndSwap(nil, &i.name)
		return i.Instance.Run(in, bad, ws, s)
	}
	return i.Instance.Run(in, out, ws, s)
}

// TestCUDAStickyError: a kernel's illegal memory access (a deliberately broken launch) fails
// the run with a *DeviceLostError; with CUDA_LAUNCH_BLOCKING=1 it names the node whose kernel
// failed; every later run and new session is refused with it instead of computing on a broken
// context. A sticky error poisons the process's CUDA context, so each case runs in a process
// of its own: the test runs its own binary again.
func TestCUDAStickyError(t *testing.T) {
	if os.Getenv("CARVE_STICKY_CHILD") != "" {
		stickyChild(t)
		return
	}
	for _, blocking := range []string{"1", "0"} {
		t.Run("CUDA_LAUNCH_BLOCKING="+blocking, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestCUDAStickyError$", "-test.v")
			cmd.Env = append(os.Environ(), "CARVE_STICKY_CHILD=1", "CUDA_LAUNCH_BLOCKING="+blocking)
			out, err := cmd.CombinedOutput()
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "sticky:") {
					t.Log(strings.TrimSpace(line))
				}
			}
			require.NoError(t, err, "the child:\n%s", out)
		})
	}
}

func stickyChild(t *testing.T) {
	blocking := os.Getenv("CUDA_LAUNCH_BLOCKING") == "1"
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	in := fixtureInputs(t, m, fx.Bindings[0])
	be, err := cuda.Open(kernels.OpenOptions{})
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	// Every kernel wrapped: the first launched after arming is broken.
	var armed atomic.Bool
	var node atomic.Pointer[string]
	reg, err := wrappedRegistry(be, func(k kernels.Kernel) kernels.Kernel {
		return brokenKernel{Kernel: k, armed: &armed, node: &node}
	})
	require.NoError(t, err)
	rt, err := NewRuntime(context.Background(), m, be, al, RuntimeOptions{Envelope: envelopeOf(fx), Sessions: 2,
		Options: Options{Registry: reg}})
	var mk *MissingKernelsError
	if errors.As(err, &mk) {
		t.Skipf("no CUDA kernel yet: %v", mk)
	}
	require.NoError(t, err)
	s1, err := rt.NewSession()
	require.NoError(t, err)
	s2, err := rt.NewSession()
	require.NoError(t, err)
	want, err := s1.Run(context.Background(), in)
	require.NoError(t, err, "unbroken, the run works")
	require.NotEmpty(t, want)

	armed.Store(true)
	_, err = s1.Run(context.Background(), in)
	require.Error(t, err)
	t.Logf("sticky: first run: %v", err)
	var dl *DeviceLostError
	require.ErrorAs(t, err, &dl)
	require.ErrorIs(t, err, alloc.ErrDeviceLost)
	require.NotNil(t, node.Load(), "the broken kernel was launched")
	if blocking {
		require.NotNil(t, dl.Node, "a synchronous launch reports the fault: the node is named")
		t.Logf("sticky: the first broken launch was node %q's; the error names node %q", *node.Load(), dl.Node.Name)
		require.Contains(t, err.Error(), fmt.Sprintf("%q", dl.Node.Name))
	}
	require.ErrorIs(t, be.Device().Synchronize(), alloc.ErrDeviceLost, "the context is poisoned")
	for i, s := range []*Session{s2, s1} {
		_, err := s.Run(context.Background(), in)
		var again *DeviceLostError
		require.ErrorAs(t, err, &again)
		require.Same(t, dl, again)
		if i == 0 {
			t.Logf("sticky: a later run: %v", err)
		}
	}
	_, err = rt.NewSession()
	require.ErrorAs(t, err, new(*DeviceLostError))
	// Nothing is closed: every call on the poisoned context fails, and the process ends here.
}
