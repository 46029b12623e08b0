package engine

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
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
