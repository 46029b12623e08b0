package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"

	"carve.dev/libs/alloc"
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

// With sixteen processors and sixteen kernel workers a run makes no Go heap allocations either:
// the worker pool's helpers and the kernels' argument lists take nothing from the runtime's
// per-processor caches, which many processors leave empty now and then (a blocked goroutine's
// sudog, a sync.Pool's items). The test runs in a child process started with GOMAXPROCS=16, so
// that the pool has fifteen helpers whatever ran before, and on this machine's cores too.
//
// It counts the allocations made by a kernel or the pool's loops (the mem profile at rate 1: the
// first of carve's functions on the stack is in libs/kernels), and logs the rest: the runtime's
// own bookkeeping (a thread it starts when the threads outnumber the cores and one of sixteen
// processors wakes another, which with two cores happens now and then for a while), an idle
// helper parking, and the sudog the CPU device's stream goroutine takes when it waits for the
// next run's work on a processor whose cache a collection emptied.
// testing.AllocsPerRun would not do: it sets GOMAXPROCS to 1.
func TestRunsNoHeapAllocationsSixteenProcs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	if os.Getenv("CARVE_ALLOC16_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestRunsNoHeapAllocationsSixteenProcs$", "-test.v")
		cmd.Env = append(os.Environ(), "CARVE_ALLOC16_CHILD=1", "GOMAXPROCS=16")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestRunsNoHeapAllocationsSixteenProcs", "%s", out)
		t.Logf("%s", out)
		return
	}
	require.Equal(t, 16, runtime.GOMAXPROCS(0))
	for _, name := range []string{"qwen2", "gpt2", "contrib_attention"} {
		t.Run(name, func(t *testing.T) {
			fx := testmodels.MustGet(name)
			m := loadFixture(t, fx.Name)
			be, err := cpu.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 16})
			require.NoError(t, err)
			al, err := alloc.New(be.Device(), alloc.Options{})
			require.NoError(t, err)
			t.Cleanup(func() {
				require.NoError(t, al.Close())
				require.NoError(t, be.Close())
			})
			_, s := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 16}, Envelope: envelopeOf(fx)})
			in := fixtureInputs(t, m, fx.Bindings[len(fx.Bindings)-1])
			run := func(n int) {
				for range n {
					if _, err := s.Run(context.Background(), in); err != nil {
						t.Fatal(err)
					}
				}
			}
			run(200) // plans the pattern and warms the pool and the runtime's caches up
			ours, all := countAllocs(func() { run(200) })
			t.Logf("%s: %d allocations in 200 runs, %d of them the kernels'", name, all, ours)
			require.Zero(t, ours, "Go heap allocations by the kernels or the worker pool in 200 runs of %s", name)
		})
	}
}

// countAllocs runs fn with every allocation profiled and returns how many of the allocations
// made meanwhile were the kernels' or the pool's loops', and how many there were in all.
func countAllocs(fn func()) (ours, all int64) {
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
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
	runtime.MemProfileRate = 1
	fn()
	runtime.MemProfileRate = 0
	for stack, n := range snapshot() {
		n -= before[stack]
		if n <= 0 {
			continue
		}
		all += n
		// The first of carve's functions on the stack says whose allocation it is. An idle
		// helper that parks takes a sudog in the pool's helper loop itself: that happens when
		// no loop came for a while (these small bindings start few), not once per run.
		for frames := runtime.CallersFrames(stack[:]); ; {
			f, more := frames.Next()
			if strings.HasPrefix(f.Function, "carve.dev/") {
				if strings.HasPrefix(f.Function, "carve.dev/libs/kernels/") && f.Function != "carve.dev/libs/kernels/internal/par.helper" {
					ours += n
				}
				break
			}
			if !more {
				break
			}
		}
	}
	return ours, all
}
