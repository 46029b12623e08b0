package cpu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

func TestRange(t *testing.T) {
	for _, tc := range []struct {
		start, limit, delta int64
		want                []int64
	}{
		{0, 5, 1, []int64{0, 1, 2, 3, 4}}, {10, 4, -3, []int64{10, 7}}, {3, 3, 1, []int64{}}, {1, 8, 3, []int64{1, 4, 7}},
	} {
		in := []kernels.Tensor{i64(nil, []int64{tc.start}), i64(nil, []int64{tc.limit}), i64(nil, []int64{tc.delta})}
		got := out1(t, node("Range", graph.Attributes{}, in, kernels.Value{DType: graph.Int64, Shape: []int64{int64(len(tc.want))}}), in...)
		require.Equal(t, tc.want, append([]int64{}, got.Int64s()...))
	}
	in := []kernels.Tensor{f32(nil, []float32{1}), f32(nil, []float32{2}), f32(nil, []float32{0.25})}
	got := out1(t, node("Range", graph.Attributes{}, in, kernels.Value{DType: graph.Float32, Shape: []int64{4}}), in...)
	require.Equal(t, []float32{1, 1.25, 1.5, 1.75}, got.Float32s())
	// a count that does not match the output is refused
	in = []kernels.Tensor{i64(nil, []int64{0}), i64(nil, []int64{5}), i64(nil, []int64{1})}
	inst, err := registry.Select(node("Range", graph.Attributes{}, in, kernels.Value{DType: graph.Int64, Shape: []int64{4}}), dev)
	require.NoError(t, err)
	require.Error(t, inst.Run(in, []kernels.Tensor{kernels.MustTensor(graph.Int64, 4)}, nil, 0))
}

func TestCumSum(t *testing.T) {
	x := f32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	for _, tc := range []struct {
		axis               int64
		exclusive, reverse int
		want               []float32
	}{
		{1, 0, 0, []float32{1, 3, 6, 4, 9, 15}},
		{-1, 1, 0, []float32{0, 1, 3, 0, 4, 9}},
		{1, 0, 1, []float32{6, 5, 3, 15, 11, 6}},
		{1, 1, 1, []float32{5, 3, 0, 11, 6, 0}},
		{0, 0, 0, []float32{1, 2, 3, 5, 7, 9}},
		{0, 1, 0, []float32{0, 0, 0, 1, 2, 3}},
		{0, 0, 1, []float32{5, 7, 9, 4, 5, 6}},
		{0, 1, 1, []float32{4, 5, 6, 0, 0, 0}},
	} {
		ax := i64(nil, []int64{tc.axis})
		got := out1(t, node("CumSum", kernels.Attrs("exclusive", tc.exclusive, "reverse", tc.reverse), []kernels.Tensor{x, ax}, value(x)), x, ax)
		require.Equal(t, tc.want, got.Float32s(), "%+v", tc)
	}
	xi := i32([]int64{3}, []int32{1, -2, 7})
	ax := i32(nil, []int32{0})
	got := out1(t, node("CumSum", graph.Attributes{}, []kernels.Tensor{xi, ax}, value(xi)), xi, ax)
	require.Equal(t, []int32{1, -1, 6}, got.Int32s())
}

func TestTrilu(t *testing.T) {
	x := f32([]int64{2, 3, 4}, make([]float32, 24))
	for i := range x.Float32s() {
		x.Float32s()[i] = float32(i + 1)
	}
	for _, tc := range []struct {
		upper int
		k     *int64
	}{{1, nil}, {0, nil}, {1, ptr(int64(1))}, {0, ptr(int64(-1))}, {1, ptr(int64(-5))}, {0, ptr(int64(10))}} {
		in := []kernels.Tensor{x}
		k := int64(0)
		if tc.k != nil {
			k = *tc.k
			in = append(in, i64(nil, []int64{k}))
		}
		got := out1(t, node("Trilu", kernels.Attrs("upper", tc.upper), in, value(x)), in...)
		for o, v := range got.Float32s() {
			c := coords(x.Shape, o)
			keep := int64(c[2]-c[1]) >= k
			if tc.upper == 0 {
				keep = int64(c[2]-c[1]) <= k
			}
			want := float32(0)
			if keep {
				want = x.Float32s()[o]
			}
			require.Equal(t, want, v, "upper %d k %d at %v", tc.upper, k, c)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestConstantsAndShapes(t *testing.T) {
	s := i64([]int64{2}, []int64{2, 3})
	ht := &graph.HostTensor{DType: graph.Int64, Shape: []int64{1}, Data: kernels.BytesOf([]int64{7})}
	got := out1(t, node("ConstantOfShape", kernels.Attrs("value", ht), []kernels.Tensor{s}, kernels.Value{DType: graph.Int64, Shape: []int64{2, 3}}), s)
	require.Equal(t, []int64{7, 7, 7, 7, 7, 7}, got.Int64s())
	got = out1(t, node("ConstantOfShape", graph.Attributes{}, []kernels.Tensor{s}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 3}}), s)
	require.Equal(t, make([]float32, 6), got.Float32s())

	ct := &graph.HostTensor{DType: graph.Float32, Shape: []int64{2}, Data: kernels.BytesOf([]float32{1.5, -2})}
	got = out1(t, node("Constant", kernels.Attrs("value", ct), nil, kernels.Value{DType: graph.Float32, Shape: []int64{2}}))
	require.Equal(t, []float32{1.5, -2}, got.Float32s())
	got = out1(t, node("Constant", kernels.Attrs("value_ints", []int64{4, 5}), nil, kernels.Value{DType: graph.Int64, Shape: []int64{2}}))
	require.Equal(t, []int64{4, 5}, got.Int64s())

	x := f32([]int64{2, 3, 4, 5}, make([]float32, 120))
	for _, tc := range []struct {
		attrs graph.Attributes
		want  []int64
	}{
		{graph.Attributes{}, []int64{2, 3, 4, 5}},
		{kernels.Attrs("start", 1), []int64{3, 4, 5}},
		{kernels.Attrs("start", -2, "end", -1), []int64{4}},
		{kernels.Attrs("start", 3, "end", 1), []int64{}},
		{kernels.Attrs("end", 100), []int64{2, 3, 4, 5}},
	} {
		got = out1(t, node("Shape", tc.attrs, []kernels.Tensor{x}, kernels.Value{DType: graph.Int64, Shape: []int64{int64(len(tc.want))}}), x)
		require.Equal(t, tc.want, append([]int64{}, got.Int64s()...))
	}
	got = out1(t, node("Size", graph.Attributes{}, []kernels.Tensor{x}, kernels.Value{DType: graph.Int64, Shape: []int64{}}), x)
	require.Equal(t, []int64{120}, got.Int64s())
}

func TestWhereAndVariadic(t *testing.T) {
	c := boolT([]int64{2, 1}, []bool{true, false})
	x := f32([]int64{3}, []float32{1, 2, 3})
	y := f32(nil, []float32{-1})
	got := out1(t, node("Where", graph.Attributes{}, []kernels.Tensor{c, x, y}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 3}}), c, x, y)
	require.Equal(t, []float32{1, 2, 3, -1, -1, -1}, got.Float32s())
	// the runs with a scalar side, and condition bytes other than 0 and 1
	r := rng(t, 12)
	cond := boolT([]int64{4, 5}, make([]bool, 20))
	for i := range cond.Data {
		cond.Data[i] = byte(r.IntN(3)) // 0, 1 or 2: 2 is true too
	}
	full, scalar := randF32(r, 4, 5), f32(nil, []float32{7})
	for _, tc := range [][2]kernels.Tensor{{scalar, full}, {full, scalar}, {full, full}} {
		got := out1(t, node("Where", graph.Attributes{}, []kernels.Tensor{cond, tc[0], tc[1]}, value(full)), cond, tc[0], tc[1])
		for i, v := range got.Float32s() {
			pick := func(t kernels.Tensor) float32 { return t.Float32s()[min(i, len(t.Float32s())-1)] }
			want := pick(tc[1])
			if cond.Data[i] != 0 {
				want = pick(tc[0])
			}
			require.Equal(t, want, v, "element %d", i)
		}
	}

	a := f32([]int64{2, 1}, []float32{1, 5})
	b := f32([]int64{3}, []float32{0, 3, 6})
	d := f32(nil, []float32{4})
	out := kernels.Value{DType: graph.Float32, Shape: []int64{2, 3}}
	got = out1(t, node("Max", graph.Attributes{}, []kernels.Tensor{a, b, d}, out), a, b, d)
	require.Equal(t, []float32{4, 4, 6, 5, 5, 6}, got.Float32s())
	got = out1(t, node("Min", graph.Attributes{}, []kernels.Tensor{a, b}, out), a, b)
	require.Equal(t, []float32{0, 1, 1, 0, 3, 5}, got.Float32s())
	got = out1(t, node("Sum", graph.Attributes{}, []kernels.Tensor{a, b, d}, out), a, b, d)
	require.Equal(t, []float32{5, 8, 11, 9, 12, 15}, got.Float32s())
	got = out1(t, node("Mean", graph.Attributes{}, []kernels.Tensor{a, b}, out), a, b)
	require.Equal(t, []float32{0.5, 2, 3.5, 2.5, 4, 5.5}, got.Float32s())
	got = out1(t, node("Max", graph.Attributes{}, []kernels.Tensor{a}, value(a)), a)
	require.Equal(t, a.Float32s(), got.Float32s())
}

func TestPow(t *testing.T) {
	x := f32([]int64{4}, []float32{-2, 0.5, 3, 4})
	for _, e := range []kernels.Tensor{f32(nil, []float32{2}), i64(nil, []int64{3}), f32([]int64{4}, []float32{1, 2, 0.5, -1}), f32(nil, []float32{0.5})} {
		got := out1(t, node("Pow", graph.Attributes{}, []kernels.Tensor{x, e}, value(x)), x, e)
		for i, v := range got.Float32s() {
			ex := loadF64(e, i%len(e.Data)*0+min(i, numel(e.Shape)-1))
			want := math.Pow(float64(x.Float32s()[i]), ex)
			if math.IsNaN(want) {
				require.True(t, math.IsNaN(float64(v)))
				continue
			}
			require.InDelta(t, want, float64(v), 1e-6*math.Max(1, math.Abs(want)), "x %v e %v", x.Float32s()[i], ex)
		}
	}
	xi := i64([]int64{3}, []int64{2, -3, 5})
	e := i64(nil, []int64{2})
	got := out1(t, node("Pow", graph.Attributes{}, []kernels.Tensor{xi, e}, value(xi)), xi, e)
	require.Equal(t, []int64{4, 9, 25}, got.Int64s())
}

func TestFloat16Binary(t *testing.T) {
	r := rng(t, 20)
	a, b := randF32(r, 2, 3), randF32(r, 3)
	a16, b16 := toF16(a), toF16(b)
	got := out1(t, node("Mul", graph.Attributes{}, []kernels.Tensor{a16, b16}, value(a16)), a16, b16)
	fa, fb := fromF16(a16), fromF16(b16)
	want := make([]float32, 6)
	for i := range want {
		want[i] = fromF16(toF16(f32(nil, []float32{fa[i] * fb[i%3]})))[0]
	}
	require.Equal(t, want, fromF16(got))
}
