package cpu

import (
	"fmt"
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

// TestSwiGLU checks carve's SwiGLU, Swish_alpha(A) * B, against float64 (the tail past the
// vector width and a length over one parallel grain included), and that it refuses broadcasting.
func TestSwiGLU(t *testing.T) {
	r := rng(t, 28)
	for _, dt := range []graph.DType{graph.Float32, graph.Float16, graph.BFloat16} {
		for _, shape := range [][]int64{{3, 7}, {2, 8960}} {
			for _, alpha := range []float32{1, 1.702} {
				a := tensorOf(dt, shape, float64sOf(randF32(r, shape...)))
				b := tensorOf(dt, shape, float64sOf(randF32(r, shape...)))
				n := node("SwiGLU", kernels.Attrs("alpha", alpha), []kernels.Tensor{a, b}, value(a))
				n.Domain = kernels.DomainCarve
				got := out1(t, n, a, b)
				want := float64sOf(a)
				for i, bv := range float64sOf(b) {
					want[i] = want[i] / (1 + math.Exp(-float64(alpha)*want[i])) * bv
				}
				tol := 1e-6
				if dt != graph.Float32 {
					tol = 1e-2 // one rounding to 8 or 11 bits
				}
				closeTo64(t, want, float64sOf(got), tol, fmt.Sprintf("%v %v alpha %g", dt, shape, alpha))
				requireNoAllocs(t, n, a, b)
			}
		}
	}
	x, y := kernels.Value{DType: graph.Float32, Shape: []int64{2, 4}}, kernels.Value{DType: graph.Float32, Shape: []int64{4}}
	_, err := registry.Select(&kernels.Node{Op: "SwiGLU", Domain: kernels.DomainCarve, Inputs: []kernels.Value{x, y}, Outputs: []kernels.Value{x}}, dev)
	require.ErrorContains(t, err, "does not broadcast")
}
