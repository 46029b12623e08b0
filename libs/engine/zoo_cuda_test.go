//go:build cuda

package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
)

// TestCUDAZoo runs every zoo model, fused for the device as the runner fuses it, on the GPU,
// eagerly and replayed as CUDA graphs, against onnxruntime at both bindings (error below 1e-3
// of the reference's range), and checks that the estimate for --target h200 is what the
// runtime reserves.
func TestCUDAZoo(t *testing.T) {
	forZooPrefill(t, func(t *testing.T, zm testmodels.Model) {
		be, al := newCUDA(t)
		opts := Options{Target: be.Target()}
		m, _ := loadZoo(t, zm, opts)
		env := envelopeOf(zm)
		h200 := kernels.KnownGPUs["h200"]
		ep, err := PlanEnvelope(context.Background(), m, env, Options{Target: h200})
		require.NoError(t, err)
		for _, graphs := range []bool{false, true} {
			rt, err := NewRuntime(context.Background(), m, be, al, RuntimeOptions{Envelope: env, Graphs: graphs})
			require.NoError(t, err)
			require.Equal(t, ep.ArenaBytes, rt.Reserve.ArenaBytes, "estimate (--target h200) == reservation")
			s, err := rt.NewSession()
			require.NoError(t, err)
			runZoo(t, zm, m, s, fmt.Sprintf("cuda, graphs %v", graphs))
			require.NoError(t, s.Close())
			require.NoError(t, rt.Close())
		}
	})
}
