package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
	"carve.dev/libs/kernels/sim"
	"carve.dev/libs/planner"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// faultWorkload is a whole run of a fixture on one device: an allocator, a runtime (the
// envelope planned, the reservation checked), two sessions (a stream and an arena each), a
// first run of one pattern on both sessions, steady runs, a second pattern, and the close of
// everything in order. Runs that fail are retried once on the same session: unless the device's
// failures are sticky, the retry must succeed with the right outputs.
type faultWorkload struct {
	m      *graph.Model
	env    Envelope
	opts   RuntimeOptions
	setup  func(rt *Runtime)                          // called once the runtime is made, if not nil
	routed func(be kernels.Backend) *kernels.Registry // the kernels, if not be's
	inputs []map[string]kernels.Tensor                // by pattern
	want   [][][]byte                                 // outputs' bytes, by pattern and output; nil: record them
	sticky bool
}

// faultResult is what one run of the workload saw.
type faultResult struct {
	errs  []error     // every error a call returned, in order
	after alloc.Stats // the allocator's statistics after it was closed
	free  int64       // the device's free memory after the allocator was closed
	total int64
}

// faultDevice is a kind of device the sweep runs on: open makes a fresh device (closed with
// its Close) and the function that makes the backend over a wrapper around it, given the
// wrapper's Faults (for calls the backend makes around the device).
type faultDevice struct {
	name string
	open func(t *testing.T) (raw alloc.Device, backend func(dev alloc.Device, f *alloc.Faults) (kernels.Backend, error))
	// ops are the kinds of call counted and failed; 0 means alloc.FaultAll.
	ops alloc.FaultOp
	// failed are the kinds the sweep must have failed first at least once.
	failed []alloc.FaultOp
	// maxFailures, if positive, samples the sweep: N strides over the calls so that about
	// this many are failed.
	maxFailures int64
	// sharedMemory: the device's memory is not the test's alone, so free memory is not
	// checked against the total after close (the allocator's figures still are).
	sharedMemory bool
	// graphs adds a workload: the strict one with RuntimeOptions.Graphs, whose programs'
	// kernels are captured at their first run and replayed (LaunchGraph) at every run.
	graphs bool
}

var (
	cpuFaultDevice = faultDevice{name: "cpu", failed: []alloc.FaultOp{alloc.FaultMalloc, alloc.FaultStream, alloc.FaultLaunch}, graphs: true,
		open: func(t *testing.T) (alloc.Device, func(alloc.Device, *alloc.Faults) (kernels.Backend, error)) {
			dev, err := alloc.NewCPU(alloc.CPUConfig{Memory: 1 << 30})
			require.NoError(t, err)
			return dev, func(d alloc.Device, _ *alloc.Faults) (kernels.Backend, error) { return cpu.NewBackend(d, 2) }
		}}
	simFaultDevice = faultDevice{name: "sim", failed: []alloc.FaultOp{alloc.FaultMalloc, alloc.FaultStream, alloc.FaultLaunch, alloc.FaultCopy},
		open: func(t *testing.T) (alloc.Device, func(alloc.Device, *alloc.Faults) (kernels.Backend, error)) {
			dev, mem, err := alloc.NewSim(alloc.SimConfig{Memory: 1 << 30})
			require.NoError(t, err)
			return dev, func(d alloc.Device, f *alloc.Faults) (kernels.Backend, error) {
				be, err := sim.NewBackend(d, mem, 2)
				if err != nil {
					return nil, err
				}
				reg, err := launchFaults(be, f)
				return registryBackend{Backend: be, reg: reg}, err
			}
		}}
)

// launchFaults is be's registry with every kernel instance's Run counted, and failed, through
// f as a launch (alloc.FaultLaunch) before it queues anything: one call a node a run. It is how
// the sweep reaches the launches of a backend whose kernels launch around the Device (the CUDA
// kernels call the driver); the sim sweep uses it too, so that it is tested without a GPU (a
// sim kernel's launch is counted twice there: at its Run and at the device's LaunchKernel).
func launchFaults(be kernels.Backend, f *alloc.Faults) (*kernels.Registry, error) {
	return wrappedRegistry(be, func(k kernels.Kernel) kernels.Kernel { return launchFaultKernel{Kernel: k, f: f} })
}

// wrappedRegistry is be's registry with every kernel passed through wrap, which returns the
// kernel itself to keep it as it is: how the tests put a routed, broken or counting kernel in
// place of the backend's own.
func wrappedRegistry(be kernels.Backend, wrap func(kernels.Kernel) kernels.Kernel) (*kernels.Registry, error) {
	reg := kernels.NewRegistry()
	for _, op := range be.Registry().Ops(be.Target().Backend) {
		k, err := be.Registry().Lookup(be.Target().Backend, op.Op)
		if err != nil {
			return nil, err
		}
		if err := reg.Register(wrap(k)); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

type launchFaultKernel struct {
	kernels.Kernel
	f *alloc.Faults
}

type launchFaultInstance struct {
	kernels.Instance
	f    *alloc.Faults
	what string
}

func (k launchFaultKernel) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	if err != nil {
		return nil, err
	}
	return launchFaultInstance{Instance: inst, f: k.f, what: n.Name + ": launch"}, nil
}

func (i launchFaultInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if err := i.f.Inject(alloc.FaultLaunch, i.what); err != nil {
		return err
	}
	return i.Instance.Run(in, out, ws, s)
}

// registryBackend is a backend with another registry (the engine's kernels by default).
type registryBackend struct {
	kernels.Backend
	reg *kernels.Registry
}

func (b registryBackend) Registry() *kernels.Registry { return b.reg }

func (w *faultWorkload) run(t *testing.T, dev alloc.Device, newBackend func(alloc.Device) (kernels.Backend, error)) (res faultResult) {
	fail := func(err error) bool {
		if err != nil {
			res.errs = append(res.errs, err)
		}
		return err != nil
	}
	al, err := alloc.New(dev, alloc.Options{})
	if fail(err) {
		return
	}
	defer func() {
		fail(al.Close())
		res.after = al.Stats()
		res.free, res.total, _ = dev.MemInfo()
	}()
	ctx := context.Background()
	be, err := newBackend(dev)
	if fail(err) {
		return
	}
	opts := w.opts
	opts.Envelope, opts.Sessions = w.env, 2
	if w.routed != nil {
		opts.Registry = w.routed(be)
	}
	rt, err := NewRuntime(ctx, w.m, be, al, opts)
	if fail(err) {
		return
	}
	defer func() { fail(rt.Close()) }()
	if w.setup != nil {
		w.setup(rt)
	}
	var sessions []*Session
	defer func() {
		for _, s := range sessions {
			fail(s.Close())
		}
	}()
	for range 2 {
		s, err := rt.NewSession()
		if fail(err) {
			return
		}
		sessions = append(sessions, s)
	}
	record := w.want == nil
	if record {
		w.want = make([][][]byte, len(w.inputs))
	}
	runOnce := func(s *Session, p int) {
		out, err := s.Run(ctx, w.inputs[p])
		if fail(err) {
			out, err = s.Run(ctx, w.inputs[p])
			if w.sticky {
				require.ErrorIs(t, err, alloc.ErrInjected, "a sticky failure stays")
				return
			}
			require.NoError(t, err, "a retry after a transient device failure")
		}
		if record && w.want[p] == nil {
			for _, o := range out {
				w.want[p] = append(w.want[p], bytes.Clone(o.Data))
			}
		}
		require.Len(t, out, len(w.want[p]))
		for i := range out {
			require.True(t, bytes.Equal(w.want[p][i], out[i].Data), "pattern %d output %d", p, i)
		}
	}
	for _, s := range sessions {
		runOnce(s, 0) // the first run of a pattern compiles it
	}
	for range 2 {
		runOnce(sessions[0], 0) // steady
	}
	runOnce(sessions[1], 1) // a second pattern
	runOnce(sessions[1], 0)
	return
}

// TestFaultInjectionSweep runs whole fixture workloads on the CPU device wrapped by
// alloc.InjectFaults, failing the N-th malloc, stream, event, copy or launch for every N up to
// the number of such calls the workload makes, once failing that call alone and once failing it
// and every later one (sticky, as a CUDA context after a sticky error). Every failure must come
// back as an error wrapping alloc.ErrInjected (nothing swallowed, nothing panics); a run that
// failed must leave its session usable; and afterwards the allocator holds no bytes,
// reservations or segments, the device's memory is all free, and no goroutine is left behind.
// The workloads: the GPT-2 fixture over its bindings' envelope (strict policy: every workspace
// planned), at one binding with workspaces larger than planned (fallback policy: dynamic
// workspaces from the allocator, freed in stream order through events), and, on devices that
// ask for it (the CPU's, CUDA's launch sweep), the strict one with RuntimeOptions.Graphs (each
// program captured at its first run, failed launches inside the capture included, and replayed).
func TestFaultInjectionSweep(t *testing.T) { faultSweep(t, cpuFaultDevice) }

// TestFaultInjectionSweepSim is the sweep on the simulated discrete device: the weights'
// uploads, each run's input and output copies and its kernel launches (at the device's
// LaunchKernel, and at each instance's Run through launchFaults, as the CUDA sweep counts them)
// are counted and failed too.
func TestFaultInjectionSweepSim(t *testing.T) { faultSweep(t, simFaultDevice) }

func faultSweep(t *testing.T, kind faultDevice) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	require.GreaterOrEqual(t, len(fx.Bindings), 2)
	var inputs []map[string]kernels.Tensor
	for _, b := range fx.Bindings[:2] {
		inputs = append(inputs, fixtureInputs(t, m, b))
	}
	one := Envelope{}
	for k, v := range fx.Bindings[1].Dims {
		one[k] = Range{Lo: v, Hi: v}
	}
	var need, bound atomic.Int64
	need.Store(1024)
	bound.Store(8192)
	workloads := map[string]*faultWorkload{
		"strict": {m: m, env: envelopeOf(fx), opts: RuntimeOptions{Options: Options{Workers: 2}}, inputs: inputs},
		"fallback": {m: m, env: one, inputs: []map[string]kernels.Tensor{inputs[1], inputs[1]},
			opts:   RuntimeOptions{Options: Options{Workers: 2}, Policy: planner.Fallback},
			routed: func(be kernels.Backend) *kernels.Registry { return routedRegistryOf(t, be, &need, &bound) },
			setup: func(rt *Runtime) { // planned with 1024 bytes per Add; each asks for 4096 at run time
				for _, st := range rt.Reserve.Worst.Steps {
					if ri, ok := st.Instance.(*routedInstance); ok {
						ri.setNeed(4096)
					}
				}
			}},
	}
	names := []string{"strict", "fallback"}
	if kind.graphs {
		workloads["graphs"] = &faultWorkload{m: m, env: envelopeOf(fx), inputs: inputs,
			opts: RuntimeOptions{Options: Options{Workers: 2}, Graphs: true}}
		names = append(names, "graphs")
	}
	for _, name := range names {
		w := workloads[name]
		// A run without failures records the outputs and counts the calls; it also starts the
		// CPU kernels' worker pool, which lives as long as the process.
		raw, backend := kind.open(t)
		dev, f := alloc.InjectFaults(raw, alloc.FaultConfig{Ops: kind.ops})
		res := w.run(t, dev, func(d alloc.Device) (kernels.Backend, error) { return backend(d, f) })
		require.Empty(t, res.errs, "the workload runs without failures")
		require.NoError(t, raw.(io.Closer).Close())
		calls := f.Calls()
		ignore := goleak.IgnoreCurrent()
		for _, sticky := range []bool{false, true} {
			w.sticky = sticky
			kinds := map[alloc.FaultOp]int{}
			t.Run(fmt.Sprintf("%s sticky=%v", name, sticky), func(t *testing.T) {
				// The count varies a little from run to run (the allocator creates events as
				// its streams' timing requires): sweep until a run makes fewer calls than N.
				// Under the race detector, which is slow, the calls after the first 64 (the load
				// and the first runs: the mallocs and streams) are swept with a stride.
				// A device that samples strides over all of them.
				next := func(n int64) int64 {
					if kind.maxFailures > 0 {
						return n + max(1, calls/kind.maxFailures)
					}
					if raceEnabled && n >= 64 {
						return n + 7
					}
					return n + 1
				}
				swept := 0
				for n := int64(1); ; n = next(n) {
					require.Less(t, n, 2*calls+10, "the sweep ends")
					swept++
					raw, backend := kind.open(t)
					dev, f := alloc.InjectFaults(raw, alloc.FaultConfig{Ops: kind.ops, FailAt: n, Sticky: sticky})
					res := w.run(t, dev, func(d alloc.Device) (kernels.Backend, error) { return backend(d, f) })
					require.NoError(t, raw.(io.Closer).Close())
					failed := f.Failed()
					if len(failed) == 0 {
						require.Empty(t, res.errs)
						require.Greater(t, n, calls/2, "the run made fewer than half the calls of the first")
						break
					}
					what := failed[0].What
					kinds[failed[0].Op]++
					if len(res.errs) == 0 && failed[0].Op == alloc.FaultMalloc && !sticky {
						// The allocator answers an out-of-memory Malloc by releasing its cache
						// and retrying, which the one-off failure lets through.
						require.Positive(t, res.after.NumAllocRetries, "call %d: the failure of %s was swallowed", n, what)
						goleak.VerifyNone(t, ignore)
						continue
					}
					require.NotEmpty(t, res.errs, "call %d: the failure of %s was swallowed", n, what)
					for _, err := range res.errs {
						require.ErrorIs(t, err, alloc.ErrInjected, "call %d: %s", n, what)
					}
					if failed[0].Op == alloc.FaultMalloc {
						require.ErrorIs(t, res.errs[0], alloc.ErrOutOfMemory, "call %d", n)
					}
					require.Zero(t, res.after.BytesInUse, "call %d (%s): bytes in use after close", n, what)
					require.Zero(t, res.after.ReservedBytes, "call %d (%s): reserved bytes after close", n, what)
					require.Zero(t, res.after.SegmentBytes.Current, "call %d (%s): segments after close", n, what)
					if !kind.sharedMemory {
						require.Equal(t, res.total, res.free, "call %d (%s): device memory after close", n, what)
					}
					goleak.VerifyNone(t, ignore)
				}
				t.Logf("%s: %d calls, %d failures swept; failed first by kind: %v", kind.name, calls, swept, kinds)
				for _, op := range kind.failed {
					require.Positive(t, kinds[op], "the sweep failed some %s", op)
				}
				if name == "fallback" && (kind.ops == 0 || kind.ops&alloc.FaultEvent != 0) {
					require.Positive(t, kinds[alloc.FaultEvent], "the sweep failed some event")
				}
			})
		}
	}
}

// routedRegistryOf is be's registry with Add replaced by a routed Add (routedRegistry's, for
// any backend).
func routedRegistryOf(t *testing.T, be kernels.Backend, need, bound *atomic.Int64) *kernels.Registry {
	reg, err := wrappedRegistry(be, func(k kernels.Kernel) kernels.Kernel {
		if k.Op() == kernels.Key("", "Add") {
			return routed{Kernel: k, need: need, bound: bound}
		}
		return k
	})
	require.NoError(t, err)
	return reg
}
