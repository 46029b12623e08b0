package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPlanEnvelopeQwen2_1p5B(t *testing.T) {
	m := loadFixture(t, "qwen2_1p5b_graph")
	env, err := ParseEnvelope([]string{"batch=1:64", "seq=1:32768"})
	require.NoError(t, err)
	start := time.Now()
	ep, err := PlanEnvelope(context.Background(), m, env, Options{Workers: 4})
	require.NoError(t, err)
	t.Logf("%v: weights %d, arena %d at %v, %d candidates, W total %d, driving %s (-%d)",
		time.Since(start), ep.WeightBytes, ep.ArenaBytes, ep.Worst.Binding.Dims, len(ep.Candidates),
		ep.WorkspaceBound(), ep.DrivingDim, ep.DrivingSavings)
	for _, c := range ep.Candidates {
		t.Logf("  %v %s: %d (lb %d)", c.Binding, c.Why, c.ArenaBytes, c.LowerBound)
	}
	for i, b := range ep.Bounds {
		if i < 5 {
			t.Logf("  W %s %s: %d", b.Node.Name, b.Bound.Tactic, b.Bound.Bytes)
		}
	}
}
