package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// refGroupNorm normalizes x [N, C, S] over groups of C/g channels, then scales and shifts per
// channel (or per group when perGroup); g == C is InstanceNormalization.
func refGroupNorm(x, scale, bias []float32, n, c, s, g int, eps float64, perGroup bool) []float32 {
	y := make([]float32, len(x))
	cpg := c / g
	for i := range n {
		for gr := range g {
			seg := x[(i*c+gr*cpg)*s : (i*c+(gr+1)*cpg)*s]
			var mu, vr float64
			for _, v := range seg {
				mu += float64(v)
			}
			mu /= float64(len(seg))
			for _, v := range seg {
				vr += (float64(v) - mu) * (float64(v) - mu)
			}
			vr /= float64(len(seg))
			for j, v := range seg {
				ch := gr*cpg + j/s
				if perGroup {
					ch = gr
				}
				y[(i*c+gr*cpg)*s+j] = float32((float64(v)-mu)/math.Sqrt(vr+eps)*float64(scale[ch]) + float64(bias[ch]))
			}
		}
	}
	return y
}

func TestChannelNorms(t *testing.T) {
	r := rng(t, 12)
	x := randF32(r, 2, 6, 5, 3)
	y := value(x)
	scale, bias := randF32(r, 6), randF32(r, 6)
	// InstanceNormalization
	got := out1(t, node("InstanceNormalization", kernels.Attrs("epsilon", 1e-3), []kernels.Tensor{x, scale, bias}, y), x, scale, bias)
	closeTo(t, refGroupNorm(x.Float32s(), scale.Float32s(), bias.Float32s(), 2, 6, 15, 6, 1e-3, false), got.Float32s(), 1e-4)
	// GroupNormalization, opset 21: per channel
	n := node("GroupNormalization", kernels.Attrs("num_groups", 3, "epsilon", 1e-5), []kernels.Tensor{x, scale, bias}, y)
	n.Opset = 21
	got = out1(t, n, x, scale, bias)
	closeTo(t, refGroupNorm(x.Float32s(), scale.Float32s(), bias.Float32s(), 2, 6, 15, 3, 1e-5, false), got.Float32s(), 1e-4)
	// opset 18: per group
	gs, gb := randF32(r, 3), randF32(r, 3)
	n = node("GroupNormalization", kernels.Attrs("num_groups", 3), []kernels.Tensor{x, gs, gb}, y)
	n.Opset = 18
	got = out1(t, n, x, gs, gb)
	closeTo(t, refGroupNorm(x.Float32s(), gs.Float32s(), gb.Float32s(), 2, 6, 15, 3, 1e-5, true), got.Float32s(), 1e-4)
	// BatchNormalization
	mean, vr := randF32(r, 6), randF32(r, 6)
	for i := range vr.Float32s() {
		vr.Float32s()[i] = float32(math.Abs(float64(vr.Float32s()[i])))
	}
	got = out1(t, node("BatchNormalization", kernels.Attrs("epsilon", 1e-5), []kernels.Tensor{x, scale, bias, mean, vr}, y), x, scale, bias, mean, vr)
	want := make([]float32, numel(x.Shape))
	for i, v := range x.Float32s() {
		c := i / 15 % 6
		want[i] = float32((float64(v)-float64(mean.Float32s()[c]))/math.Sqrt(float64(vr.Float32s()[c])+1e-5)*float64(scale.Float32s()[c]) + float64(bias.Float32s()[c]))
	}
	closeTo(t, want, got.Float32s(), 1e-4)

	// refusals
	_, err := registry.Select(node("BatchNormalization", kernels.Attrs("training_mode", 1), []kernels.Tensor{x, scale, bias, mean, vr}, y), dev)
	require.ErrorContains(t, err, "training_mode 1 is not supported")
	_, err = registry.Select(node("GroupNormalization", kernels.Attrs("num_groups", 4), []kernels.Tensor{x, scale, bias}, y), dev)
	require.ErrorContains(t, err, "num_groups 4 does not divide the channels 6")
	_, err = registry.Select(node("InstanceNormalization", graph.Attributes{}, []kernels.Tensor{x, gs, bias}, y), dev)
	require.ErrorContains(t, err, "input 1 is float32[3], want float32[6]")
}
