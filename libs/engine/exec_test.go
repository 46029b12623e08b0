package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"carve.dev/libs/alloc"
	"carve.dev/libs/alloc/park"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
	"github.com/stretchr/testify/require"
)

func envelopeOf(fx testmodels.Model) Envelope {
	env := Envelope{}
	for _, b := range fx.Bindings {
		for k, v := range b.Dims {
			r, ok := env[k]
			if !ok {
				r = Range{Lo: v, Hi: v}
			}
			env[k] = Range{Lo: min(r.Lo, v), Hi: max(r.Hi, v)}
		}
	}
	return env
}

// After the first run of a pattern, runs make no device allocations and no allocator
// allocations: the device's and the allocator's counters stay flat (the no-allocation
// regression test cuDNN frontend runs).
func TestRepeatedRunsAllocateNothing(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := loadFixture(t, fx.Name)
	dev, al := newCPU(t, 1<<30)
	rt, s := newSession(t, m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: envelopeOf(fx)})
	for _, b := range fx.Bindings {
		in := fixtureInputs(t, m, b)
		_, err := s.Run(context.Background(), in) // plans and binds the pattern
		require.NoError(t, err)
		calls, stats := cpuCalls(dev), al.Stats()
		for range 3 {
			_, err := s.Run(context.Background(), in)
			require.NoError(t, err)
		}
		after, astats := cpuCalls(dev), al.Stats()
		require.Equal(t, calls.Malloc, after.Malloc, "device mallocs at %v", b.Dims)
		require.Equal(t, calls.Free, after.Free, "device frees at %v", b.Dims)
		require.Equal(t, stats.NumAllocs, astats.NumAllocs, "allocator allocations at %v", b.Dims)
		require.Equal(t, stats.DeviceMallocCalls, astats.DeviceMallocCalls)
	}
	require.Equal(t, int64(1), al.Stats().NumReserves, "one arena for every pattern")
	st := rt.Stats()
	require.EqualValues(t, 2, st.Patterns.Computes, "the worst binding was planned at load; two new patterns")
}

// Sessions on separate streams share the weights and give outputs bit-identical to a serial run.
func TestConcurrentSessionsBitIdentical(t *testing.T) {
	fx := testmodels.MustGet("llama")
	m := loadFixture(t, fx.Name)
	dev, al := newCPU(t, 1<<30)
	const k = 4
	rt, err := NewRuntime(context.Background(), m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: envelopeOf(fx), Sessions: k})
	require.NoError(t, err)
	b := fx.Bindings[2]
	in := fixtureInputs(t, m, b)
	serial, err := rt.NewSession()
	require.NoError(t, err)
	out, err := serial.Run(context.Background(), in)
	require.NoError(t, err)
	want := bytes.Clone(out[0].Data)
	require.NoError(t, serial.Close())

	sessions := make([]*Session, k)
	for i := range sessions {
		sessions[i], err = rt.NewSession()
		require.NoError(t, err)
		defer sessions[i].Close()
	}
	var wg sync.WaitGroup
	got := make([][]byte, k)
	errs := make([]error, k)
	for i, s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				out, err := s.Run(context.Background(), in)
				if err != nil {
					errs[i] = err
					return
				}
				got[i] = bytes.Clone(out[0].Data)
			}
		}()
	}
	wg.Wait()
	for i := range sessions {
		require.NoError(t, errs[i])
		require.True(t, bytes.Equal(want, got[i]), "session %d differs from the serial run", i)
	}
}

func TestBadInputs(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	dev, al := newCPU(t, 1<<30)
	_, s := newSession(t, m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: envelopeOf(fx)})
	good := fixtureInputs(t, m, fx.Bindings[1])
	with := func(name string, t2 kernels.Tensor) map[string]kernels.Tensor {
		in := map[string]kernels.Tensor{}
		for k, v := range good {
			in[k] = v
		}
		in[name] = t2
		return in
	}
	ids := good["input_ids"]
	f32 := kernels.MustTensor(m.Value("input_ids").DType+0, ids.Shape...)
	f32.DType = 1 // float32 with int64's byte count: the dtype check must come first
	big := kernels.MustTensor(ids.DType, 3, 99)
	for _, tc := range []struct {
		name string
		in   map[string]kernels.Tensor
		want string
	}{
		{"missing", func() map[string]kernels.Tensor {
			in := with("x", ids)
			delete(in, "x")
			delete(in, "input_ids")
			return in
		}(), `"input_ids": missing`},
		{"unknown", with("nope", ids), `"nope": the model has no such input`},
		{"dtype", with("input_ids", f32), "dtype float32, want int64"},
		{"rank", with("input_ids", kernels.MustTensor(ids.DType, 14)), "rank 1"},
		{"short data", with("input_ids", kernels.Tensor{DType: ids.DType, Shape: ids.Shape, Data: ids.Data[:8]}), "holds 8 bytes"},
		{"inconsistent", with("input_ids", kernels.MustTensor(ids.DType, 3, 7)), "another input gives"},
		{"outside envelope", with("attention_mask", big), "outside the declared envelope"},
	} {
		if tc.name == "outside envelope" {
			tc.in = with("input_ids", big)
			tc.in["attention_mask"] = kernels.MustTensor(good["attention_mask"].DType, 3, 99)
		}
		_, err := s.Run(context.Background(), tc.in)
		var ie *InputError
		require.True(t, errors.As(err, &ie), "%s: got %v", tc.name, err)
		require.Contains(t, err.Error(), tc.want, tc.name)
		require.Zero(t, al.Stats().Allocations.Current, tc.name)
	}
	// The session still works after bad inputs.
	_, err := s.Run(context.Background(), good)
	require.NoError(t, err)
}

func TestReservationFailsFast(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	dev, al := newCPU(t, 1<<20) // 1 MiB of device memory
	env := Envelope{"batch": {Lo: 1, Hi: 8}, "seq": {Lo: 1, Hi: 256}}
	_, err := NewRuntime(context.Background(), m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: env})
	var re *ReservationError
	require.True(t, errors.As(err, &re), "got %v", err)
	require.Greater(t, re.Needed, re.Available)
	require.NotEmpty(t, re.Dim)
	require.Contains(t, err.Error(), "lower "+re.Dim)
	require.Zero(t, cpuCalls(dev).Malloc, "nothing allocated before failing")
	if re.Fits >= 0 {
		// The suggestion is right: the envelope with the driving dim lowered fits.
		env[re.Dim] = Range{Lo: env[re.Dim].Lo, Hi: re.Fits}
		rt, err := NewRuntime(context.Background(), m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: env})
		require.NoError(t, err)
		s, err := rt.NewSession()
		require.NoError(t, err)
		require.NoError(t, s.Close())
	}
}

// A run of the same pattern as the last one makes no Go heap allocations either.
func TestRepeatedRunsNoHeapAllocations(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	dev, al := newCPU(t, 1<<30)
	_, s := newSession(t, m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: envelopeOf(fx)})
	in := fixtureInputs(t, m, fx.Bindings[1])
	_, err := s.Run(context.Background(), in)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := s.Run(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f Go allocations per run", allocs)
	if !raceEnabled {
		require.Zero(t, allocs)
	}
}

// Every fixture runs without a single Go heap allocation after warm-up, with 2, 12 and 16
// processors and as many kernel workers, on this machine's cores however few they are: with
// more processors than cores, threads are descheduled for long, the worker pool's helpers
// sleep and park, and the runtime hands processors between threads, so this is where the
// runtime's per-processor caches run dry (a blocked goroutine's sudog, a timer heap's room, an
// idle thread). The CPU device's streams and the pool wait through package park, which takes
// nothing from those caches and reserves threads and timer room up front.
//
// Each processor count runs in a child process started with GOMAXPROCS set, so that the pool
// has its helpers whatever ran before (testing.AllocsPerRun would not do: it sets GOMAXPROCS to
// 1). The count is runtime.MemStats.Mallocs, everything the process allocated during the runs;
// when it is not zero the test names each allocation's stack (the mem profile at rate 1).
func TestRunsNoHeapAllocationsManyProcs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	if os.Getenv("CARVE_ALLOC_CHILD") == "" {
		for _, procs := range []int{2, 12, 16} {
			t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
				cmd := exec.Command(os.Args[0], "-test.run", "^TestRunsNoHeapAllocationsManyProcs$", "-test.v")
				cmd.Env = append(os.Environ(), "CARVE_ALLOC_CHILD=1", fmt.Sprintf("GOMAXPROCS=%d", procs))
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s", out)
				require.Contains(t, string(out), "--- PASS: TestRunsNoHeapAllocationsManyProcs", "%s", out)
				t.Logf("%s", out)
			})
		}
		return
	}
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range allocCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			m := loadFixture(t, tc.name)
			be, err := cpu.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: procs})
			require.NoError(t, err)
			al, err := alloc.New(be.Device(), alloc.Options{})
			require.NoError(t, err)
			t.Cleanup(func() {
				require.NoError(t, al.Close())
				require.NoError(t, be.Close())
			})
			env := Envelope{}
			for k, v := range tc.dims {
				env[k] = Range{Lo: v, Hi: v}
			}
			_, s := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: procs}, Envelope: env})
			in := tc.inputs(t, m)
			var failed error
			run := func(n int) {
				for range n {
					if _, err := s.Run(context.Background(), in); err != nil {
						failed = err
						return
					}
				}
			}
			run(50) // plans the pattern, starts the pool, warms the caches
			require.NoError(t, failed)
			park.PrepareSleep() // a run's wait may sleep (park.Event.Await)
			const runs = 200
			allocs, stacks := countAllocs(func() { run(runs) })
			require.NoError(t, failed)
			require.Zero(t, allocs, "Go heap allocations in %d runs of %s with GOMAXPROCS=%d, by stack:\n%s", runs, tc.name, procs, stacks)
		})
	}
}

// allocCase is a model and the inputs it runs at.
type allocCase struct {
	name   string
	dims   Binding
	inputs func(testing.TB, *graph.Model) map[string]kernels.Tensor
}

// allocCases are every fixture with onnxruntime bindings, at the largest, and the two with a KV
// cache (no bindings of their own) at a decode step's dims, with zero inputs but the mask.
func allocCases(t *testing.T) []allocCase {
	var cases []allocCase
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		b := fx.Bindings[len(fx.Bindings)-1]
		cases = append(cases, allocCase{fx.Name, b.Dims, func(t testing.TB, m *graph.Model) map[string]kernels.Tensor {
			return fixtureInputs(t, m, b)
		}})
	}
	for name, dims := range map[string]Binding{
		"qwen2_kv":  {"batch": 1, "seq": 1, "past_seq": 15, "total_seq": 16},
		"qwen2_gqa": {"batch": 1, "seq": 1, "total_seq": 16, "max_seq": 32},
	} {
		testmodels.MustGet(name)
		cases = append(cases, allocCase{name, dims, func(t testing.TB, m *graph.Model) map[string]kernels.Tensor {
			in := zeroInputs(t, m, dims)
			mask, ok := in["attention_mask"]
			require.True(t, ok && mask.DType == graph.Int64, "%s: an int64 attention_mask", name)
			for i := range mask.Int64s() {
				mask.Int64s()[i] = 1
			}
			return in
		}})
	}
	require.Greater(t, len(cases), 10)
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	return cases
}

// countAllocs runs fn after a collection (so that none the warm-up started finishes inside it)
// with every allocation profiled, and returns how many objects the process allocated meanwhile
// (runtime.MemStats.Mallocs) and, if any, their stacks.
func countAllocs(fn func()) (int64, string) {
	snapshot := func() map[[32]uintptr]int64 {
		// The profile is as of the last completed collection; two make it current.
		runtime.GC()
		runtime.GC()
		n, _ := runtime.MemProfile(nil, true)
		recs := make([]runtime.MemProfileRecord, n+64)
		n, _ = runtime.MemProfile(recs, true)
		m := map[[32]uintptr]int64{}
		for _, r := range recs[:n] {
			m[r.Stack0] += r.AllocObjects
		}
		return m
	}
	before := snapshot()
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	var ms0, ms1 runtime.MemStats
	runtime.MemProfileRate = 1
	runtime.ReadMemStats(&ms0)
	fn()
	runtime.ReadMemStats(&ms1)
	runtime.MemProfileRate = 0
	allocs := int64(ms1.Mallocs - ms0.Mallocs)
	if allocs == 0 {
		return 0, ""
	}
	var b strings.Builder
	for stack, n := range snapshot() {
		if n -= before[stack]; n <= 0 {
			continue
		}
		fmt.Fprintf(&b, "%d:\n", n)
		for frames := runtime.CallersFrames(stack[:]); ; {
			f, more := frames.Next()
			if f.Function != "" {
				fmt.Fprintf(&b, "\t%s %s:%d\n", f.Function, f.File, f.Line)
			}
			if !more {
				break
			}
		}
	}
	return allocs, b.String()
}
