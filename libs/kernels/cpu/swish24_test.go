package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

func TestONNXSwish(t *testing.T) {
	r := rng(t, 24)
	for _, dt := range []graph.DType{graph.Float32, graph.BFloat16} {
		for _, alpha := range []float32{1, 1.702} {
			x := tensorOf(dt, []int64{3, 7}, float64sOf(randF32(r, 3, 7)))
			n := node("Swish", kernels.Attrs("alpha", alpha), []kernels.Tensor{x}, value(x))
			got := out1(t, n, x)
			want := float64sOf(x)
			for i, v := range want {
				want[i] = v / (1 + math.Exp(-float64(alpha)*v))
			}
			tol := 1e-6
			if dt != graph.Float32 {
				tol = 1e-2
			}
			closeTo64(t, want, float64sOf(got), tol, dt.String())
			requireNoAllocs(t, n, x)
		}
	}
	_, err := registry.Select(&kernels.Node{Op: "Swish", Inputs: []kernels.Value{{DType: graph.Int32, Shape: []int64{2}}}, Outputs: []kernels.Value{{DType: graph.Int32, Shape: []int64{2}}}}, dev)
	require.ErrorContains(t, err, "want one of")
}
