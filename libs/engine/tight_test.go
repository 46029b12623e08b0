package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

// measured wraps a CPU kernel that needs no workspace into one whose Recipe is a cap, the way
// cuBLASLt's GEMM is: one part "cap" of capBytes whatever the shapes, a need that depends on the
// output's size (reported by MeasureWorkspace), and a Run that chooses within the part it is
// carved, falling back to needing nothing (another "algorithm") where its need does not fit.
// With lead set, a part "lead" that grows with the output comes before the cap, as GatedMatMul
// carves a chunk of its up product before cuBLASLt's cap.
type measured struct {
	kernels.Kernel
	capBytes int64
	need     func(numel int64) int64 // the need at an output of numel elements
	measure  func(need int64) (int64, error)
	adapted  *atomic.Int64           // runs that chose within a part smaller than their need
	lead     func(numel int64) int64 // nil, or the lead part's size at an output of numel elements
}

type measuredInstance struct {
	kernels.Instance
	k     *measured
	numel int64
}

func (k *measured) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	if err != nil {
		return nil, err
	}
	return &measuredInstance{Instance: inst, k: k, numel: numel(n.Outputs[0].Shape)}, nil
}

func (k *measured) Bound(r *kernels.NodeRange, _ kernels.Target) (kernels.Bound, error) {
	if k.lead == nil {
		return kernels.Bound{Bytes: k.capBytes, Tactic: "measured"}, nil
	}
	most := int64(1)
	for _, d := range r.Outputs[0].Dims {
		most *= d.Hi
	}
	size, err := (&measuredInstance{k: k, numel: most}).Recipe().Size()
	return kernels.Bound{Bytes: size, Tactic: "measured"}, err
}

func (i *measuredInstance) Recipe() alloc.Recipe {
	parts := []alloc.Part{{Name: "cap", Size: i.k.capBytes}}
	if i.k.lead != nil {
		parts = append([]alloc.Part{{Name: "lead", Size: i.k.lead(i.numel)}}, parts...)
	}
	return alloc.Recipe{Kernel: "measured", Parts: parts}
}

func (i *measuredInstance) MeasuredPart() int {
	if i.k.lead != nil {
		return 1
	}
	return 0
}

func (i *measuredInstance) MeasureWorkspace(kernels.Backend) (int64, error) {
	return i.k.measure(i.k.need(i.numel))
}

// Run scribbles over the whole part it was carved (the kernel may use all of it: a plan that
// placed it over a live value corrupts the outputs), then runs the real kernel.
func (i *measuredInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	p, ok := ws.Part("cap")
	if ws == nil || !ok || p.Size < alloc.DefaultPartAlign {
		return fmt.Errorf("measured: no workspace carved")
	}
	if i.k.need(i.numel) > p.Size {
		i.k.adapted.Add(1)
	}
	for _, name := range []string{"lead", "cap"} {
		if name == "lead" && i.k.lead == nil {
			continue
		}
		b := ws.Bytes(name)
		if name == "lead" && int64(len(b)) < i.k.lead(i.numel) {
			return fmt.Errorf("measured: lead part of %d bytes, want %d", len(b), i.k.lead(i.numel))
		}
		for j := range b {
			b[j] = 0xa5
		}
	}
	return i.Instance.Run(in, out, nil, s)
}

// measuredRegistry is the CPU registry with Add replaced by a measured Add of a 1 MiB cap that
// needs 4 bytes per output element, except at outputs whose size is a multiple of 7, where it
// wants the whole cap (the gpt2 fixture's candidates, batch 1 or 3 by seq 1 or 16, have none).
func measuredRegistry(t *testing.T, measure func(int64) (int64, error), adapted *atomic.Int64) *kernels.Registry {
	return measuredRegistryLead(t, measure, adapted, nil)
}

// measuredRegistryLead is measuredRegistry with the measured Add's lead part (nil: none).
func measuredRegistryLead(t *testing.T, measure func(int64) (int64, error), adapted *atomic.Int64, lead func(int64) int64) *kernels.Registry {
	return registryWith(t, &measured{capBytes: 1 << 20, adapted: adapted, measure: measure, lead: lead, need: func(numel int64) int64 {
		if numel%7 == 0 {
			return 1 << 20
		}
		return 4 * numel
	}})
}

// registryWith is the CPU registry with Add replaced by k.
func registryWith(t *testing.T, k *measured) *kernels.Registry {
	reg := kernels.NewRegistry()
	for _, c := range cpu.Kernels() {
		if c.Op() == kernels.Key("", "Add") {
			k.Kernel = c
			c = k
		}
		require.NoError(t, reg.Register(c))
	}
	return reg
}

func numel(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func exact(need int64) (int64, error) { return need, nil }

var tightEnv = Envelope{"batch": {Lo: 1, Hi: 3}, "seq": {Lo: 1, Hi: 16}}

// Without kernels whose Recipe is a cap (the CPU's and the simulated device's), the tight plan
// is the default one and saves nothing.
func TestTightPlanWithoutMeasurers(t *testing.T) {
	m := loadFixture(t, "gpt2")
	cpuBE, cpuAl := newCPU(t, 1<<30)
	simBE, simAl := newSim(t, 1<<30)
	for _, tc := range []struct {
		be kernels.Backend
		al *alloc.Allocator
	}{{cpuBE, cpuAl}, {simBE, simAl}} {
		t.Run(tc.be.Name(), func(t *testing.T) {
			rt, err := NewRuntime(context.Background(), m, tc.be, tc.al, RuntimeOptions{Envelope: tightEnv, Tight: true})
			require.NoError(t, err)
			defer rt.Close()
			tp, err := rt.Tight(context.Background())
			require.NoError(t, err)
			require.Zero(t, tp.Measured)
			require.Empty(t, tp.Kernels)
			require.Same(t, tp.Default, tp.Plan)
			require.Same(t, rt.Reserve, tp.Plan)
			require.Zero(t, tp.Saved())
		})
	}
}

// A kernel whose need is below its cap: the tight plan reports W, C and R for it, plans a
// smaller arena, and RuntimeOptions.Tight reserves exactly that plan.
func TestTightPlan(t *testing.T) {
	m := loadFixture(t, "gpt2")
	be, al := newCPU(t, 1<<30)
	var adapted atomic.Int64
	opts := RuntimeOptions{Options: Options{Workers: 2, FullWorkspace: true, Registry: measuredRegistry(t, exact, &adapted)}, Envelope: tightEnv}
	rt, err := NewRuntime(context.Background(), m, be, al, opts)
	require.NoError(t, err)
	defer rt.Close()
	tp, err := rt.Tight(context.Background())
	require.NoError(t, err)
	require.Same(t, rt.Reserve, tp.Default, "the default runtime reserves the default plan")
	require.NotEmpty(t, tp.Kernels)
	require.Equal(t, tp.Measured, len(tp.Kernels), "every measured Add needs less than its cap")
	for _, k := range tp.Kernels {
		require.Equal(t, int64(1<<20), k.W, k.Node.String())
		require.Equal(t, int64(1<<20), k.C)
		require.Less(t, k.R, k.C)
		require.Equal(t, max(k.R, alloc.DefaultPartAlign), k.Capacity)
		require.Equal(t, "Add", k.Node.OpType)
		require.Contains(t, []int64{1, 3}, k.At["batch"], "R is measured at the candidates")
	}
	for i := 1; i < len(tp.Kernels); i++ {
		a, b := tp.Kernels[i-1], tp.Kernels[i]
		require.GreaterOrEqual(t, a.C-a.Capacity, b.C-b.Capacity, "largest saving first")
	}
	require.Less(t, tp.Plan.ArenaBytes, tp.Default.ArenaBytes)
	require.Equal(t, alloc.ReservedSize(tp.Default.ArenaBytes)-alloc.ReservedSize(tp.Plan.ArenaBytes), tp.Saved())
	require.Positive(t, tp.Saved())
	require.Equal(t, len(tp.Default.Candidates), len(tp.Plan.Candidates), "the same candidates")

	opts.Tight = true
	trt, err := NewRuntime(context.Background(), m, be, al, opts)
	require.NoError(t, err)
	defer trt.Close()
	ttp, err := trt.Tight(context.Background())
	require.NoError(t, err)
	require.Same(t, trt.Reserve, ttp.Plan, "--tight reserves the tight plan")
	require.Equal(t, tp.Plan.ArenaBytes, trt.Reserve.ArenaBytes, "the same plan, planned twice")
	s, err := trt.NewSession()
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, alloc.ReservedSize(trt.Reserve.ArenaBytes), alloc.ReservedSize(s.arena.Size()))
}

// The tight plan's invariant (tight.go): every binding inside the envelope runs within the tight
// reservation, with the outputs of the default one, also where a kernel's need exceeds its
// capacity (it chooses within what it is carved); and what can fail, fails at load.
func TestTightInvariant(t *testing.T) {
	m := loadFixture(t, "gpt2")
	be, al := newCPU(t, 1<<30)
	var adapted atomic.Int64
	reg := measuredRegistry(t, exact, &adapted)
	opts := RuntimeOptions{Options: Options{Workers: 2, FullWorkspace: true, Registry: reg}, Envelope: tightEnv}
	def, ds := newSession(t, m, be, al, opts)
	opts.Tight = true
	tight, ts := newSession(t, m, be, al, opts)
	require.Less(t, tight.Reserve.ArenaBytes, def.Reserve.ArenaBytes)
	ctx := context.Background()
	runTightBindings(t, m, tight, ds, ts, func(dims Binding, ti *carved, st Step) {
		require.Equal(t, ti.size, st.Workspace, "%v: one capacity at every binding", dims)
	})
	require.Zero(t, tight.Stats().DynamicWorkspace)
	require.Positive(t, adapted.Load(), "some bindings needed more than their capacity and chose within it")

	t.Run("need above the recipe fails at load", func(t *testing.T) {
		o := RuntimeOptions{Options: Options{Workers: 2, FullWorkspace: true, Registry: measuredRegistry(t, func(int64) (int64, error) { return 2 << 20, nil }, &adapted)},
			Envelope: tightEnv, Tight: true}
		_, err := NewRuntime(ctx, m, be, al, o)
		var te *TightError
		require.True(t, errors.As(err, &te), "got %v", err)
		require.Equal(t, int64(2<<20), te.Need)
		require.Equal(t, int64(1<<20), te.Recipe)
		require.Contains(t, err.Error(), "kernel bug")
		// Without --tight the need is not asked for, and the runtime loads.
		o.Tight = false
		rt, err := NewRuntime(ctx, m, be, al, o)
		require.NoError(t, err)
		_, err = rt.Tight(ctx)
		require.True(t, errors.As(err, &te), "got %v", err)
		require.NoError(t, rt.Close())
	})
	t.Run("a failed measurement fails at load", func(t *testing.T) {
		boom := errors.New("no device")
		o := RuntimeOptions{Options: Options{Workers: 2, FullWorkspace: true, Registry: measuredRegistry(t, func(int64) (int64, error) { return 0, boom }, &adapted)},
			Envelope: tightEnv, Tight: true}
		_, err := NewRuntime(ctx, m, be, al, o)
		var te *TightError
		require.True(t, errors.As(err, &te), "got %v", err)
		require.ErrorIs(t, err, boom)
		require.Zero(t, al.Stats().Allocations.Current, "nothing reserved")
	})
}

// runTightBindings runs every binding of tightEnv through the default session ds and the tight
// session ts of runtime tight: each fits the tight reservation as planned and gives the default
// outputs, bit for bit. check sees every tightened step of each binding's plan.
func runTightBindings(t *testing.T, m *graph.Model, tight *Runtime, ds, ts *Session, check func(Binding, *carved, Step)) {
	t.Helper()
	ctx := context.Background()
	for batch := int64(1); batch <= 3; batch++ {
		for _, seq := range []int64{1, 2, 5, 7, 9, 14, 16} {
			dims := Binding{"batch": batch, "seq": seq}
			in := zeroInputs(t, m, dims)
			for name, tn := range in {
				if strings.Contains(name, "mask") {
					for i := range tn.Int64s() {
						tn.Int64s()[i] = 1
					}
				}
			}
			p, err := tight.pattern(ctx, dims)
			require.NoError(t, err)
			require.LessOrEqual(t, p.Plan.Peak, tight.Reserve.ArenaBytes, "%v fits the tight reservation as planned", dims)
			for _, st := range p.Steps {
				if ti, ok := st.Instance.(*carved); ok {
					check(dims, ti, st)
				}
			}
			want, err := ds.Run(ctx, in)
			require.NoError(t, err, "%v", dims)
			wantBytes := make([][]byte, len(want))
			for i, o := range want {
				wantBytes[i] = append([]byte(nil), o.Data...)
			}
			got, err := ts.Run(ctx, in)
			require.NoError(t, err, "%v", dims)
			for i := range got {
				require.Equal(t, wantBytes[i], got[i].Data, "%v: output %d", dims, i)
			}
		}
	}
}

// A measured part beside a part that grows with the shapes (tight.go's invariant 1): the tight
// plan lowers the measured part only, to one capacity at every binding, and the other part keeps
// the default plan's size, binding by binding.
func TestTightPart(t *testing.T) {
	m := loadFixture(t, "gpt2")
	be, al := newCPU(t, 1<<30)
	var adapted atomic.Int64
	lead := func(numel int64) int64 { return 8 * numel }
	opts := RuntimeOptions{Options: Options{Workers: 2, FullWorkspace: true, Registry: measuredRegistryLead(t, exact, &adapted, lead)}, Envelope: tightEnv}
	def, ds := newSession(t, m, be, al, opts)
	opts.Tight = true
	tight, ts := newSession(t, m, be, al, opts)
	tp, err := tight.Tight(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, tp.Kernels)
	for _, k := range tp.Kernels {
		require.Equal(t, "cap", k.Part)
		require.Equal(t, int64(1<<20), k.C, "C is the measured part's cap")
		require.Greater(t, k.W, k.C, "W is the whole workspace's bound")
	}
	require.Less(t, tight.Reserve.ArenaBytes, def.Reserve.ArenaBytes)
	runTightBindings(t, m, tight, ds, ts, func(dims Binding, ti *carved, st Step) {
		parts := ti.Recipe().Parts
		require.Len(t, parts, 2)
		require.Equal(t, ti.size, parts[1].Size, "%v: one capacity at every binding", dims)
		ws, err := ti.Recipe().Size()
		require.NoError(t, err)
		require.Equal(t, ws, st.Workspace, "%v", dims)
		def := ti.Instance.Recipe().Parts
		require.Equal(t, def[0], parts[0], "%v: the lead part as in the default plan", dims)
		require.Equal(t, int64(1<<20), def[1].Size, "the instance's own Recipe is untouched")
	})
	require.Zero(t, tight.Stats().DynamicWorkspace)
}

// The tight plan is deterministic: planned twice, the same arena (the runner's report and its
// reservation agree).
func TestTightPlanDeterministic(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := loadFixture(t, fx.Name)
	be, _ := newCPU(t, 1<<30)
	var adapted atomic.Int64
	opts := Options{Workers: 2, FullWorkspace: true, Registry: measuredRegistry(t, exact, &adapted)}
	ep, err := PlanEnvelope(context.Background(), m, tightEnv, opts)
	require.NoError(t, err)
	a, err := TightenEnvelope(context.Background(), m, be, ep, opts)
	require.NoError(t, err)
	b, err := TightenEnvelope(context.Background(), m, be, ep, opts)
	require.NoError(t, err)
	require.Equal(t, a.Plan.ArenaBytes, b.Plan.ArenaBytes)
	require.Equal(t, len(a.Kernels), len(b.Kernels))
}
