package engine

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
	"carve.dev/libs/planner"
	"github.com/stretchr/testify/require"
)

// routed wraps a CPU kernel that needs no workspace and makes it ask for *need bytes of
// workspace ("extra"), the way a kernel whose route depends on run-time values does. Its bound
// W is *bound. Run refuses a workspace without the whole part, then runs the real kernel.
type routed struct {
	kernels.Kernel
	need, bound *atomic.Int64
}

type routedInstance struct {
	kernels.Instance
	need int64
}

func (k routed) Select(n *kernels.Node, d kernels.Target) (kernels.Instance, error) {
	inst, err := k.Kernel.Select(n, d)
	if err != nil {
		return nil, err
	}
	return &routedInstance{Instance: inst, need: k.need.Load()}, nil
}

func (k routed) Bound(r *kernels.NodeRange, d kernels.Target) (kernels.Bound, error) {
	return kernels.Bound{Bytes: k.bound.Load(), Tactic: "routed"}, nil
}

// Recipe reads the route at each call: a pattern's plan and a later invocation may disagree.
func (i *routedInstance) Recipe() alloc.Recipe {
	return alloc.Recipe{Kernel: "routed", Parts: []alloc.Part{{Name: "extra", Size: i.need}}}
}

func (i *routedInstance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	p, ok := ws.Part("extra")
	if ws == nil || !ok || p.Size < i.need {
		return fmt.Errorf("routed: workspace missing or too small")
	}
	return i.Instance.Run(in, out, nil, s)
}

// routedRegistry is the CPU registry with Add replaced by a routed Add.
func routedRegistry(t *testing.T, need, bound *atomic.Int64) *kernels.Registry {
	reg := kernels.NewRegistry()
	for _, k := range cpu.Kernels() {
		if k.Op() == kernels.Key("", "Add") {
			k = routed{Kernel: k, need: need, bound: bound}
		}
		require.NoError(t, reg.Register(k))
	}
	return reg
}

// setRoute changes what every routed instance asks for from now on.
func (i *routedInstance) setNeed(n int64) { i.need = n }

func TestWorkspacePolicy(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	b := fx.Bindings[1]
	env := Envelope{}
	for k, v := range b.Dims {
		env[k] = Range{Lo: v, Hi: v}
	}
	for _, tc := range []struct {
		name     string
		policy   planner.Policy
		runNeed  int64 // R at run time; the plan was made with 1024
		wantErr  bool
		overW    bool
		dynamics bool
	}{
		{name: "strict R<=C", policy: planner.Strict, runNeed: 1024},
		{name: "strict R>C", policy: planner.Strict, runNeed: 4096, wantErr: true},
		{name: "fallback R>C", policy: planner.Fallback, runNeed: 4096, dynamics: true},
		{name: "strict R>W", policy: planner.Strict, runNeed: 1 << 20, wantErr: true, overW: true},
		{name: "fallback R>W", policy: planner.Fallback, runNeed: 1 << 20, wantErr: true, overW: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var need, bound atomic.Int64
			need.Store(1024)
			bound.Store(8192)
			m := loadFixture(t, "gpt2")
			dev, al := newCPU(t, 1<<30)
			rt, s := newSession(t, m, dev, al, RuntimeOptions{
				Options: Options{Workers: 2, Registry: routedRegistry(t, &need, &bound)}, Envelope: env, Policy: tc.policy})
			// The pattern was planned at load with C = 1024 per Add; now the route changes.
			for _, st := range rt.Reserve.Worst.Steps {
				if ri, ok := st.Instance.(*routedInstance); ok {
					ri.setNeed(tc.runNeed)
				}
			}
			before := cpuCalls(dev)
			for range 2 {
				out, err := s.Run(context.Background(), fixtureInputs(t, m, b))
				if tc.wantErr {
					var ce *planner.CapacityError
					require.True(t, errors.As(err, &ce), "got %v", err)
					require.Equal(t, tc.runNeed, ce.R)
					require.Equal(t, int64(8192), ce.W)
					require.Equal(t, tc.overW, ce.OverBound())
					if !tc.overW {
						require.Equal(t, int64(1024), ce.C)
					}
					require.Contains(t, err.Error(), ce.Node)
					// Refused before anything ran or was allocated.
					require.Equal(t, before.Malloc, cpuCalls(dev).Malloc)
					require.Zero(t, al.Stats().Allocations.Current)
					continue
				}
				require.NoError(t, err)
				want, err := testmodels.ReadArray(b.Outputs["logits"])
				require.NoError(t, err)
				require.LessOrEqual(t, maxRelErr(kernels.ViewAs[float32](out[0].Data), want.Float32), 1e-4)
			}
			st := rt.Stats()
			if tc.dynamics {
				adds := int64(fx.Ops["Add"])
				require.Equal(t, 2*adds, st.DynamicWorkspace, "one dynamic allocation per Add per run")
				require.Equal(t, 2*adds*tc.runNeed, st.DynamicBytes)
			} else {
				require.Zero(t, st.DynamicWorkspace)
			}
			require.Zero(t, al.Stats().Allocations.Current, "dynamic workspaces are all returned")
		})
	}
}
