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
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

// measured wraps a CPU kernel that needs no workspace into one whose Recipe is a cap, the way
// cuBLASLt's GEMM is: one part "cap" of capBytes whatever the shapes, a need that depends on the
// output's size (reported by MeasureWorkspace), and a Run that chooses within the part it is
// carved, falling back to needing nothing (another "algorithm") where its need does not fit.
type measured struct {
	kernels.Kernel
	capBytes int64
	need     func(numel int64) int64 // the need at an output of numel elements
	measure  func(need int64) (int64, error)
	adapted  *atomic.Int64 // runs that chose within a part smaller than their need
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

func (k *measured) Bound(*kernels.NodeRange, kernels.Target) (kernels.Bound, error) {
	return kernels.Bound{Bytes: k.capBytes, Tactic: "measured"}, nil
}

func (i *measuredInstance) Recipe() alloc.Recipe {
	return alloc.Recipe{Kernel: "measured", Parts: []alloc.Part{{Name: "cap", Size: i.k.capBytes}}}
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
	b := ws.Bytes("cap")
	for j := range b {
		b[j] = 0xa5
	}
	return i.Instance.Run(in, out, nil, s)
}

// measuredRegistry is the CPU registry with Add replaced by a measured Add of a 1 MiB cap that
// needs 4 bytes per output element, except at outputs whose size is a multiple of 7, where it
// wants the whole cap (the gpt2 fixture's candidates, batch 1 or 3 by seq 1 or 16, have none).
func measuredRegistry(t *testing.T, measure func(int64) (int64, error), adapted *atomic.Int64) *kernels.Registry {
	reg := kernels.NewRegistry()
	k := &measured{capBytes: 1 << 20, adapted: adapted, measure: measure, need: func(numel int64) int64 {
		if numel%7 == 0 {
			return 1 << 20
		}
		return 4 * numel
	}}
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
	opts := RuntimeOptions{Options: Options{Workers: 2, Registry: measuredRegistry(t, exact, &adapted)}, Envelope: tightEnv}
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
	opts := RuntimeOptions{Options: Options{Workers: 2, Registry: reg}, Envelope: tightEnv}
	def, ds := newSession(t, m, be, al, opts)
	opts.Tight = true
	tight, ts := newSession(t, m, be, al, opts)
	require.Less(t, tight.Reserve.ArenaBytes, def.Reserve.ArenaBytes)
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
				if ti, ok := st.Instance.(*tightInstance); ok {
					require.Equal(t, ti.size, st.Workspace, "one capacity at every binding")
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
	require.Zero(t, tight.Stats().DynamicWorkspace)
	require.Positive(t, adapted.Load(), "some bindings needed more than their capacity and chose within it")

	t.Run("need above the recipe fails at load", func(t *testing.T) {
		o := RuntimeOptions{Options: Options{Workers: 2, Registry: measuredRegistry(t, func(int64) (int64, error) { return 2 << 20, nil }, &adapted)},
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
		o := RuntimeOptions{Options: Options{Workers: 2, Registry: measuredRegistry(t, func(int64) (int64, error) { return 0, boom }, &adapted)},
			Envelope: tightEnv, Tight: true}
		_, err := NewRuntime(ctx, m, be, al, o)
		var te *TightError
		require.True(t, errors.As(err, &te), "got %v", err)
		require.ErrorIs(t, err, boom)
		require.Zero(t, al.Stats().Allocations.Current, "nothing reserved")
	})
}

// The tight plan is deterministic: planned twice, the same arena (the runner's report and its
// reservation agree).
func TestTightPlanDeterministic(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := loadFixture(t, fx.Name)
	be, _ := newCPU(t, 1<<30)
	var adapted atomic.Int64
	opts := Options{Workers: 2, Registry: measuredRegistry(t, exact, &adapted)}
	ep, err := PlanEnvelope(context.Background(), m, tightEnv, opts)
	require.NoError(t, err)
	a, err := TightenEnvelope(context.Background(), m, be, ep, opts)
	require.NoError(t, err)
	b, err := TightenEnvelope(context.Background(), m, be, ep, opts)
	require.NoError(t, err)
	require.Equal(t, a.Plan.ArenaBytes, b.Plan.ArenaBytes)
	require.Equal(t, len(a.Kernels), len(b.Kernels))
}
