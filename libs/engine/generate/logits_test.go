package generate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// takeLogits' greedy choice, made while converting, is Greedy.Pick's on the converted row: the
// first of equal maxima, and a NaN never chosen unless first.
func TestTakeLogitsGreedy(t *testing.T) {
	nan := float32(math.NaN())
	rows := [][]float32{
		{1, 3, 3, 2},
		{nan, 5, 1, 2},
		{-1, -2, nan, -0.5},
		{7, 7, 7, 7},
		{-3, -2, -1, -4},
	}
	for _, dt := range []graph.DType{graph.Float32, graph.Float16, graph.BFloat16} {
		t.Run(dt.String(), func(t *testing.T) {
			const vocab = 4
			batch := int64(len(rows))
			out := kernels.MustTensor(dt, batch, 1, vocab)
			for b, row := range rows {
				for j, x := range row {
					i := b*vocab + j
					switch dt {
					case graph.Float32:
						out.Float32s()[i] = x
					case graph.Float16:
						out.Uint16s()[i] = float16.Fromfloat32(x).Bits()
					case graph.BFloat16:
						out.Uint16s()[i] = uint16(math.Float32bits(x) >> 16)
					}
				}
			}
			m := &graph.Model{Outputs: []*graph.Value{{Name: "logits"}}}
			g := &Generator{rt: &engine.Runtime{Model: m}, cache: &Cache{Logits: "logits", Vocab: vocab},
				cfg: Config{Batch: batch}, logits: make([]float32, batch*vocab), best: make([]int64, batch)}
			require.NoError(t, g.takeLogits([]kernels.Tensor{out}, 1, 0))
			for b := range rows {
				require.Equal(t, Greedy{}.Pick(g.logits[b*vocab:(b+1)*vocab]), g.best[b], "row %d", b)
			}
			require.Equal(t, []int64{1, 0, 3, 0, 2}, g.best)
		})
	}
}
