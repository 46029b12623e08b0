package planview

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph/bundled"
	"carve.dev/libs/planner"

	// The kernels the plans are made with.
	_ "carve.dev/libs/kernels/cpu"
)

func plan(t *testing.T, dims engine.Binding) *engine.Planned {
	t.Helper()
	m, err := bundled.Load()
	require.NoError(t, err)
	p, err := engine.Plan(context.Background(), m, dims, engine.Options{Workers: 2})
	require.NoError(t, err)
	return p
}

func TestPeakStepAgreesWithThePlan(t *testing.T) {
	for _, dims := range []engine.Binding{{"batch": 1, "seq": 1}, {"batch": 2, "seq": 7}, {"batch": 4, "seq": 128}} {
		p := plan(t, dims)
		bufs := Buffers(p)
		require.Len(t, bufs, len(p.Lifetimes.Problem.Buffers))
		live := LiveBytes(p)
		require.Len(t, live, len(p.Steps))
		pk := PeakStep(p)
		require.GreaterOrEqual(t, pk.Step, 0)
		// No step has more live bytes than the peak step, and the arena holds them all.
		for s, n := range live {
			require.LessOrEqual(t, n, pk.LiveBytes, "step %d", s)
		}
		require.LessOrEqual(t, pk.LiveBytes, p.Plan.Peak)
		require.LessOrEqual(t, pk.LiveBytes, p.Plan.LowerBound, "the lower bound is at least the live bytes")
		// The buffers listed add up to the live bytes, by kind and in all, largest first.
		var sum, byKind int64
		for i, b := range pk.Buffers {
			require.True(t, b.Start <= pk.Step && pk.Step < b.End)
			if i > 0 {
				require.LessOrEqual(t, b.Size, pk.Buffers[i-1].Size)
			}
			sum += b.Size
		}
		for _, n := range pk.ByKind {
			byKind += n
		}
		require.Equal(t, pk.LiveBytes, sum)
		require.Equal(t, pk.LiveBytes, byKind)
		require.Same(t, p.Steps[pk.Step].Node, pk.Node)
		// An output written over its input's bytes counts once at the step that shares them:
		// every step's live bytes fit under the lower bound, and are the buffers that own them.
		inPlace := 0
		for _, b := range bufs {
			if b.InPlace != "" {
				inPlace++
			}
		}
		require.Equal(t, p.Lifetimes.InPlace, inPlace)
		for s, n := range live {
			var own int64
			for _, b := range bufs {
				if b.owns(s) {
					own += b.Size
				}
			}
			require.Equal(t, own, n, "step %d", s)
			require.LessOrEqual(t, n, p.Plan.LowerBound, "step %d", s)
		}
		// Workspaces name their node and no value; activations name their value.
		for _, b := range bufs {
			require.NotNil(t, b.Node)
			if b.Kind == planner.Workspace {
				require.Nil(t, b.Values)
			} else {
				require.NotEmpty(t, b.Values)
			}
		}
	}
}
