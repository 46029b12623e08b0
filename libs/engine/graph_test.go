package engine

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// TestGraphsReplayExactly runs every fixture with RuntimeOptions.Graphs on the CPU and on the
// simulated device: each pattern is captured once, every run replays it, the outputs are those of
// eager runs, and replays allocate nothing.
func TestGraphsReplayExactly(t *testing.T) {
	for _, fx := range testmodels.Models() {
		if len(fx.Bindings) == 0 {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			m := loadFixture(t, fx.Name)
			env := envelopeOf(fx)
			eb, eal := newCPU(t, 1<<30)
			_, eager := newSession(t, m, eb, eal, RuntimeOptions{Envelope: env})
			for _, kind := range []string{kernels.BackendCPU, kernels.BackendSim} {
				be, al := newHostBackend(t, kind, 1<<30)
				rt, s := newSession(t, m, be, al, RuntimeOptions{Envelope: env, Graphs: true})
				patterns, runs := 0, 0
				var mallocs int64
				for _, b := range fx.Bindings {
					if b.Error != "" {
						continue
					}
					in := fixtureInputs(t, m, b)
					want, err := eager.Run(context.Background(), in)
					require.NoError(t, err)
					patterns++
					for rep := 0; rep < 3; rep++ {
						got, err := s.Run(context.Background(), in)
						require.NoError(t, err, "%s at %v", kind, b.Dims)
						runs++
						for i := range want {
							require.True(t, bytes.Equal(want[i].Data, got[i].Data), "%s: %s at %v differs from the eager run", kind, m.Outputs[i].Name, b.Dims)
						}
						if rep == 0 {
							mallocs = deviceMallocs(be)
						} else {
							require.Equal(t, mallocs, deviceMallocs(be), "%s: a replay allocated", kind)
						}
					}
				}
				st := rt.Stats()
				require.LessOrEqual(t, st.GraphCaptures, int64(patterns), kind)
				require.Positive(t, st.GraphCaptures, kind)
				require.Equal(t, int64(runs), st.GraphReplays, kind)
			}
		})
	}
}

// TestGraphsOfEvictedProgramsAreReleased bounds the programs to one: each new pattern evicts the
// last, whose graph (and its private pool) is released, and a pattern that comes back is captured
// again.
func TestGraphsOfEvictedProgramsAreReleased(t *testing.T) {
	fx := testmodels.MustGet("gpt2")
	m := loadFixture(t, fx.Name)
	env := envelopeOf(fx)
	dim := m.DimNames[len(m.DimNames)-1]
	r := env[dim]
	r.Hi = r.Lo + 1
	env[dim] = r
	be, al := newSim(t, 1<<30)
	rt, s := newSession(t, m, be, al, RuntimeOptions{Envelope: env, Graphs: true, Programs: 1})
	for _, d := range []int64{0, 1, 0} {
		dims := Binding{}
		for n, r := range env {
			dims[n] = r.Lo
		}
		dims[dim] = r.Lo + d
		_, err := s.Run(context.Background(), zeroInputs(t, m, dims))
		require.NoError(t, err)
		require.Len(t, s.captured, 1, "only the cached program holds a graph")
	}
	st := rt.Stats()
	require.Equal(t, int64(3), st.GraphCaptures)
	require.Equal(t, int64(2), st.Programs.Evictions)
}

func deviceMallocs(be kernels.Backend) int64 {
	return be.Device().(alloc.CallCounter).Calls().Malloc
}
