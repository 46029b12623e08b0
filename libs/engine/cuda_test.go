//go:build cuda

package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
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

// wideEnvelope is each fixture's second envelope for the exactness checks, wider than the
// bindings onnxruntime ran at (batch 1..3, seq 1..16): every fixture admits it, and none of its
// candidates has batch == seq > 1, which contrib_gqa's ReduceSum cannot tell apart.
var wideEnvelope = Envelope{"batch": {Lo: 1, Hi: 6}, "seq": {Lo: 1, Hi: 64}}

// cudaCase is one fixture model as the runner and the estimator load it (fused) or as
// exported, at one envelope.
type cudaCase struct {
	name string
	m    *graph.Model
	env  Envelope
}

// cudaCases are every fixture with bindings, as exported and fused for CUDA, at its own
// envelope and the wide one.
func cudaCases(t *testing.T) []cudaCase {
	fo, err := FuseOptions(Options{Target: kernels.KnownGPUs["h200"]})
	require.NoError(t, err)
	var out []cudaCase
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		m := loadFixture(t, fx.Name)
		fused, _, err := rewrite.Fuse(m, fo)
		require.NoError(t, err)
		for _, v := range []struct {
			name string
			m    *graph.Model
		}{{"exported", m}, {"fused", fused}} {
			out = append(out, cudaCase{fx.Name + "/" + v.name + "/own", v.m, envelopeOf(fx)},
				cudaCase{fx.Name + "/" + v.name + "/wide", v.m, wideEnvelope})
		}
	}
	return out
}

// The estimate for the h200 (PlanEnvelope with the named target, what `estimator report
// --target h200` prints on a machine without a GPU) equals, to the byte, what the runtime plans
// and reserves on the H200: the arena, the workspace bound, the weights, and the allocator's
// reserved bytes once a session is open; for every fixture at two envelopes.
func TestCUDAEstimateExact(t *testing.T) {
	be, al := newCUDA(t)
	h200 := kernels.KnownGPUs["h200"]
	ctx := context.Background()
	for _, tc := range cudaCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			ep, err := PlanEnvelope(ctx, tc.m, tc.env, Options{Target: h200})
			var mk *MissingKernelsError
			if errors.As(err, &mk) {
				t.Skipf("no CUDA kernel yet: %v", mk)
			}
			require.NoError(t, err)
			base := al.Stats().ReservedBytes
			rt, err := NewRuntime(ctx, tc.m, be, al, RuntimeOptions{Envelope: tc.env})
			require.NoError(t, err)
			defer func() { require.NoError(t, rt.Close()) }()
			s, err := rt.NewSession()
			require.NoError(t, err)
			defer func() { require.NoError(t, s.Close()) }()
			got := rt.Reserve
			require.Equal(t, ep.ArenaBytes, got.ArenaBytes, "arena")
			require.Equal(t, ep.WorkspaceBound(), got.WorkspaceBound(), "workspace bound")
			require.Equal(t, ep.DeviceWeightBytes, got.DeviceWeightBytes, "device weights")
			require.Equal(t, ep.Worst.Binding.Dims, got.Worst.Binding.Dims, "worst binding")
			require.Equal(t, len(ep.Candidates), len(got.Candidates), "candidates")
			reserved := al.Stats().ReservedBytes - base
			require.Equal(t, ep.DeviceWeightBytes+alloc.ReservedSize(max(ep.ArenaBytes, 1)), reserved, "reserved on the device")
			t.Logf("%s: estimate == reservation: arena %d, workspace bound %d, weights %d, reserved %d", tc.env, ep.ArenaBytes,
				ep.WorkspaceBound(), ep.DeviceWeightBytes, reserved)
		})
	}
}

// randomInputs makes inputs for m at dims: floats uniform in [-1, 1), masks all ones, other
// integers (token ids, token types) zero.
func randomInputs(t *testing.T, m *graph.Model, dims Binding, seed uint64) map[string]kernels.Tensor {
	in := zeroInputs(t, m, dims)
	rng := rand.New(rand.NewPCG(seed, 1))
	for name, tn := range in {
		mask := strings.Contains(name, "mask")
		switch tn.DType {
		case graph.Float32:
			for i := range tn.Float32s() {
				tn.Float32s()[i] = float32(rng.Float64()*2 - 1)
				if mask {
					tn.Float32s()[i] = 1
				}
			}
		case graph.Int64:
			if mask {
				for i := range tn.Int64s() {
					tn.Int64s()[i] = 1
				}
			}
		case graph.Int32:
			if mask {
				for i := range tn.Int32s() {
					tn.Int32s()[i] = 1
				}
			}
		}
	}
	return in
}

// The tight plan on the H200 (tight.go): the cuBLASLt GEMMs' needs, measured at the envelope's
// candidates, give an arena no larger than the default one; the runtime that reserves it
// (RuntimeOptions.Tight, `runner --tight`) runs every fixture binding within onnxruntime's
// tolerance and, across the wide envelope, bindings between the candidates with the default
// runtime's outputs, allocating nothing. Both plan full workspaces (Options.FullWorkspace): by
// default a GEMM's cap gets only what the plan leaves free, and there is nothing to tighten.
func TestCUDATight(t *testing.T) {
	be, al := newCUDA(t)
	ctx := context.Background()
	var saved, lowered int64
	for _, tc := range cudaCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			full := Options{FullWorkspace: true}
			rt, err := NewRuntime(ctx, tc.m, be, al, RuntimeOptions{Options: full, Envelope: tc.env})
			var mk *MissingKernelsError
			if errors.As(err, &mk) {
				t.Skipf("no CUDA kernel yet: %v", mk)
			}
			require.NoError(t, err)
			defer func() { require.NoError(t, rt.Close()) }()
			tp, err := rt.Tight(ctx)
			require.NoError(t, err)
			require.Same(t, rt.Reserve, tp.Default)
			trt, err := NewRuntime(ctx, tc.m, be, al, RuntimeOptions{Options: full, Envelope: tc.env, Tight: true})
			require.NoError(t, err)
			defer func() { require.NoError(t, trt.Close()) }()
			require.LessOrEqual(t, trt.Reserve.ArenaBytes, rt.Reserve.ArenaBytes, "tight <= default")
			require.Equal(t, tp.Plan.ArenaBytes, trt.Reserve.ArenaBytes, "the reported tight plan is the one reserved")
			for _, k := range tp.Kernels {
				require.LessOrEqual(t, k.R, k.C)
				require.LessOrEqual(t, k.C, k.W)
			}
			saved += tp.Saved()
			lowered += int64(len(tp.Kernels))
			t.Logf("%s: %d GEMMs measured, %d below their cap; arena %d -> %d, %d saved", tc.env, tp.Measured, len(tp.Kernels),
				tp.Default.ArenaBytes, tp.Plan.ArenaBytes, tp.Saved())
			for i, k := range tp.Kernels {
				if i == 3 {
					break
				}
				t.Logf("  %s: W %d C %d R %d at %s", k.Node, k.W, k.C, k.R, k.At)
			}
			ts, err := trt.NewSession()
			require.NoError(t, err)
			defer func() { require.NoError(t, ts.Close()) }()
			ds, err := rt.NewSession()
			require.NoError(t, err)
			defer func() { require.NoError(t, ds.Close()) }()

			var bindings []Binding
			fx := testmodels.MustGet(strings.SplitN(tc.name, "/", 2)[0])
			if tc.env.String() == envelopeOf(fx).String() {
				// The fixture's bindings, against onnxruntime.
				for _, b := range fx.Bindings {
					if b.Error != "" {
						continue
					}
					out, err := ts.Run(ctx, fixtureInputs(t, tc.m, b))
					require.NoError(t, err, "binding %v", b.Dims)
					for i, v := range tc.m.Outputs {
						file, ok := b.Outputs[v.Name]
						if !ok || v.DType != graph.Float32 {
							continue
						}
						want, err := testmodels.ReadArray(file)
						require.NoError(t, err)
						e := relErrOf(v.DType, out[i].Data, want.Float32)
						require.LessOrEqual(t, e, 1e-3, "%s at %v", v.Name, b.Dims)
					}
				}
			} else {
				bindings = []Binding{{"batch": 1, "seq": 64}, {"batch": 6, "seq": 1}, {"batch": 6, "seq": 64},
					{"batch": 2, "seq": 37}, {"batch": 5, "seq": 23}, {"batch": 3, "seq": 50}}
			}
			// Bindings of the wide envelope, the tight runtime against the default one.
			for k, dims := range bindings {
				in := randomInputs(t, tc.m, dims, uint64(k))
				want, err := ds.Run(ctx, in)
				require.NoError(t, err, "%v", dims)
				wantF := make([][]float32, len(want))
				for i, o := range want {
					if o.DType == graph.Float32 {
						wantF[i] = append([]float32(nil), o.Float32s()...)
					}
				}
				got, err := ts.Run(ctx, in)
				require.NoError(t, err, "%v", dims)
				for i, o := range got {
					if wantF[i] != nil {
						e := relErrOf(o.DType, o.Data, wantF[i])
						require.LessOrEqual(t, e, 1e-3, "output %d at %v", i, dims)
					}
				}
			}
			require.Zero(t, trt.Stats().DynamicWorkspace)
		})
	}
	t.Logf("tight plans: %d GEMM workspaces below their cap, %d bytes saved in all", lowered, saved)
}

// A profiled run times every kernel of its program, graphs or not, and gives the same outputs.
func TestCUDAProfile(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := loadFixture(t, fx.Name)
	be, al := newCUDA(t)
	_, s := newSession(t, m, be, al, RuntimeOptions{Envelope: envelopeOf(fx), Graphs: true})
	in := fixtureInputs(t, m, fx.Bindings[0])
	out, err := s.Run(context.Background(), in)
	require.NoError(t, err)
	want := make([][]byte, len(out))
	for i, o := range out {
		want[i] = append([]byte(nil), o.Data...)
	}
	var p Profile
	require.NoError(t, s.Profile(&p))
	for range 2 {
		out, err = s.Run(context.Background(), in)
		require.NoError(t, err)
	}
	require.NoError(t, s.Profile(nil))
	for i, o := range out {
		require.Equal(t, want[i], o.Data, "output %d profiled", i)
	}
	require.Equal(t, 2, p.Runs)
	require.NotEmpty(t, p.Kernels)
	for _, k := range p.Kernels {
		require.Equal(t, 2, k.Launches, k.Node.Name)
		require.Greater(t, k.Ms, 0.0, k.Node.Name)
	}
	require.Greater(t, p.Floor(), 0.0, "an empty kernel timed as the kernels are")
	stall := float64(ProfileStall) / float64(time.Millisecond)
	for _, k := range p.Kernels {
		require.Less(t, k.Ms, 2*stall, "%s: the stall is not counted", k.Node.Name)
	}
	t.Logf("profile: %d kernels, %.3f ms per run, floor %.4f ms per kernel", len(p.Kernels), p.TotalMs()/2, p.Floor())
}

// TestCUDATorchScriptPatterns runs the TorchScript patterns (torchscript_test.go: Constants in
// every form, tied weights through Identity, host-computed shape data that kernels read) on the
// GPU, eager and as CUDA graphs: the CPU's outputs (integers exactly, floats within 1e-5), and a
// second run of each pattern allocates nothing.
func TestCUDATorchScriptPatterns(t *testing.T) {
	same := func(dt graph.DType, want, got []byte) bool {
		if dt != graph.Float32 {
			return string(want) == string(got)
		}
		return len(want) == len(got) && relErrOf(dt, got, kernels.ViewAs[float32](want)) <= 1e-5
	}
	for _, tm := range tsModels {
		t.Run(tm.name, func(t *testing.T) {
			requireDeviceMatchesCPU(t, tm.build(t), tsEnv, newCUDA, same, tsBindings...)
		})
	}
}
