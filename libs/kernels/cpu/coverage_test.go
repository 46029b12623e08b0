package cpu

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// fusedElsewhere are carve's own fused ops that package rewrite makes only for a backend with
// a kernel for them (engine.FuseOptions), and that no exporter writes: the CPU runs their
// exported form. dev.carve.GatedMatMul is a GPU decode fusion (one launch instead of three).
var fusedElsewhere = []string{"dev.carve.GatedMatMul"}

// Every operator the graph library can infer shapes for has a CPU kernel, so a model that
// loads can run, except fusedElsewhere.
func TestEveryGraphOpHasAKernel(t *testing.T) {
	have := map[string]bool{}
	for _, o := range registry.Ops(kernels.BackendCPU) {
		have[o.Op.String()] = true
	}
	for _, op := range graph.SupportedOps() {
		if slices.Contains(fusedElsewhere, op) {
			require.False(t, have[op], "%s has a CPU kernel now: take it off fusedElsewhere", op)
			continue
		}
		require.True(t, have[op], "no CPU kernel for %s", op)
	}
}

func TestBiasAddAndHardSwish(t *testing.T) {
	x := f32([]int64{1, 2, 2}, []float32{1, -4, 2, 3})
	b := f32([]int64{2}, []float32{0.5, 1})
	s := f32([]int64{1, 2, 2}, []float32{1, 1, -1, -1})
	got := out1(t, msNode("BiasAdd", graph.Attributes{}, []kernels.Tensor{x, b, s}, value(x)), x, b, s)
	require.Equal(t, []float32{2.5, -2, 1.5, 3}, got.Float32s())
	got = out1(t, node("HardSwish", graph.Attributes{}, []kernels.Tensor{x}, value(x)), x)
	require.Equal(t, []float32{1 * (1.0/6 + 0.5), 0, 2 * (2.0/6 + 0.5), 3}, got.Float32s())
}
