package cpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

func TestReduceRandom(t *testing.T) {
	r := rng(t, 21)
	ops := map[string]func(vals []float64) float64{
		"ReduceSum": func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += x
			}
			return s
		},
		"ReduceMean": func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += x
			}
			return s / float64(len(v))
		},
		"ReduceMax": func(v []float64) float64 {
			m := math.Inf(-1)
			for _, x := range v {
				m = math.Max(m, x)
			}
			return m
		},
		"ReduceMin": func(v []float64) float64 {
			m := math.Inf(1)
			for _, x := range v {
				m = math.Min(m, x)
			}
			return m
		},
		"ReduceSumSquare": func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += x * x
			}
			return s
		},
		"ReduceL2": func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += x * x
			}
			return math.Sqrt(s)
		},
		"ReduceLogSumExp": func(v []float64) float64 {
			s := 0.0
			for _, x := range v {
				s += math.Exp(x)
			}
			return math.Log(s)
		},
	}
	for it := 0; it < 25; it++ {
		rank := 1 + r.IntN(4)
		shape := make([]int64, rank)
		for i := range shape {
			shape[i] = int64(1 + r.IntN(4))
		}
		var axes []int64
		for i := 0; i < rank; i++ {
			if r.IntN(2) == 0 {
				a := int64(i)
				if r.IntN(2) == 0 {
					a -= int64(rank)
				}
				axes = append(axes, a)
			}
		}
		keep := r.IntN(2)
		x := randF32(r, shape...)
		red := make([]bool, rank)
		for _, a := range axes {
			red[(a+int64(rank))%int64(rank)] = true
		}
		all := len(axes) == 0
		var out []int64
		for i, d := range shape {
			switch {
			case !red[i] && !all:
				out = append(out, d)
			case keep == 1:
				out = append(out, 1)
			}
		}
		for op, f := range ops {
			t.Run(fmt.Sprintf("%s%v%v/%d", op, shape, axes, keep), func(t *testing.T) {
				in := []kernels.Tensor{x}
				if len(axes) > 0 {
					in = append(in, i64([]int64{int64(len(axes))}, axes))
				}
				got := out1(t, node(op, kernels.Attrs("keepdims", keep), in, kernels.Value{DType: graph.Float32, Shape: out}), in...)
				groups := map[int][]float64{}
				for o := range x.Float32s() {
					c := coords(shape, o)
					var oc []int
					var os []int64
					for i := range c {
						switch {
						case !red[i] && !all:
							oc, os = append(oc, c[i]), append(os, shape[i])
						case keep == 1:
							oc, os = append(oc, 0), append(os, 1)
						}
					}
					k := offset(os, oc)
					groups[k] = append(groups[k], float64(x.Float32s()[o]))
				}
				for k, vals := range groups {
					w := f(vals)
					require.InDelta(t, w, float64(got.Float32s()[k]), 1e-5*math.Max(1, math.Abs(w)))
				}
			})
		}
	}
}

func TestReduceAttributeAxesAndArgMax(t *testing.T) {
	x := f32([]int64{2, 3}, []float32{1, 5, 5, 7, 2, 0})
	got := out1(t, node("ReduceSum", kernels.Attrs("axes", []int64{1}, "keepdims", 0), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: []int64{2}}), x)
	require.Equal(t, []float32{11, 9}, got.Float32s())
	empty := i64([]int64{0}, nil)
	got = out1(t, node("ReduceSum", kernels.Attrs("noop_with_empty_axes", 1), []kernels.Tensor{x, empty}, value(x)), x, empty)
	require.Equal(t, x.Float32s(), got.Float32s())
	got = out1(t, node("ArgMax", kernels.Attrs("axis", -1, "keepdims", 0), []kernels.Tensor{x}, kernels.Value{DType: graph.Int64, Shape: []int64{2}}), x)
	require.Equal(t, []int64{1, 0}, got.Int64s())
	got = out1(t, node("ArgMax", kernels.Attrs("axis", 1, "select_last_index", 1), []kernels.Tensor{x}, kernels.Value{DType: graph.Int64, Shape: []int64{2, 1}}), x)
	require.Equal(t, []int64{2, 0}, got.Int64s())
	xi := i64([]int64{2, 2}, []int64{3, 4, 5, 7})
	got = out1(t, node("ReduceMean", kernels.Attrs("axes", []int64{0}), []kernels.Tensor{xi}, kernels.Value{DType: graph.Int64, Shape: []int64{1, 2}}), xi)
	require.Equal(t, []int64{4, 5}, got.Int64s())
}

func TestSoftmax(t *testing.T) {
	r := rng(t, 22)
	x := randF32(r, 2, 3, 4)
	for _, tc := range []struct {
		axis  int64
		opset int64
		log   bool
	}{{-1, 18, false}, {1, 18, false}, {0, 13, true}, {1, 11, false}, {-1, 0, true}} {
		op := "Softmax"
		if tc.log {
			op = "LogSoftmax"
		}
		n := node(op, kernels.Attrs("axis", tc.axis), []kernels.Tensor{x}, value(x))
		n.Opset = tc.opset
		got := out1(t, n, x)
		axis := int((tc.axis + 3) % 3)
		// groups: with opset < 13 the dims from axis on are flattened into one
		group := func(o int) (key int) {
			c := coords(x.Shape, o)
			if tc.opset > 0 && tc.opset < 13 {
				for i := axis; i < 3; i++ {
					c[i] = 0
				}
			} else {
				c[axis] = 0
			}
			return offset(x.Shape, c)
		}
		sums := map[int]float64{}
		maxs := map[int]float64{}
		for o, v := range x.Float32s() {
			k := group(o)
			if _, ok := maxs[k]; !ok {
				maxs[k] = math.Inf(-1)
			}
			maxs[k] = math.Max(maxs[k], float64(v))
		}
		for o, v := range x.Float32s() {
			sums[group(o)] += math.Exp(float64(v) - maxs[group(o)])
		}
		for o, v := range x.Float32s() {
			k := group(o)
			want := math.Exp(float64(v)-maxs[k]) / sums[k]
			if tc.log {
				want = float64(v) - maxs[k] - math.Log(sums[k])
			}
			require.InDelta(t, want, float64(got.Float32s()[o]), 1e-6, "%+v", tc)
		}
	}
}
