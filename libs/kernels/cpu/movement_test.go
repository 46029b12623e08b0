package cpu

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// coords and offset convert between flat indices and coordinates of shape.
func coords(shape []int64, o int) []int {
	c := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		c[d] = o % int(shape[d])
		o /= int(shape[d])
	}
	return c
}

func offset(shape []int64, c []int) int {
	o := 0
	for d := range shape {
		o = o*int(shape[d]) + c[d]
	}
	return o
}

func TestTransposeRandom(t *testing.T) {
	r := rng(t, 16)
	for it := 0; it < 42; it++ {
		rank := 1 + r.IntN(5)
		if it >= 40 { // batched transposes of the last two dims, in blocks, in parallel
			rank = 3
		}
		shape := make([]int64, rank)
		for i := range shape {
			shape[i] = int64(1 + r.IntN(4))
			if it%4 == 0 && rank <= 3 {
				shape[i] = int64(1 + r.IntN(40)) // large enough for the blocked transpose
			}
			if it >= 40 {
				shape[i] = []int64{3, 200, 137}[i]
			}
		}
		if it == 7 {
			shape[0] = 0
		}
		perm := make([]int64, rank)
		for i, p := range r.Perm(rank) {
			perm[i] = int64(p)
		}
		if it >= 40 {
			perm = [][]int64{{0, 2, 1}, {1, 2, 0}}[it-40]
		}
		x := randF32(r, shape...)
		out := make([]int64, rank)
		for i, p := range perm {
			out[i] = shape[p]
		}
		got := out1(t, node("Transpose", kernels.Attrs("perm", perm), []kernels.Tensor{x}, kernels.Value{DType: graph.Float32, Shape: out}), x)
		for o := range got.Float32s() {
			oc := coords(out, o)
			ic := make([]int, rank)
			for i, p := range perm {
				ic[p] = oc[i]
			}
			require.Equal(t, x.Float32s()[offset(shape, ic)], got.Float32s()[o], "shape %v perm %v", shape, perm)
		}
	}
	// default perm reverses; int64 elements
	x := i64([]int64{2, 3}, []int64{1, 2, 3, 4, 5, 6})
	got := out1(t, node("Transpose", graph.Attributes{}, []kernels.Tensor{x}, kernels.Value{DType: graph.Int64, Shape: []int64{3, 2}}), x)
	require.Equal(t, []int64{1, 4, 2, 5, 3, 6}, got.Int64s())
}

func TestViewsCopyOrAlias(t *testing.T) {
	x := f32([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	shape := i64([]int64{1}, []int64{6})
	n := node("Reshape", graph.Attributes{}, []kernels.Tensor{x, shape}, kernels.Value{DType: graph.Float32, Shape: []int64{6}})
	got := out1(t, n, x, shape)
	require.Equal(t, x.Float32s(), got.Float32s())
	// an output aliasing the input is left alone
	inst, err := registry.Select(n, dev)
	require.NoError(t, err)
	alias := kernels.Tensor{DType: graph.Float32, Shape: []int64{6}, Data: x.Data}
	require.NoError(t, inst.Run([]kernels.Tensor{x, shape}, []kernels.Tensor{alias}, nil, 0))
	require.Equal(t, []float32{1, 2, 3, 4, 5, 6}, x.Float32s())
	// Dropout in inference copies and fills the mask with true
	d, _ := run(t, node("Dropout", graph.Attributes{}, []kernels.Tensor{x}, value(x), kernels.Value{DType: graph.Bool, Shape: x.Shape}), x)
	require.Equal(t, x.Float32s(), d[0].Float32s())
	require.Equal(t, []byte{1, 1, 1, 1, 1, 1}, d[1].Data)
}

func TestExpandAndTile(t *testing.T) {
	x := f32([]int64{3, 1}, []float32{1, 2, 3})
	s := i64([]int64{3}, []int64{2, 1, 4})
	got := out1(t, node("Expand", graph.Attributes{}, []kernels.Tensor{x, s}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 3, 4}}), x, s)
	for o, v := range got.Float32s() {
		require.Equal(t, float32(coords([]int64{2, 3, 4}, o)[1]+1), v)
	}
	// Expand to a shape with a 1 where the input is bigger keeps the input's dim
	s2 := i64([]int64{2}, []int64{1, 1})
	got = out1(t, node("Expand", graph.Attributes{}, []kernels.Tensor{x, s2}, value(x)), x, s2)
	require.Equal(t, x.Float32s(), got.Float32s())

	y := i64([]int64{2, 2}, []int64{1, 2, 3, 4})
	reps := i64([]int64{2}, []int64{2, 3})
	got = out1(t, node("Tile", graph.Attributes{}, []kernels.Tensor{y, reps}, kernels.Value{DType: graph.Int64, Shape: []int64{4, 6}}), y, reps)
	for o, v := range got.Int64s() {
		c := coords([]int64{4, 6}, o)
		require.Equal(t, y.Int64s()[(c[0]%2)*2+c[1]%2], v)
	}
}

func TestConcatSplit(t *testing.T) {
	r := rng(t, 17)
	a, b, c := randF32(r, 2, 1, 3), randF32(r, 2, 0, 3), randF32(r, 2, 4, 3)
	got := out1(t, node("Concat", kernels.Attrs("axis", -2), []kernels.Tensor{a, b, c}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 5, 3}}), a, b, c)
	for o, v := range got.Float32s() {
		cc := coords([]int64{2, 5, 3}, o)
		var want float32
		if cc[1] == 0 {
			want = a.Float32s()[cc[0]*3+cc[2]]
		} else {
			want = c.Float32s()[(cc[0]*4+cc[1]-1)*3+cc[2]]
		}
		require.Equal(t, want, v)
	}
	// Split (opset 18 num_outputs gives uneven last part): 5 -> 2, 2, 1
	outs := []kernels.Value{{DType: graph.Float32, Shape: []int64{2, 2, 3}}, {DType: graph.Float32, Shape: []int64{2, 2, 3}}, {DType: graph.Float32, Shape: []int64{2, 1, 3}}}
	parts, _ := run(t, node("Split", kernels.Attrs("axis", 1, "num_outputs", 3), []kernels.Tensor{got}, outs...), got)
	var back []float32
	for bi := 0; bi < 2; bi++ {
		for _, p := range parts {
			n := int(p.Shape[1]) * 3
			back = append(back, p.Float32s()[bi*n:(bi+1)*n]...)
		}
	}
	require.Equal(t, got.Float32s(), back)
	_, err := registry.Select(node("Split", graph.Attributes{}, []kernels.Tensor{got}, outs[:2]...), dev)
	require.Error(t, err, "outputs must cover the axis")
}

func TestSlice(t *testing.T) {
	r := rng(t, 18)
	x := randF32(r, 4, 5, 6)
	big := int64(math.MaxInt64)
	for _, tc := range []struct {
		starts, ends, axes, steps []int64
	}{
		{[]int64{1}, []int64{3}, nil, nil},
		{[]int64{0, 1}, []int64{big, -1}, []int64{2, 1}, nil},
		{[]int64{-1}, []int64{-big}, []int64{1}, []int64{-1}},
		{[]int64{5, 0}, []int64{0, 4}, []int64{-1, 0}, []int64{-2, 3}},
		{[]int64{10}, []int64{20}, []int64{2}, nil}, // clamped to empty
		{[]int64{-100}, []int64{100}, []int64{0}, []int64{2}},
		{[]int64{2}, []int64{2}, []int64{1}, nil},
	} {
		t.Run(fmt.Sprintf("%v", tc), func(t *testing.T) {
			// the reference: python-like slicing per axis
			first := []int64{0, 0, 0}
			step := []int64{1, 1, 1}
			out := slices.Clone(x.Shape)
			for j := range tc.starts {
				ax := int64(j)
				if tc.axes != nil {
					ax = tc.axes[j]
					if ax < 0 {
						ax += 3
					}
				}
				st := int64(1)
				if tc.steps != nil {
					st = tc.steps[j]
				}
				f, c := sliceAxis(tc.starts[j], tc.ends[j], st, x.Shape[ax])
				first[ax], step[ax], out[ax] = f, st, c
			}
			in := []kernels.Tensor{x, i64([]int64{int64(len(tc.starts))}, tc.starts), i64([]int64{int64(len(tc.ends))}, tc.ends)}
			if tc.axes != nil || tc.steps != nil {
				axes := tc.axes
				if axes == nil {
					axes = []int64{0, 1, 2}[:len(tc.starts)]
				}
				in = append(in, i64([]int64{int64(len(axes))}, axes))
			}
			if tc.steps != nil {
				in = append(in, i64([]int64{int64(len(tc.steps))}, tc.steps))
			}
			got := out1(t, node("Slice", graph.Attributes{}, in, kernels.Value{DType: graph.Float32, Shape: out}), in...)
			for o, v := range got.Float32s() {
				c := coords(out, o)
				ic := make([]int, 3)
				for d := range ic {
					ic[d] = int(first[d] + int64(c[d])*step[d])
				}
				require.Equal(t, x.Float32s()[offset(x.Shape, ic)], v)
			}
		})
	}
	// a wrong output shape for the runtime starts is refused before writing
	in := []kernels.Tensor{x, i64([]int64{1}, []int64{0}), i64([]int64{1}, []int64{2})}
	n := node("Slice", graph.Attributes{}, in, kernels.Value{DType: graph.Float32, Shape: []int64{3, 5, 6}})
	inst, err := registry.Select(n, dev)
	require.NoError(t, err)
	o := []kernels.Tensor{kernels.MustTensor(graph.Float32, 3, 5, 6)}
	sentinel(o)
	require.Error(t, inst.Run(in, o, nil, 0))
	untouched(t, o)
}

func TestSliceAxisRules(t *testing.T) {
	for _, tc := range []struct{ start, end, step, dim, first, count int64 }{
		{0, 10, 1, 5, 0, 5}, {-2, 10, 1, 5, 3, 2}, {4, -10, -1, 5, 4, 5}, {10, 0, -2, 5, 4, 2},
		{-1, math.MinInt64, -1, 5, 4, 5}, {3, 3, 1, 5, 3, 0}, {0, 5, 3, 5, 0, 2}, {0, 0, 1, 0, 0, 0},
	} {
		f, c := sliceAxis(tc.start, tc.end, tc.step, tc.dim)
		require.Equal(t, tc.count, c, "%+v", tc)
		if c > 0 {
			require.Equal(t, tc.first, f, "%+v", tc)
		}
	}
}

func TestGathers(t *testing.T) {
	r := rng(t, 19)
	data := randF32(r, 3, 4, 2)
	t.Run("Gather", func(t *testing.T) {
		idx := i64([]int64{2, 2}, []int64{0, -1, 3, 1})
		got := out1(t, node("Gather", kernels.Attrs("axis", 1), []kernels.Tensor{data, idx}, kernels.Value{DType: graph.Float32, Shape: []int64{3, 2, 2, 2}}), data, idx)
		for o, v := range got.Float32s() {
			c := coords([]int64{3, 2, 2, 2}, o)
			j := int(idx.Int64s()[c[1]*2+c[2]])
			if j < 0 {
				j += 4
			}
			require.Equal(t, data.Float32s()[(c[0]*4+j)*2+c[3]], v)
		}
		i32idx := i32(nil, []int32{2})
		got = out1(t, node("Gather", graph.Attributes{}, []kernels.Tensor{data, i32idx}, kernels.Value{DType: graph.Float32, Shape: []int64{4, 2}}), data, i32idx)
		require.Equal(t, data.Float32s()[16:24], got.Float32s())
		bad := i64([]int64{1}, []int64{3})
		n := node("Gather", graph.Attributes{}, []kernels.Tensor{data, bad}, kernels.Value{DType: graph.Float32, Shape: []int64{1, 4, 2}})
		inst, err := registry.Select(n, dev)
		require.NoError(t, err)
		o := []kernels.Tensor{kernels.MustTensor(graph.Float32, 1, 4, 2)}
		sentinel(o)
		require.Error(t, inst.Run([]kernels.Tensor{data, bad}, o, nil, 0))
		untouched(t, o)
	})
	t.Run("GatherElements", func(t *testing.T) {
		idx := i64([]int64{3, 2, 2}, []int64{0, 3, -1, 2, 1, 1, 0, 0, 3, 2, 1, 0})
		got := out1(t, node("GatherElements", kernels.Attrs("axis", 1), []kernels.Tensor{data, idx}, kernels.Value{DType: graph.Float32, Shape: idx.Shape}), data, idx)
		for o, v := range got.Float32s() {
			c := coords(idx.Shape, o)
			j := int(idx.Int64s()[o])
			if j < 0 {
				j += 4
			}
			require.Equal(t, data.Float32s()[(c[0]*4+j)*2+c[2]], v)
		}
	})
	t.Run("GatherND", func(t *testing.T) {
		idx := i64([]int64{2, 2}, []int64{0, 1, 2, -1})
		got := out1(t, node("GatherND", graph.Attributes{}, []kernels.Tensor{data, idx}, kernels.Value{DType: graph.Float32, Shape: []int64{2, 2}}), data, idx)
		require.Equal(t, append(data.Float32s()[2:4:4], data.Float32s()[22:24]...), got.Float32s())
		// batch_dims = 1: indices [3, 1, 1] pick one row of each batch
		bidx := i64([]int64{3, 1, 1}, []int64{1, 0, 3})
		got = out1(t, node("GatherND", kernels.Attrs("batch_dims", 1), []kernels.Tensor{data, bidx}, kernels.Value{DType: graph.Float32, Shape: []int64{3, 1, 2}}), data, bidx)
		require.Equal(t, []float32{data.Float32s()[2], data.Float32s()[3], data.Float32s()[8], data.Float32s()[9], data.Float32s()[22], data.Float32s()[23]}, got.Float32s())
	})
	t.Run("ScatterND", func(t *testing.T) {
		idx := i64([]int64{2, 1}, []int64{2, 0})
		upd := randF32(r, 2, 4, 2)
		got := out1(t, node("ScatterND", graph.Attributes{}, []kernels.Tensor{data, idx, upd}, value(data)), data, idx, upd)
		want := slices.Clone(data.Float32s())
		copy(want[16:24], upd.Float32s()[:8])
		copy(want[0:8], upd.Float32s()[8:])
		require.Equal(t, want, got.Float32s())
		got = out1(t, node("ScatterND", kernels.Attrs("reduction", "add"), []kernels.Tensor{data, idx, upd}, value(data)), data, idx, upd)
		for i := 0; i < 8; i++ {
			want[16+i] = data.Float32s()[16+i] + upd.Float32s()[i]
			want[i] = data.Float32s()[i] + upd.Float32s()[8+i]
		}
		closeTo(t, want, got.Float32s(), 1e-6)
	})
}

func TestTileScalarAndZero(t *testing.T) {
	x := f32(nil, []float32{3})
	reps := i64([]int64{0}, nil)
	got := out1(t, node("Tile", graph.Attributes{}, []kernels.Tensor{x, reps}, value(x)), x, reps)
	require.Equal(t, []float32{3}, got.Float32s())
	z := f32([]int64{0, 2}, nil)
	reps2 := i64([]int64{2}, []int64{3, 2})
	got = out1(t, node("Tile", graph.Attributes{}, []kernels.Tensor{z, reps2}, kernels.Value{DType: graph.Float32, Shape: []int64{0, 4}}), z, reps2)
	require.Empty(t, got.Data)
}

// carve's GatherElements(data, indices, shape) equals ONNX's GatherElements of the indices
// expanded to shape: indices broadcast over leading, middle and inner dims, of lower rank,
// int32, along the last axis and an inner one, 4-byte and 2-byte elements.
func TestExpandedGatherElements(t *testing.T) {
	r := rng(t, 23)
	for _, tc := range []struct {
		name           string
		data, idx, out []int64
		axis           int64
		i32, f16       bool
	}{
		{name: "leading, last axis", data: []int64{6, 5, 3}, idx: []int64{1, 5, 5}, out: []int64{6, 5, 5}, axis: -1},
		{name: "lower rank", data: []int64{6, 5, 3}, idx: []int64{5, 4}, out: []int64{6, 5, 4}, axis: 2},
		{name: "middle", data: []int64{3, 4, 2}, idx: []int64{3, 1, 2}, out: []int64{3, 4, 2}, axis: 2},
		{name: "inner, axis 1", data: []int64{3, 4, 5}, idx: []int64{1, 6, 1}, out: []int64{3, 6, 5}, axis: 1},
		{name: "leading, axis 1, int32", data: []int64{2, 4, 3}, idx: []int64{1, 4, 3}, out: []int64{2, 4, 3}, axis: 1, i32: true},
		{name: "leading, float16", data: []int64{4, 3, 5}, idx: []int64{1, 3, 2}, out: []int64{4, 3, 2}, axis: 2, f16: true},
		{name: "none", data: []int64{2, 3}, idx: []int64{2, 3}, out: []int64{2, 3}, axis: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := randF32(r, tc.data...)
			if tc.f16 {
				data = out1(t, node("Cast", kernels.Attrs("to", int64(graph.Float16)), []kernels.Tensor{data}, kernels.Value{DType: graph.Float16, Shape: tc.data}), data)
			}
			dim := tc.data[(int(tc.axis)+len(tc.data))%len(tc.data)]
			vals := make([]int64, mustNumel(tc.idx))
			for i := range vals {
				vals[i] = int64(r.IntN(int(2*dim))) - dim // negative ones too
			}
			idx := i64(tc.idx, vals)
			shape := i64([]int64{int64(len(tc.out))}, tc.out)
			expanded := out1(t, node("Expand", graph.Attributes{}, []kernels.Tensor{idx, shape}, kernels.Value{DType: graph.Int64, Shape: tc.out}), idx, shape)
			if tc.i32 {
				idx = out1(t, node("Cast", kernels.Attrs("to", int64(graph.Int32)), []kernels.Tensor{idx}, kernels.Value{DType: graph.Int32, Shape: tc.idx}), idx)
			}
			attrs := kernels.Attrs("axis", tc.axis)
			outV := kernels.Value{DType: data.DType, Shape: tc.out}
			want := out1(t, node("GatherElements", attrs, []kernels.Tensor{data, expanded}, outV), data, expanded)
			n := node("GatherElements", attrs, []kernels.Tensor{data, idx, shape}, outV)
			n.Domain = kernels.DomainCarve
			require.Equal(t, want.Data, out1(t, n, data, idx, shape).Data)
		})
	}
	t.Run("bad index", func(t *testing.T) {
		data, shape := randF32(r, 4, 3, 3), i64([]int64{3}, []int64{4, 3, 3})
		for _, i := range []int{0, 8} { // found by the parallel rows and by the general loop
			vals := make([]int64, 9)
			vals[i] = 3
			idx := i64([]int64{1, 3, 3}, vals)
			axis := int64(2)
			if i == 8 {
				idx, axis = i64([]int64{1, 1, 9}, vals), 1
				data, shape = randF32(r, 4, 3, 9), i64([]int64{3}, []int64{4, 3, 9})
			}
			n := node("GatherElements", kernels.Attrs("axis", axis), []kernels.Tensor{data, idx, shape}, kernels.Value{DType: graph.Float32, Shape: kernels.ViewAs[int64](shape.Data)})
			n.Domain = kernels.DomainCarve
			inst, err := registry.Select(n, dev)
			require.NoError(t, err)
			o := []kernels.Tensor{kernels.MustTensor(graph.Float32, n.Outputs[0].Shape...)}
			require.ErrorContains(t, inst.Run([]kernels.Tensor{data, idx, shape}, o, nil, 0), "out of range")
		}
	})
	t.Run("rejects", func(t *testing.T) {
		data, idx, shape := randF32(r, 4, 3), i64([]int64{2, 3}, make([]int64, 6)), i64([]int64{2}, []int64{4, 3})
		n := node("GatherElements", kernels.Attrs("axis", 1), []kernels.Tensor{data, idx, shape}, kernels.Value{DType: graph.Float32, Shape: []int64{4, 3}})
		n.Domain = kernels.DomainCarve
		_, err := registry.Select(n, dev)
		require.ErrorContains(t, err, "is not the broadcast of indices")
	})
}
