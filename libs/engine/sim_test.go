package engine

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/sim"
)

// newSim opens a simulated discrete device with 2 workers and an allocator over it, closed when
// the test ends.
func newSim(t testing.TB, memory int64) (*sim.Backend, *alloc.Allocator) {
	t.Helper()
	be, err := sim.Open(kernels.OpenOptions{Memory: memory, Workers: 2})
	require.NoError(t, err)
	al, err := alloc.New(be.Device(), alloc.Options{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, al.Close())
		require.NoError(t, be.Close())
	})
	return be, al
}

// newHostBackend opens the CPU (kernels.BackendCPU) or the simulated discrete device
// (kernels.BackendSim), the two backends CI runs everywhere, for tests that run a model on both.
func newHostBackend(t testing.TB, kind string, memory int64) (kernels.Backend, *alloc.Allocator) {
	t.Helper()
	if kind == kernels.BackendCPU {
		return newCPU(t, memory)
	}
	return newSim(t, memory)
}

// TestSimMatchesCPUByteForByte runs every fixture binding on the simulated discrete device and on
// the CPU: the outputs must be the same bytes, and the device path must have copied the weights
// once, the inputs every run and the outputs every run.
func TestSimMatchesCPUByteForByte(t *testing.T) {
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			m := loadFixture(t, fx.Name)
			opts := RuntimeOptions{Envelope: envelopeOf(fx)}
			cb, cal := newCPU(t, 1<<30)
			_, cs := newSession(t, m, cb, cal, opts)
			sb, sal := newSim(t, 1<<30)
			srt, ss := newSession(t, m, sb, sal, opts)
			up := sb.Counters().Uploads
			require.Positive(t, up, "weights uploaded at load")
			runs := 0
			for _, b := range fx.Bindings {
				if b.Error != "" {
					continue
				}
				in := fixtureInputs(t, m, b)
				for rep := 0; rep < 2; rep++ {
					want, err := cs.Run(context.Background(), in)
					require.NoError(t, err, "cpu at %v", b.Dims)
					got, err := ss.Run(context.Background(), in)
					require.NoError(t, err, "sim at %v", b.Dims)
					runs++
					require.Len(t, got, len(want))
					for i := range want {
						require.Equal(t, want[i].Shape, got[i].Shape, "%s at %v", m.Outputs[i].Name, b.Dims)
						require.True(t, bytes.Equal(want[i].Data, got[i].Data), "%s at %v: sim and cpu differ", m.Outputs[i].Name, b.Dims)
					}
				}
			}
			c := sb.Counters()
			require.Equal(t, int64(runs*len(m.Outputs)), c.Downloads, "one copy out per output and run")
			require.GreaterOrEqual(t, c.Uploads-up, int64(runs), "inputs copied in every run")
			st := srt.Stats()
			require.Equal(t, c, st.Copies)
			require.Equal(t, srt.Reserve.DeviceWeightBytes, st.ResidentWeights)
		})
	}
}

// TestSimPathMistakesFailLoudly plants the mistakes the device path must never make — a weight
// that was not uploaded, an input that was not copied in, a device tensor bound to host bytes —
// and checks that each is a clear error, not a wrong answer.
func TestSimPathMistakesFailLoudly(t *testing.T) {
	fx := testmodels.Model{}
	for _, f := range testmodels.Models() {
		if f.Name == "gpt2" {
			fx = f
		}
	}
	require.NotEmpty(t, fx.Bindings)
	m := loadFixture(t, fx.Name)
	in := fixtureInputs(t, m, fx.Bindings[0])
	opts := RuntimeOptions{Envelope: envelopeOf(fx)}

	// faulty makes a runtime and session on a simulated device that the test will fault: a
	// fault is sticky, so closing them afterwards fails too, and that is not checked.
	faulty := func(t *testing.T) (*sim.Backend, *Runtime, *Session) {
		be, err := sim.Open(kernels.OpenOptions{Memory: 1 << 30, Workers: 2})
		require.NoError(t, err)
		al, err := alloc.New(be.Device(), alloc.Options{})
		require.NoError(t, err)
		rt, err := NewRuntime(context.Background(), m, be, al, opts)
		require.NoError(t, err)
		s, err := rt.NewSession()
		require.NoError(t, err)
		t.Cleanup(func() { s.Close(); al.Close(); be.Close() })
		return be, rt, s
	}
	t.Run("weight not uploaded", func(t *testing.T) {
		be, rt, s := faulty(t)
		// Point one weight at device memory that nothing wrote, as a forgotten upload would.
		fresh, err := be.Device().Malloc(1 << 20)
		require.NoError(t, err)
		for _, v := range m.Initializers {
			if rt.weights[v.ID].ptr != 0 && v.Init.Size <= 1<<20 {
				rt.weights[v.ID].ptr = fresh
				break
			}
		}
		_, err = s.Run(context.Background(), in)
		var ur *alloc.UninitializedReadError
		require.ErrorAs(t, err, &ur)
		require.Contains(t, err.Error(), "never written")
	})
	t.Run("input not copied in", func(t *testing.T) {
		_, _, s := faulty(t)
		prog, err := s.program(context.Background(), in)
		require.NoError(t, err)
		for i := range prog.inputAt {
			prog.inputAt[i] = 0 // the copies are skipped; the arena was never written
		}
		s.last = prog
		_, err = s.Run(context.Background(), in)
		var ur *alloc.UninitializedReadError
		require.ErrorAs(t, err, &ur)
	})
	t.Run("device tensor with host data", func(t *testing.T) {
		_, _, s := faulty(t)
		prog, err := s.program(context.Background(), in)
		require.NoError(t, err)
		ps := &prog.steps[0]
		ps.in[0].Data = make([]byte, 4) // as if the engine had bound host bytes
		s.last = prog
		_, err = s.Run(context.Background(), in)
		require.ErrorIs(t, err, sim.ErrHostData)
	})
}

// TestSimReservationCountsWeights checks Level 2 on a discrete device: the weights and every
// session's arena are counted against the device's memory before anything is uploaded.
func TestSimReservationCountsWeights(t *testing.T) {
	fx := testmodels.Model{}
	for _, f := range testmodels.Models() {
		if f.Name == "gpt2" {
			fx = f
		}
	}
	m := loadFixture(t, fx.Name)
	env := envelopeOf(fx)
	ep, err := PlanEnvelope(context.Background(), m, env, Options{Target: kernels.Target{Backend: kernels.BackendSim, Workers: 2}})
	require.NoError(t, err)
	require.Positive(t, ep.DeviceWeightBytes)
	need := ep.DeviceWeightBytes + 2*alloc.ReservedSize(ep.ArenaBytes)
	be, al := newSim(t, need-1)
	_, err = NewRuntime(context.Background(), m, be, al, RuntimeOptions{Envelope: env, Sessions: 2})
	var re *ReservationError
	require.ErrorAs(t, err, &re)
	require.Equal(t, ep.DeviceWeightBytes, re.Weights)
	require.Equal(t, need, re.Needed)
	require.Positive(t, re.Short())
	require.Zero(t, be.Counters().Uploads, "nothing uploaded before the check")

	be2, al2 := newSim(t, need+4<<20)
	rt, err := NewRuntime(context.Background(), m, be2, al2, RuntimeOptions{Envelope: env, Sessions: 2})
	require.NoError(t, err)
	require.Equal(t, ep.DeviceWeightBytes, al2.Stats().ReservedBytes, "the weights are one reservation")
	require.NoError(t, rt.Close())
	require.Zero(t, al2.Stats().ReservedBytes)
}

// TestProgramsAreBounded checks the per-session program cache: at most Programs patterns are kept,
// least recently used out first, and the counters say so.
func TestProgramsAreBounded(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	env := envelopeOf(fx)
	dim := m.DimNames[len(m.DimNames)-1]
	r := env[dim]
	r.Hi = r.Lo + 3
	env[dim] = r
	be, al := newCPU(t, 1<<30)
	rt, s := newSession(t, m, be, al, RuntimeOptions{Envelope: env, Programs: 2})
	for _, d := range []int64{0, 1, 2, 0} {
		dims := Binding{}
		for n, r := range env {
			dims[n] = r.Lo
		}
		dims[dim] = r.Lo + d
		_, err := s.Run(context.Background(), zeroInputs(t, m, dims))
		require.NoError(t, err)
	}
	st := rt.Stats().Programs
	require.Equal(t, int64(4), st.Misses, "the first pattern was evicted by the third and bound again")
	require.Equal(t, int64(2), st.Evictions)
	require.Equal(t, 2, st.Len)
}

// TestEngineNamesNoBackend fails if the engine imports a backend package: backends register
// themselves, and programs choose which to link.
func TestEngineNamesNoBackend(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		pf, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range pf.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			require.False(t, strings.HasPrefix(path, "carve.dev/libs/kernels/"), "%s imports %s", f, path)
		}
		checked++
	}
	require.Greater(t, checked, 5, "the engine's sources are visible to the test (Bazel: data = glob([\"*.go\"]))")
}

// zeroInputs makes zero-filled inputs for m at dims.
func zeroInputs(t testing.TB, m *graph.Model, dims Binding) map[string]kernels.Tensor {
	t.Helper()
	b, err := graph.Bind(m, dims)
	require.NoError(t, err)
	in := map[string]kernels.Tensor{}
	for _, v := range m.Inputs {
		tn, err := kernels.NewTensor(v.DType, b.Shape(v)...)
		require.NoError(t, err)
		in[v.Name] = tn
	}
	return in
}

// TestFuseOptionsFollowTheKernels: the CPU has a kernel for every fused op but
// dev.carve.GatedMatMul (a GPU kernel); a registry without ONNX Attention skips attention
// fusion too, and the attention-layout fusion over its nodes, and only those.
func TestFuseOptionsFollowTheKernels(t *testing.T) {
	fo, err := FuseOptions(Options{Workers: 1})
	require.NoError(t, err)
	require.Equal(t, []rewrite.Kind{rewrite.GatedMatMul}, fo.Skip)

	cpuReg, err := kernels.RegistryFor(kernels.BackendCPU)
	require.NoError(t, err)
	reg := kernels.NewRegistry()
	for _, info := range cpuReg.Ops(kernels.BackendCPU) {
		if info.Op == kernels.Key("", "Attention") {
			continue
		}
		k, err := cpuReg.Lookup(kernels.BackendCPU, info.Op)
		require.NoError(t, err)
		require.NoError(t, reg.Register(k))
	}
	fo, err = FuseOptions(Options{Workers: 1, Registry: reg})
	require.NoError(t, err)
	require.Equal(t, []rewrite.Kind{rewrite.GatedMatMul, rewrite.Attention, rewrite.AttentionLayout}, fo.Skip)
}
