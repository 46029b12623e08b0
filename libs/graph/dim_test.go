package graph

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDimCanonicalForm(t *testing.T) {
	b, s := Sym("batch"), Sym("seq")
	tests := []struct {
		got  Dim
		want string
	}{
		{b.Mul(s), "batch*seq"},
		{s.Mul(b), "batch*seq"},
		{b.Mul(s).Mul(Const(64)).FloorDiv(b.Mul(s)), "64"},
		{b.Mul(s).Mul(Const(64)).exactDiv(Const(16)), "4*batch*seq"},
		{s.Add(Const(1)).Sub(Const(1)), "seq"},
		{s.Add(s), "2*seq"},
		{s.Sub(s), "0"},
		{s.Add(Const(1)).Mul(s.Sub(Const(1))), "seq*seq - 1"},
		{MaxDim(s, Const(0)), "seq"},
		{MaxDim(s.Sub(Const(3)), Const(0)), "max(seq - 3, 0)"},
		{broadcastDim(s, Const(1)), "seq"},
		{broadcastDim(Const(1), s), "seq"},
		{broadcastDim(s, b), "broadcast(seq, batch)"},
		{s.FloorDiv(Const(2)), "floordiv(seq, 2)"},
		{sliceLenDim(s, Const(0), Const(math.MaxInt64), Const(1)), "seq"},
		{sliceLenDim(s, Const(1), Const(math.MaxInt64), Const(1)), "slicelen(seq, 1, 9223372036854775807, 1)"},
		{Sym("a b"), `"a b"`},
		{sliceLenDim(Const(64), Const(0), s, Const(1)), "min(seq, 64)"},
		// TorchScript's expand(batch, -1, ...): where(shape == -1, 1, shape), broadcast with the dim
		{broadcastDim(s, selectDim(eqDim(s, Const(-1)), Const(1), s)), "seq"},
		{eqDim(s.Sub(Const(2)), Const(-1)), "eq(seq - 2, -1)"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, tc.got.String())
	}
	require.True(t, b.Mul(s).Equal(s.Mul(b)))
	require.False(t, b.Equal(s))
	require.True(t, Const(3).Equal(Const(3)))
}

func TestDimExactDiv(t *testing.T) {
	b, s := Sym("batch"), Sym("seq")
	for _, tc := range []struct {
		d, o Dim
		want string // "" when o is not known to divide d
	}{
		{Const(96), Const(32), "3"},
		{Const(96), Const(36), ""},
		{Const(5), Const(0), ""},
		{b.Mul(Const(96)), Const(32), "3*batch"},
		{b.Mul(s).Mul(Const(96)), b.Mul(Const(96)), "seq"},
		{b.Mul(Const(96)), b.Mul(Const(96)), "1"},
		{b, Const(4), ""},
		{Const(32), b.Mul(Const(32)), ""},
	} {
		q, ok := tc.d.ExactDiv(tc.o)
		require.Equal(t, tc.want != "", ok, "%s / %s", tc.d, tc.o)
		if ok {
			require.Equal(t, tc.want, q.String(), "%s / %s", tc.d, tc.o)
		}
	}
}

func TestDimEval(t *testing.T) {
	b, s := Sym("batch"), Sym("seq")
	dims := map[string]int64{"batch": 3, "seq": 10}
	tests := []struct {
		d    Dim
		want int64
		err  string
	}{
		{b.Mul(s).Add(Const(7)), 37, ""},
		{s.FloorDiv(Const(3)), 3, ""},
		{s.ceilDiv(Const(3)), 4, ""},
		{s.mod(Const(3)), 1, ""},
		{s.exactDiv(Const(3)), 0, "10 is not a multiple of 3"},
		{s.FloorDiv(b.Sub(Const(3))), 0, "division by zero"},
		{broadcastDim(s, b), 0, "do not broadcast"},
		{MaxDim(s, b), 10, ""},
		{MinDim(s, b), 3, ""},
		{eqDim(s, b), 0, ""},
		{ltDim(b, s), 1, ""},
		{selectDim(ltDim(b, s), Const(5), Const(6)), 5, ""},
		{eqDim(s.Mul(b), Const(-1)), 0, ""},
		{ltDim(Const(-1), s), 1, ""},
		{ltDim(s.Sub(Const(20)), Const(-1)), 1, ""}, // not known non-negative: evaluated
		{Sym("nope"), 0, `dim "nope" has no value`},
		{s.Mul(Const(math.MaxInt64 / 4)), 0, "overflows int64"},
		{sliceLenDim(s, Const(-3), Const(math.MaxInt64), Const(1)), 3, ""},
	}
	for _, tc := range tests {
		v, err := tc.d.Eval(dims)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.d.String())
			continue
		}
		require.NoError(t, err, tc.d.String())
		require.Equal(t, tc.want, v, tc.d.String())
	}
}

func TestDimPoison(t *testing.T) {
	huge := Const(math.MaxInt64)
	for _, d := range []Dim{
		huge.Add(Const(1)),
		huge.Mul(Const(2)),
		Const(5).FloorDiv(Const(0)),
		broadcastDim(Const(3), Const(5)),
		huge.Add(Const(1)).Add(Sym("x")), // poison propagates
	} {
		require.Error(t, d.Err(), d.String())
		_, err := d.Eval(nil)
		require.Error(t, err)
	}
	// Expressions cannot grow without bound: a hostile model building ever larger ones
	// gets a poisoned dim, not an evaluation that takes forever.
	d := Sym("x")
	for i := 0; i < 40; i++ {
		d = fnDim(fnMax, d, d.Add(Const(int64(i))))
	}
	require.Error(t, d.Err())
	require.True(t, strings.Contains(d.Err().Error(), "more than"))
}

// TestSliceLenMatchesReference compares sliceLen with a direct simulation of ONNX Slice's
// index walk, for random arguments.
func TestSliceLenMatchesReference(t *testing.T) {
	seed := uint64(rand.Int64())
	rng := rand.New(rand.NewPCG(seed, 2))
	ref := func(dim, start, end, step int64) int64 {
		clamp := func(v, lo, hi int64) int64 { return max(lo, min(v, hi)) }
		if start < 0 {
			start += dim
		}
		if end < 0 {
			end += dim
		}
		var n int64
		if step > 0 {
			start, end = clamp(start, 0, dim), clamp(end, 0, dim)
			for i := start; i < end; i += step {
				n++
			}
		} else {
			start, end = clamp(start, 0, dim-1), clamp(end, -1, dim-1)
			for i := start; i > end; i += step {
				n++
			}
		}
		return n
	}
	for i := 0; i < 20000; i++ {
		dim := rng.Int64N(12)
		start, end := rng.Int64N(31)-15, rng.Int64N(31)-15
		step := rng.Int64N(9) - 4
		if step == 0 {
			step = 1
		}
		got, err := sliceLen(dim, start, end, step)
		require.NoError(t, err)
		want := ref(dim, start, end, step)
		if dim == 0 {
			want = 0
		}
		require.Equal(t, want, got, "seed %d: slicelen(%d, %d, %d, %d)", seed, dim, start, end, step)
	}
	for _, c := range [][4]int64{{5, 0, math.MaxInt64, 1}, {5, math.MinInt64, math.MaxInt64, 1}, {5, -1, math.MinInt64, -1}, {5, 4, -6, math.MinInt64}} {
		_, err := sliceLen(c[0], c[1], c[2], c[3])
		require.NoError(t, err)
	}
}

// TestDimArithmeticMatchesInt64 evaluates random expressions both symbolically and on
// integers.
func TestDimArithmeticMatchesInt64(t *testing.T) {
	seed := uint64(rand.Int64())
	rng := rand.New(rand.NewPCG(seed, 3))
	names := []string{"a", "b", "c"}
	for i := 0; i < 2000; i++ {
		vals := map[string]int64{"a": rng.Int64N(50), "b": rng.Int64N(50) + 1, "c": rng.Int64N(7) + 1}
		d, v := Sym(names[0]), vals[names[0]]
		for k := 0; k < 6; k++ {
			n := names[rng.IntN(3)]
			o, ov := Sym(n), vals[n]
			if rng.IntN(3) == 0 {
				ov = rng.Int64N(9) + 1
				o = Const(ov)
			}
			switch rng.IntN(6) {
			case 0:
				d, v = d.Add(o), v+ov
			case 1:
				d, v = d.Sub(o), v-ov
			case 2:
				d, v = d.Mul(o), v*ov
			case 3:
				if ov != 0 {
					q := v / ov
					if (v%ov != 0) && ((v < 0) != (ov < 0)) {
						q--
					}
					d, v = d.FloorDiv(o), q
				}
			case 4:
				d, v = MaxDim(d, o), max(v, ov)
			case 5:
				d, v = MinDim(d, o), min(v, ov)
			}
		}
		got, err := d.Eval(vals)
		require.NoError(t, err, "seed %d: %s", seed, d)
		require.Equal(t, v, got, "seed %d: %s at %v", seed, d, vals)
	}
}

func TestNumElementsAndByteSize(t *testing.T) {
	n, err := NumElements([]int64{2, 3, 4})
	require.NoError(t, err)
	require.Equal(t, int64(24), n)
	n, err = NumElements(nil)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	_, err = NumElements([]int64{1 << 32, 1 << 32})
	var oe *OverflowError
	require.ErrorAs(t, err, &oe)
	_, err = NumElements([]int64{2, -1})
	require.ErrorContains(t, err, "negative")
	b, err := ByteSize(Float32, []int64{1 << 30, 1 << 30})
	require.NoError(t, err)
	require.Equal(t, int64(1)<<62, b)
	_, err = ByteSize(Float32, []int64{1 << 31, 1 << 30})
	require.ErrorAs(t, err, &oe)
	b, err = ByteSize(Int4, []int64{3, 3})
	require.NoError(t, err)
	require.Equal(t, int64(5), b)
	_, err = ByteSize(String, []int64{1})
	require.Error(t, err)
}

func TestAttributes(t *testing.T) {
	ht := &HostTensor{DType: Int64, Shape: []int64{1}, Data: make([]byte, 8)}
	a := NewAttributes(
		Attribute{Name: "axis", Kind: AttrInt, Int: -1},
		Attribute{Name: "perm", Kind: AttrInts, Ints: []int64{0, 2, 1}},
		Attribute{Name: "eps", Kind: AttrFloat, Float: 1e-5},
		Attribute{Name: "scales", Kind: AttrFloats, Floats: []float32{1, 2}},
		Attribute{Name: "mode", Kind: AttrString, String: "linear"},
		Attribute{Name: "value", Kind: AttrTensor, Tensor: ht},
		Attribute{Name: "axis", Kind: AttrInt, Int: 2}, // the later one wins
	)
	require.Equal(t, int64(2), a.Int("axis", 0))
	require.Equal(t, int64(7), a.Int("missing", 7))
	require.Equal(t, int64(7), a.Int("mode", 7), "wrong kind gives the default")
	require.Equal(t, []int64{0, 2, 1}, a.Ints("perm"))
	require.Nil(t, a.Ints("axis"))
	require.Equal(t, float32(1e-5), a.Float("eps", 0))
	require.Equal(t, []float32{1, 2}, a.Floats("scales"))
	require.Equal(t, "linear", a.String("mode", ""))
	require.Equal(t, "x", a.String("nope", "x"))
	got, ok := a.Tensor("value")
	require.True(t, ok)
	require.Same(t, ht, got)
	_, ok = a.Tensor("axis")
	require.False(t, ok)
	require.True(t, a.Has("eps"))
	require.False(t, a.Has("nope"))
	var zero Attributes
	require.Equal(t, int64(3), zero.Int("axis", 3))
}
