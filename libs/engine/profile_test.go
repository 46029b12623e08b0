package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels"
)

// A device without timing events refuses a profile, and its runs go on unprofiled.
func TestProfileNeedsTimer(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := loadFixture(t, fx.Name)
	dev, al := newCPU(t, 1<<30)
	_, s := newSession(t, m, dev, al, RuntimeOptions{Options: Options{Workers: 2}, Envelope: envelopeOf(fx)})
	var pe *ProfileError
	require.ErrorAs(t, s.Profile(&Profile{}), &pe)
	require.Contains(t, pe.Error(), "timing events")
	_, err := s.Run(context.Background(), fixtureInputs(t, m, fx.Bindings[0]))
	require.NoError(t, err)
	require.NoError(t, s.Profile(nil))
}

func TestProfileByOp(t *testing.T) {
	fx := testmodels.MustGet("qwen2")
	m := loadFixture(t, fx.Name)
	var p Profile
	n0, n1, n2 := m.Nodes[0], m.Nodes[1], m.Nodes[2]
	n1.OpType, n2.OpType = "X", "X"
	n2.Domain = "d"
	p.add(n0, "t", 1)
	p.add(n1, "t", 2)
	p.add(n1, "t", 2)
	p.add(n2, "t", 0.5)
	require.Equal(t, []OpTime{{Op: "X", Launches: 2, Ms: 4}, {Op: n0.OpType, Launches: 1, Ms: 1}, {Op: "d.X", Launches: 1, Ms: 0.5}}, p.ByOp())
	require.InDelta(t, 5.5, p.TotalMs(), 1e-9)
	require.Len(t, p.Kernels, 3)
	require.Zero(t, p.Floor(), "no runs: no floor")
	p.Runs, p.FloorMs = 2, 0.5
	require.InDelta(t, 0.25, p.Floor(), 1e-12)
	require.InDelta(t, 3.5, p.NetMs(4, 2), 1e-12)
	require.Zero(t, p.NetMs(0.1, 2), "never below 0")
	p.Reset()
	require.Zero(t, p.FloorMs)
	require.Zero(t, p.Runs)
	require.Empty(t, p.Kernels)
	require.Empty(t, p.ByOp())
}
