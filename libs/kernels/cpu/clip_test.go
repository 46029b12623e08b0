package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// clipT is a tensor of dt and shape holding vals (converted as storeF64 does).
func clipT(dt graph.DType, shape []int64, vals ...float64) kernels.Tensor {
	x := kernels.MustTensor(dt, shape...)
	for i, v := range vals {
		storeF64(x, i, v)
	}
	return x
}

func clipNode(in ...kernels.Tensor) *kernels.Node {
	return node("Clip", graph.Attributes{}, in, value(in[0]))
}

// TestClip: every numeric dtype with both bounds, either, neither (omitted or empty-named),
// bounds of shape [] and [1], and a min above the max, against min(max(x, min), max).
func TestClip(t *testing.T) {
	xs := []float64{-100, -3, 0, 1, 2, 3, 5, 7, 9, 100}
	inf := math.Inf(1)
	for _, dt := range []graph.DType{graph.Float32, graph.Float64, graph.Float16, graph.BFloat16, graph.Int64, graph.Int32,
		graph.Int16, graph.Int8, graph.Uint64, graph.Uint32, graph.Uint16, graph.Uint8} {
		vals := xs
		switch dt {
		case graph.Uint64, graph.Uint32, graph.Uint16, graph.Uint8:
			vals = xs[2:]
		}
		x := clipT(dt, []int64{int64(len(vals))}, vals...)
		lo, hi := clipT(dt, nil, 2), clipT(dt, []int64{1}, 7)
		for _, tc := range []struct {
			name   string
			in     []kernels.Tensor
			lo, hi float64
		}{
			{"both", []kernels.Tensor{x, lo, hi}, 2, 7},
			{"min only", []kernels.Tensor{x, lo}, 2, inf},
			{"max only", []kernels.Tensor{x, {}, hi}, -inf, 7},
			{"neither", []kernels.Tensor{x}, -inf, inf},
			{"neither, empty names", []kernels.Tensor{x, {}, {}}, -inf, inf},
			{"min above max", []kernels.Tensor{x, hi, lo}, 7, 2},
		} {
			got := out1(t, clipNode(tc.in...), tc.in...)
			for i, v := range vals {
				require.Equal(t, math.Min(math.Max(v, tc.lo), tc.hi), loadF64(got, i), "%v %s: Clip(%v)", dt, tc.name, v)
			}
		}
	}
}

// TestClipFloatSpecials: a NaN input stays NaN, a NaN bound clips nothing, infinities clip.
func TestClipFloatSpecials(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	xs := []float64{nan, -inf, inf, -0.5, 0.5, 3}
	for _, dt := range []graph.DType{graph.Float32, graph.Float64, graph.Float16, graph.BFloat16} {
		x := clipT(dt, []int64{6}, xs...)
		for _, tc := range []struct {
			lo, hi float64
			want   []float64
		}{
			{-1, 1, []float64{nan, -1, 1, -0.5, 0.5, 1}},
			{nan, 1, []float64{nan, -inf, 1, -0.5, 0.5, 1}},
			{-1, nan, []float64{nan, -1, inf, -0.5, 0.5, 3}},
			{-inf, inf, xs},
		} {
			lo, hi := clipT(dt, nil, tc.lo), clipT(dt, nil, tc.hi)
			got := out1(t, clipNode(x, lo, hi), x, lo, hi)
			for i, w := range tc.want {
				g := loadF64(got, i)
				if math.IsNaN(w) {
					require.True(t, math.IsNaN(g), "%v Clip(%v, %v, %v) = %v, want NaN", dt, xs[i], tc.lo, tc.hi, g)
					continue
				}
				require.Equal(t, w, g, "%v Clip(%v, %v, %v)", dt, xs[i], tc.lo, tc.hi)
			}
		}
	}
}

// TestClipIntegerLimits: integers clip in their own type, never through float64: an absent max
// leaves the type's largest value alone, and bounds beyond float64's 53 bits stay exact.
func TestClipIntegerLimits(t *testing.T) {
	t64 := func(v ...int64) kernels.Tensor {
		shape := []int64{int64(len(v))}
		if len(v) == 1 {
			shape = nil
		}
		return kernels.Tensor{DType: graph.Int64, Shape: shape, Data: kernels.BytesOf(v)}
	}
	u64 := func(v ...uint64) kernels.Tensor {
		shape := []int64{int64(len(v))}
		if len(v) == 1 {
			shape = nil
		}
		return kernels.Tensor{DType: graph.Uint64, Shape: shape, Data: kernels.BytesOf(v)}
	}
	const big = 1<<62 + 1
	x := t64(math.MinInt64, -1, 0, 1<<62, math.MaxInt64)
	for _, tc := range []struct {
		name string
		in   []kernels.Tensor
		want []int64
	}{
		{"max only", []kernels.Tensor{x, {}, t64(5)}, []int64{math.MinInt64, -1, 0, 5, 5}},
		{"min only", []kernels.Tensor{x, t64(-1)}, []int64{-1, -1, 0, 1 << 62, math.MaxInt64}},
		{"wide bounds", []kernels.Tensor{x, t64(big), t64(math.MaxInt64 - 1)}, []int64{big, big, big, big, math.MaxInt64 - 1}},
	} {
		got := out1(t, clipNode(tc.in...), tc.in...)
		require.Equal(t, tc.want, got.Int64s(), tc.name)
	}
	ux := u64(0, 1<<63, math.MaxUint64)
	got := out1(t, clipNode(ux, u64(1<<63+1)), ux, u64(1<<63+1))
	require.Equal(t, []uint64{1<<63 + 1, 1<<63 + 1, math.MaxUint64}, kernels.ViewAs[uint64](got.Data))
	got = out1(t, clipNode(ux, kernels.Tensor{}, u64(math.MaxUint64-1)), ux, kernels.Tensor{}, u64(math.MaxUint64-1))
	require.Equal(t, []uint64{0, 1 << 63, math.MaxUint64 - 1}, kernels.ViewAs[uint64](got.Data))
}

func TestClipSelectErrors(t *testing.T) {
	x := f32([]int64{2, 3}, make([]float32, 6))
	s := f32(nil, []float32{1})
	for _, tc := range []struct {
		name string
		n    *kernels.Node
		want string
	}{
		{"bound of another type", clipNode(x, i64(nil, []int64{1})), "min (input 1) is int64[], want a float32 scalar"},
		{"vector bound", clipNode(x, kernels.Tensor{}, f32([]int64{2}, []float32{0, 1})), "max (input 2) is float32[2], want a float32 scalar"},
		{"matrix bound", clipNode(x, f32([]int64{1, 1}, []float32{0})), "min (input 1) is float32[1 1], want a float32 scalar"},
		{"four inputs", clipNode(x, s, s, s), "has 4 inputs, want 1 to 3"},
		{"bool", clipNode(boolT([]int64{2}, []bool{true, false})), "input is bool, not supported"},
		{"output shape", node("Clip", graph.Attributes{}, []kernels.Tensor{x, s}, kernels.Value{DType: graph.Float32, Shape: []int64{6}}), "output 0 has shape [6], want [2 3]"},
	} {
		_, err := registry.Select(tc.n, dev)
		var ne *kernels.NodeError
		require.ErrorAs(t, err, &ne, tc.name)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
}

func TestClipDoesNotAllocate(t *testing.T) {
	r := rng(t, 7)
	x := randF32(r, 4, 96, 200) // above parMinElems: the pool's path
	lo, hi := f32(nil, []float32{-0.5}), f32([]int64{1}, []float32{0.25})
	requireNoAllocs(t, clipNode(x, lo, hi), x, lo, hi)
	xi := clipT(graph.Int32, []int64{3, 5}, 1, 2, 3)
	requireNoAllocs(t, clipNode(xi, kernels.Tensor{}, clipT(graph.Int32, nil, 2)), xi, kernels.Tensor{}, clipT(graph.Int32, nil, 2))
}
