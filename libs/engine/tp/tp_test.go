package tp_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/engine/tp"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/shard"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/graph/testmodels/zoo"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
	"carve.dev/libs/kernels/sim"
)

// tolerance bounds max |sharded - unsharded| / max(1, |unsharded|) over a run's logits: the
// split reassociates float32 sums (a row-parallel product is the sum of the ranks' partial
// products, each over its own columns), so the outputs agree to float32 rounding, not bit for
// bit.
const tolerance = 1e-5

func newSim(t testing.TB) tp.Device {
	t.Helper()
	be, err := sim.Open(kernels.OpenOptions{Memory: 1 << 28, Workers: 1})
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, al.Close())
		require.NoError(t, be.Close())
	})
	return tp.Device{Backend: be, Alloc: al}
}

func fused(t testing.TB, fx testmodels.Model) *graph.Model {
	t.Helper()
	m, err := graph.Load(fx.WriteTemp(t))
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	fo, err := engine.FuseOptions(engine.Options{Target: kernels.CPU(1)})
	require.NoError(t, err)
	f, _, err := rewrite.Fuse(m, fo)
	require.NoError(t, err)
	return f
}

func envelopeOf(fx testmodels.Model) engine.Envelope {
	env := engine.Envelope{}
	for _, b := range fx.Bindings {
		for k, v := range b.Dims {
			r, ok := env[k]
			if !ok {
				r = engine.Range{Lo: v, Hi: v}
			}
			env[k] = engine.Range{Lo: min(r.Lo, v), Hi: max(r.Hi, v)}
		}
	}
	return env
}

func inputs(t testing.TB, fx testmodels.Model, m *graph.Model, b testmodels.Binding) map[string]kernels.Tensor {
	t.Helper()
	in := map[string]kernels.Tensor{}
	for name, file := range b.Inputs {
		a, err := fx.Array(file)
		require.NoError(t, err)
		v := m.Value(name)
		require.NotNil(t, v, name)
		tn, err := kernels.NewTensor(v.DType, a.Shape...)
		require.NoError(t, err)
		switch v.DType {
		case graph.Int64:
			copy(kernels.ViewAs[int64](tn.Data), a.Int64)
		case graph.Int32:
			for i, x := range a.Int64 {
				kernels.ViewAs[int32](tn.Data)[i] = int32(x)
			}
		case graph.Float32:
			copy(kernels.ViewAs[float32](tn.Data), a.Float32)
		default:
			t.Fatalf("input dtype %s", v.DType)
		}
		in[name] = tn
	}
	return in
}

// decoders are the fixtures and zoo decoders without a KV cache that shard.Split covers.
func decoders(t *testing.T) []testmodels.Model {
	var out []testmodels.Model
	for _, fx := range testmodels.Models() {
		if fx.Name == "qwen2" || fx.Name == "llama" {
			out = append(out, fx)
		}
	}
	for _, fx := range zoo.Models() {
		if fx.Task == "decoder" && fx.Exporter != "gqa_builder" && !strings.Contains(fx.Name, ".kv_") && len(fx.Bindings) > 0 {
			out = append(out, fx)
		}
	}
	return out
}

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

// TestShardedEqualsUnsharded runs every decoder that shard.Split covers at tp 2 and 4 (where its
// heads divide) on simulated devices, a rank each, at every binding, twice: the logits equal the
// unsharded run's on one simulated device within tolerance, and every rank holds a share of the
// weights.
func TestShardedEqualsUnsharded(t *testing.T) {
	ctx := context.Background()
	ran := 0
	for _, fx := range decoders(t) {
		t.Run(fx.Name, func(t *testing.T) {
			m := fused(t, fx)
			opts := engine.RuntimeOptions{Envelope: envelopeOf(fx)}
			one := newSim(t)
			rt, err := engine.NewRuntime(ctx, m, one.Backend, one.Alloc, opts)
			require.NoError(t, err)
			defer rt.Close()
			s, err := rt.NewSession()
			require.NoError(t, err)
			defer s.Close()
			for _, n := range []int{2, 4} {
				if _, _, err := shard.Split(m, 0, n, shard.Options{}); err != nil {
					var ue *shard.UnsupportedError
					var de *shard.DivisibilityError
					require.True(t, errors.As(err, &ue) || errors.As(err, &de), "%v", err)
					t.Logf("tp %d: %v", n, err)
					continue
				}
				devs := make([]tp.Device, n)
				for r := range devs {
					devs[r] = newSim(t)
				}
				tm, err := tp.Load(ctx, m, devs, opts)
				require.NoError(t, err)
				ts, err := tm.NewSession()
				require.NoError(t, err)
				for r, rrt := range tm.Ranks {
					require.Less(t, rrt.Reserve.DeviceWeightBytes, rt.Reserve.DeviceWeightBytes, "rank %d holds a share", r)
				}
				for _, b := range fx.Bindings {
					if b.Error != "" {
						continue
					}
					in := inputs(t, fx, m, b)
					want, err := s.Run(ctx, in)
					require.NoError(t, err)
					wantLogits := append([]float32(nil), want[0].Float32s()...)
					for range 2 {
						got, err := ts.Run(ctx, in)
						require.NoError(t, err, "tp %d at %v", n, b.Dims)
						require.Equal(t, want[0].Shape, got[0].Shape)
						e := maxRelErr(got[0].Float32s(), wantLogits)
						require.LessOrEqual(t, e, tolerance, "tp %d at %v", n, b.Dims)
						t.Logf("tp %d at %v: max rel err %.2g", n, b.Dims, e)
					}
					ran++
				}
				require.NoError(t, ts.Close())
				require.NoError(t, tm.Close())
			}
		})
	}
	require.Positive(t, ran)
}

// TestLoadRefusesWhatDoesNotDivide: a tp the heads do not divide is the shard's typed error,
// naming the count.
func TestLoadRefusesWhatDoesNotDivide(t *testing.T) {
	fx := testmodels.MustGet("qwen2") // 4 heads
	m := fused(t, fx)
	_, err := tp.Load(context.Background(), m, []tp.Device{newSim(t), newSim(t), newSim(t)}, engine.RuntimeOptions{Envelope: envelopeOf(fx)})
	var de *shard.DivisibilityError
	require.ErrorAs(t, err, &de)
	require.Equal(t, "attention heads", de.What)
	require.Equal(t, int64(4), de.Count)
}

// faultySim is a simulated device whose launches are counted, failing the failAt'th (0: none).
func faultySim(t testing.TB, failAt int64) (tp.Device, *alloc.Faults) {
	t.Helper()
	raw, mem, err := alloc.NewSim(alloc.SimConfig{Memory: 1 << 28})
	require.NoError(t, err)
	dev, f := alloc.InjectFaults(raw, alloc.FaultConfig{Ops: alloc.FaultLaunch, FailAt: failAt})
	be, err := sim.NewBackend(dev, mem, 1)
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		al.Close()
		raw.Close()
	})
	return tp.Device{Backend: be, Alloc: al}, f
}

// TestFailedRankReleasesTheOthers: a kernel launch failing on rank 1 halfway through a run
// aborts the communicator: Run returns rank 1's failure (not rank 0's abort it caused), rank
// 0 does not wait for ever in its collective, and the failure is sticky.
func TestFailedRankReleasesTheOthers(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := fused(t, fx)
	opts := engine.RuntimeOptions{Envelope: envelopeOf(fx)}
	in := inputs(t, fx, m, fx.Bindings[0])
	ctx := context.Background()
	counting, f := faultySim(t, 0)
	tm, err := tp.Load(ctx, m, []tp.Device{newSim(t), counting}, opts)
	require.NoError(t, err)
	s, err := tm.NewSession()
	require.NoError(t, err)
	load := f.Calls()
	_, err = s.Run(ctx, in)
	require.NoError(t, err)
	run := f.Calls() - load
	require.Positive(t, run)
	require.NoError(t, s.Close())
	require.NoError(t, tm.Close())

	faulty, _ := faultySim(t, load+run/2)
	tm, err = tp.Load(ctx, m, []tp.Device{newSim(t), faulty}, opts)
	require.NoError(t, err)
	defer tm.Close()
	s, err = tm.NewSession()
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Run(ctx, in)
	require.ErrorIs(t, err, alloc.ErrInjected)
	require.Contains(t, err.Error(), "tp: rank 1")
	_, again := s.Run(ctx, in)
	require.Equal(t, err, again)
}

func newCPU(t testing.TB) tp.Device {
	t.Helper()
	be, err := cpu.Open(kernels.OpenOptions{Memory: 1 << 28, Workers: 1})
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, al.Close())
		require.NoError(t, be.Close())
	})
	return tp.Device{Backend: be, Alloc: al}
}

// TestRunsAllocateNothing: after a pattern's first run, a sharded run on CPU devices allocates
// no Go heap object (the engine's invariant 3, which it tests on the CPU, kept across the
// ranks and their collectives); the outputs are the unsharded CPU run's within tolerance.
func TestRunsAllocateNothing(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := fused(t, fx)
	ctx := context.Background()
	tm, err := tp.Load(ctx, m, []tp.Device{newCPU(t), newCPU(t)}, engine.RuntimeOptions{Envelope: envelopeOf(fx)})
	require.NoError(t, err)
	defer tm.Close()
	s, err := tm.NewSession()
	require.NoError(t, err)
	defer s.Close()
	in := inputs(t, fx, m, fx.Bindings[0])
	got, err := s.Run(ctx, in)
	require.NoError(t, err)
	one := newCPU(t)
	rt, err := engine.NewRuntime(ctx, m, one.Backend, one.Alloc, engine.RuntimeOptions{Envelope: envelopeOf(fx)})
	require.NoError(t, err)
	defer rt.Close()
	us, err := rt.NewSession()
	require.NoError(t, err)
	defer us.Close()
	want, err := us.Run(ctx, in)
	require.NoError(t, err)
	require.LessOrEqual(t, maxRelErr(got[0].Float32s(), want[0].Float32s()), tolerance)
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := s.Run(ctx, in); err != nil {
			t.Fatal(err)
		}
	})
	require.Zero(t, allocs)
}
