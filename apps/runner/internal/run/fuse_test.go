package run

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/rewrite"
)

// TestFuseByDefault: the runner fuses the model unless NoFuse, reserves less for the fused
// graph, and both give the same outputs.
func TestFuseByDefault(t *testing.T) {
	path := fixture(t, "qwen2")
	cfg := Config{ModelPath: path, Envelope: env(fixed(3), fixed(16)), Seed: 3}
	fused := load(t, cfg)
	cfg.NoFuse = true
	exported := load(t, cfg)

	require.NotNil(t, fused.Fusion)
	require.Nil(t, exported.Fusion)
	require.Equal(t, 2, fused.Fusion.Count(rewrite.Attention))
	require.Equal(t, 2, fused.Reservation.Fused[string(rewrite.Attention)])
	require.Nil(t, exported.Reservation.Fused)
	require.Less(t, len(fused.Model.Nodes), len(exported.Model.Nodes))
	require.Less(t, fused.Reservation.ArenaBytes, exported.Reservation.ArenaBytes)

	a, err := fused.Run(context.Background(), 1)
	require.NoError(t, err)
	b, err := exported.Run(context.Background(), 1)
	require.NoError(t, err)
	require.Equal(t, a.Names, b.Names)
	for i, x := range a.Outputs {
		y := b.Outputs[i]
		require.Equal(t, graph.Float32, x.DType)
		require.Equal(t, y.Shape, x.Shape)
		for j, v := range x.Float32s() {
			w := y.Float32s()[j]
			require.LessOrEqual(t, math.Abs(float64(v-w)), 1e-5*math.Max(1, math.Abs(float64(w))), "output %s element %d", a.Names[i], j)
		}
	}
}
