package run

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
	"github.com/stretchr/testify/require"
)

// How the executor's per-run host overhead is measured
//
// A run's time is the executor's own work (binding the inputs, looking up the pattern's
// program, launching every kernel step on the session's stream, synchronizing) plus the
// kernels' work. Two independent measurements separate them:
//
//   - null kernels: the same model, plans, tactics, recipes, arenas and launches, but every
//     kernel's Run returns at once (wrapRegistry with null = true). A run then costs exactly
//     the executor's work; BenchmarkExecutorOverhead reports it per run and per kernel step.
//   - subtraction: the real kernels, each Run timed (wrapRegistry with null = false);
//     gap = run time - the sum of the kernels' times, reported by BenchmarkRun as gap-ns/run.
//     The gap holds the executor's work but also every moment the stream's goroutine is not
//     inside a kernel: handing over to the next queued func, the waiting caller's wake-up, and
//     on a loaded machine the OS descheduling it between kernels. It is an upper bound; the
//     null-kernel figure is the executor's cost (it errs low only by the caches the kernels
//     would have cooled).
//
// Both run on one session with Workers = 2 (the CI machine's cores) at the fixtures' largest
// binding (batch=3, seq=16).

// wrapRegistry returns a registry of the CPU kernels whose instances either do nothing
// (null) or add the time each Run takes to *spent.
func wrapRegistry(tb testing.TB, null bool, spent *atomic.Int64) *kernels.Registry {
	return wrappedCPU(tb, func(k kernels.Kernel) kernels.Kernel { return &wrapKernel{Kernel: k, null: null, spent: spent} })
}

// wrappedCPU is a registry of every CPU kernel, each as wrap returns it: the measuring tests'
// way to see each kernel's Select and Run.
func wrappedCPU(tb testing.TB, wrap func(kernels.Kernel) kernels.Kernel) *kernels.Registry {
	cpuReg, err := cpu.SharedRegistry()
	require.NoError(tb, err)
	reg := kernels.NewRegistry()
	for _, op := range cpuReg.Ops(kernels.BackendCPU) {
		k, err := cpuReg.Lookup(kernels.BackendCPU, op.Op)
		require.NoError(tb, err)
		require.NoError(tb, reg.Register(wrap(k)))
	}
	return reg
}

// envInt is the integer environment variable key, or def when it is unset or not a number
// (the measuring tests' knobs).
func envInt(key string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return v
	}
	return def
}

type wrapKernel struct {
	kernels.Kernel
	null  bool
	spent *atomic.Int64
}

func (k *wrapKernel) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	if err != nil {
		return nil, err
	}
	return &wrapInstance{Instance: inst, k: k}, nil
}

type wrapInstance struct {
	kernels.Instance
	k *wrapKernel
}

func (w *wrapInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if w.k.null {
		return nil
	}
	t0 := time.Now()
	err := w.Instance.Run(in, out, ws, s)
	w.k.spent.Add(int64(time.Since(t0)))
	return err
}

// benchFixtures are the fixtures with onnxruntime bindings.
func benchFixtures() []string {
	var names []string
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) > 0 {
			names = append(names, fx.Name)
		}
	}
	return names
}

func benchLoad(b *testing.B, name string, reg *kernels.Registry) *Runner {
	return load(b, Config{ModelPath: fixture(b, name), Envelope: env(fixed(3), fixed(16)), Registry: reg, Seed: 1})
}

// kernelSteps counts the steps of r's pattern that launch a kernel.
func kernelSteps(b *testing.B, r *Runner) int {
	p, err := engine.Plan(context.Background(), r.Model, r.Binding, engine.Options{Workers: 2})
	require.NoError(b, err)
	n := 0
	for _, st := range p.Steps {
		if st.Kind == engine.RunKernel {
			n++
		}
	}
	return n
}

// BenchmarkRun is runs per second per fixture with the real kernels, and the time outside
// them by subtraction of the timed kernels.
func BenchmarkRun(b *testing.B) {
	for _, name := range benchFixtures() {
		b.Run(name, func(b *testing.B) {
			var spent atomic.Int64
			r := benchLoad(b, name, wrapRegistry(b, false, &spent))
			s, ctx := r.Sessions[0], context.Background()
			_, err := s.Run(ctx, r.Inputs)
			require.NoError(b, err)
			spent.Store(0)
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := s.Run(ctx, r.Inputs); err != nil {
					b.Fatal(err)
				}
			}
			total := time.Since(start)
			n := float64(b.N)
			b.ReportMetric(n/total.Seconds(), "runs/s")
			b.ReportMetric(float64(total.Nanoseconds()-spent.Load())/n, "gap-ns/run")
		})
	}
}

// BenchmarkExecutorOverhead is the executor's per-run host time with null kernels: everything
// a run does except the kernels' work.
func BenchmarkExecutorOverhead(b *testing.B) {
	for _, name := range benchFixtures() {
		b.Run(name, func(b *testing.B) {
			r := benchLoad(b, name, wrapRegistry(b, true, nil))
			steps := kernelSteps(b, r)
			s, ctx := r.Sessions[0], context.Background()
			_, err := s.Run(ctx, r.Inputs)
			require.NoError(b, err)
			before := r.Counters()
			b.ReportAllocs()
			start := time.Now()
			for b.Loop() {
				if _, err := s.Run(ctx, r.Inputs); err != nil {
					b.Fatal(err)
				}
			}
			total := time.Since(start)
			require.Equal(b, Counters{}, r.Counters().Sub(before), "no device or allocator allocation per run")
			b.ReportMetric(float64(total.Nanoseconds())/float64(b.N)/float64(steps), "ns/step")
			b.ReportMetric(float64(steps), "steps")
		})
	}
}

// TestNullKernelsKeepThePlan checks that the benchmarks' wrapped registries plan exactly as
// the CPU kernels do, so the null-kernel runs execute the same steps.
func TestNullKernelsKeepThePlan(t *testing.T) {
	m := benchFixtures()[0]
	real := load(t, Config{ModelPath: fixture(t, m), Envelope: env(fixed(3), fixed(16)), Seed: 1})
	null := load(t, Config{ModelPath: fixture(t, m), Envelope: env(fixed(3), fixed(16)), Seed: 1, Registry: wrapRegistry(t, true, nil)})
	require.Equal(t, real.Reservation, null.Reservation)
	_, err := null.Run(context.Background(), 2)
	require.NoError(t, err)
}
