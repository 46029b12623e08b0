package engine

import (
	"context"
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/planner"
	"github.com/stretchr/testify/require"
)

// loadFixture loads a testmodels fixture from a temporary directory.
func loadFixture(t testing.TB, name string) *graph.Model {
	t.Helper()
	path := testmodels.MustGet(name).WriteTemp(t)
	m, err := graph.Load(path)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

func TestPlanFixtures(t *testing.T) {
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			m := loadFixture(t, fx.Name)
			for _, fb := range fx.Bindings {
				p, err := Plan(context.Background(), m, Binding(fb.Dims), Options{Workers: 4})
				require.NoError(t, err, "binding %v", fb.Dims)
				require.NoError(t, planner.Verify(p.Lifetimes.Problem, p.Plan))
				require.GreaterOrEqual(t, p.Plan.Peak, p.Plan.LowerBound)
				t.Logf("%v: %d buffers, peak %d, lower bound %d, workspace %d, %s in %v",
					fb.Dims, len(p.Lifetimes.Problem.Buffers), p.Plan.Peak, p.Plan.LowerBound,
					p.WorkspaceBytes(), p.Plan.Algorithm, p.Plan.Elapsed)
			}
		})
	}
}
