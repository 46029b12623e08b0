package engine

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// The invariant of a workspace within the plan (grow.go): a kernel whose workspace is a choice
// never raises the arena (the default plan's arena is the one with every such part at its
// smallest), it takes what the plan leaves free at its step (some part grows past its smallest,
// none past its declared size), and the runs it carves over those bytes give the outputs of the
// plan with full workspaces, bit for bit (the measured kernel scribbles over its whole part).
func TestWorkspaceWithinPlan(t *testing.T) {
	m := loadFixture(t, "gpt2")
	be, al := newCPU(t, 1<<30)
	var adapted atomic.Int64
	reg := measuredRegistry(t, exact, &adapted)
	ctx := context.Background()

	full, fs := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 2, Registry: reg, FullWorkspace: true}, Envelope: tightEnv})
	within, ws := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 2, Registry: reg}, Envelope: tightEnv})
	require.Less(t, within.Reserve.ArenaBytes, full.Reserve.ArenaBytes, "the 1 MiB caps no longer raise the arena")

	// the same envelope with every measured part at its smallest: the arena the default plans
	least, _ := newSession(t, m, be, al, RuntimeOptions{Options: Options{Workers: 2, Registry: measuredRegistryCap(t, alloc.DefaultPartAlign), FullWorkspace: true},
		Envelope: tightEnv})
	require.Equal(t, least.Reserve.ArenaBytes, within.Reserve.ArenaBytes, "the arena of the smallest parts")

	grown := 0
	runTightBindings(t, m, within, fs, ws, func(dims Binding, c *carved, st Step) {
		require.GreaterOrEqual(t, c.size, alloc.DefaultPartAlign, "%v: %s at least its smallest", dims, st.Node)
		require.LessOrEqual(t, c.size, int64(1<<20), "%v: %s at most its declared size", dims, st.Node)
		if c.size > alloc.DefaultPartAlign {
			grown++
		}
		n, err := c.Recipe().Size()
		require.NoError(t, err)
		require.Equal(t, n, st.Workspace, "%v: %s", dims, st.Node)
	})
	require.Positive(t, grown, "some workspace takes the free bytes at its step")
	require.Zero(t, within.Stats().DynamicWorkspace)

	for _, c := range within.Reserve.Candidates {
		p, err := Plan(ctx, m, c.Binding, within.opts.Options)
		require.NoError(t, err)
		require.NoError(t, planner.Verify(p.Lifetimes.Problem, p.Plan))
	}
}

// measuredRegistryCap is measuredRegistry with the measured Add's cap at capBytes (and no need).
func measuredRegistryCap(t *testing.T, capBytes int64) *kernels.Registry {
	return registryWith(t, &measured{capBytes: capBytes, adapted: new(atomic.Int64), measure: exact, need: func(int64) int64 { return 0 }})
}
