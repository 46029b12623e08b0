package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// samples are float32s over the ranges that matter, with the edge values.
func samples() []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float32{0, -0, 1, -1, 1e-8, -1e-8, 0.01, 0.0625, 0.06249, 88.7, 88.72283, 88.73, 89, 100, -87.3, -103, -104, -200,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for i := 0; i < 5000; i++ {
		xs = append(xs, float32(r.NormFloat64()*3), float32(r.Float64()*200-100), float32(r.NormFloat64()*0.05))
	}
	return xs
}

// within checks got against want within rel relative error (abs absolute near zero); NaN
// must give NaN and infinities the same infinity.
func within(t *testing.T, name string, x, got float32, want, rel, abs float64) {
	t.Helper()
	switch {
	case math.IsNaN(want):
		require.True(t, got != got, "%s(%g) = %g, want NaN", name, x, got)
	case math.IsInf(want, 0):
		require.Equal(t, want, float64(got), "%s(%g)", name, x)
	default:
		require.InDelta(t, want, float64(got), math.Max(rel*math.Abs(want), abs), "%s(%g)", name, x)
	}
}

func TestExp(t *testing.T) {
	xs := samples()
	got := make([]float32, len(xs))
	Exp(got, xs)
	for i, x := range xs {
		want := math.Exp(float64(x))
		if want < 1e-37 { // denormal results need only be tiny
			require.Less(t, float64(got[i]), 1e-37, "Exp(%g)", x)
			require.Less(t, float64(Exp32(x)), 1e-37, "Exp32(%g)", x)
			continue
		}
		if want > math.MaxFloat32 {
			want = math.Inf(1)
		}
		within(t, "Exp", x, got[i], want, 3e-7, 0)
		within(t, "Exp32", x, Exp32(x), want, 3e-7, 0)
	}
}

func TestExpShiftSums(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 100, 1000} {
		var xs []float32
		for _, x := range samples()[21:] { // finite, with finite sums
			if len(xs) < n && x < 80 {
				xs = append(xs, x)
			}
		}
		got := make([]float32, n)
		sum := ExpShift(got, xs, 3)
		var want float64
		for i, x := range xs {
			e := math.Exp(float64(x - 3))
			require.InDelta(t, e, float64(got[i]), 3e-7*e+1e-37)
			want += float64(got[i])
		}
		require.InDelta(t, want, float64(sum), 1e-5*math.Abs(want)+1e-30, "n=%d", n)
	}
}

func TestMax(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 8, 9, 17, 64, 1001} {
		x := make([]float32, n)
		want := float32(math.Inf(-1))
		for i := range x {
			x[i] = float32(r.NormFloat64())
			want = max(want, x[i])
		}
		require.Equal(t, want, Max(x), "n=%d", n)
		if n > 0 {
			for _, at := range []int{0, n / 2, n - 1} {
				y := append([]float32(nil), x...)
				y[at] = float32(math.NaN())
				m := Max(y)
				require.True(t, m != m, "n=%d, NaN at %d: %v", n, at, m)
			}
		}
	}
}

func TestFunctions(t *testing.T) {
	xs := samples()
	got := make([]float32, len(xs))
	for _, f := range []struct {
		name string
		fn   func(dst, src []float32)
		ref  func(x float64) float64
		rel  float64
		abs  float64
	}{
		{"Sigmoid", Sigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, 1e-6, 1e-30},
		{"SiLU", func(d, s []float32) { SiLU(d, s, 1) }, func(x float64) float64 { return x / (1 + math.Exp(-x)) }, 1e-6, 1e-30},
		{"Tanh", Tanh, math.Tanh, 1e-6, 1e-7},
		{"Erf", Erf, math.Erf, 0, 4e-7},
		{"Gelu", Gelu, func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, 1e-6, 1e-6},
		{"GeluTanh", GeluTanh, func(x float64) float64 {
			return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
		}, 1e-6, 2e-7},
	} {
		f.fn(got, xs)
		for i, x := range xs {
			want := f.ref(float64(x))
			if f.name == "SiLU" && math.IsInf(float64(x), -1) || f.name == "GeluTanh" && math.IsInf(float64(x), 0) || f.name == "Gelu" && math.IsInf(float64(x), -1) {
				continue // 0 * Inf: the reference gives NaN
			}
			within(t, f.name, x, got[i], want, f.rel, f.abs)
		}
	}
}

func TestRelu(t *testing.T) {
	nan, negZero := float32(math.NaN()), float32(math.Copysign(0, -1))
	x := []float32{1, -1, 0, negZero, nan, float32(math.Inf(-1)), float32(math.Inf(1)), -2.5, 3, -1e-40, 1e-40, nan, -7}
	for _, n := range []int{len(x), 8, 5} { // bulk and tail, tail alone
		z := make([]float32, n)
		Relu(z, x)
		for i, v := range x[:n] {
			switch {
			case v != v:
				require.True(t, z[i] != z[i], "NaN at %d", i)
			case v < 0:
				require.Equal(t, math.Float32bits(0), math.Float32bits(z[i]), "%v at %d", v, i)
			default:
				require.Equal(t, math.Float32bits(v), math.Float32bits(z[i]), "%v at %d", v, i)
			}
		}
	}
}

func TestDotAxpy(t *testing.T) {
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{2, 3, 4, 5, 6, 7}
	require.Equal(t, float32(2+6+12+20+30), Dot(a, b))
	y := []float32{1, 1, 1}
	Axpy(2, a, y)
	require.Equal(t, []float32{3, 5, 7}, y)
	// the assembly's lanes give the Go loop's bits (a product, then a sum)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{7, 8, 9, 64, 101} {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		s := float32(r.NormFloat64())
		want := append([]float32(nil), y...)
		for i := range want {
			want[i] += float32(s * x[i])
		}
		Axpy(s, x, y)
		require.Equal(t, want, y, "n %d", n)
	}
}

func BenchmarkExp(b *testing.B) {
	x := samples()[:4096]
	y := make([]float32, len(x))
	for b.Loop() {
		ExpShift(y, x, 1)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
}

func BenchmarkFunctions(b *testing.B) {
	x := samples()[:4096]
	y := make([]float32, len(x))
	for _, f := range []struct {
		name string
		fn   func(dst, src []float32)
	}{{"Sigmoid", Sigmoid}, {"Tanh", Tanh}, {"Gelu", Gelu}, {"GeluTanh", GeluTanh}, {"Erf", Erf}} {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				f.fn(y, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/elem")
		})
	}
}

func TestArith(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 100} {
		x, y, z := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		for _, op := range []Op{Add, Sub, Mul, Div} {
			VV(op, z, x, y)
			for i := range z {
				require.Equal(t, apply(op, x[i], y[i]), z[i])
			}
			VS(op, z, x, 1.5)
			for i := range z {
				require.Equal(t, apply(op, x[i], 1.5), z[i])
			}
			SV(op, z, 1.5, y)
			for i := range z {
				require.Equal(t, apply(op, 1.5, y[i]), z[i])
			}
		}
	}
}

func TestNormHelpers(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 7, 8, 9, 64, 100} {
		x, g, b, y := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		var s, ss float64
		for i := range x {
			x[i], g[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())
			s += float64(x[i])
			ss += float64(x[i]) * float64(x[i])
		}
		gs, gss := Sums(x)
		require.InDelta(t, s, gs, 1e-9)
		require.InDelta(t, ss, gss, 1e-9)
		var dev float64
		for _, v := range x {
			dev += (float64(v) - 0.25) * (float64(v) - 0.25)
		}
		require.InDelta(t, dev, SumSqDev(x, 0.25), 1e-9)
		for _, shift := range [][]float32{b, nil} {
			Affine(y, x, g, shift, 0.5, 2)
			for i := range y {
				want := (x[i] - 0.5) * 2 * g[i]
				if shift != nil {
					want += b[i]
				}
				require.InDelta(t, want, y[i], 1e-6)
			}
		}
	}
}

func TestSelectAndIsNaN(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 100} {
		c := make([]byte, n)
		x, y, z := make([]uint32, n), make([]uint32, n), make([]uint32, n)
		f, nan := make([]float32, n), make([]byte, n)
		for i := range c {
			c[i] = byte(r.IntN(3))
			x[i], y[i] = r.Uint32(), r.Uint32()
			f[i] = float32(r.NormFloat64())
			if r.IntN(3) == 0 {
				f[i] = float32(math.NaN())
			}
			if r.IntN(5) == 0 {
				f[i] = float32(math.Inf(1 - 2*r.IntN(2)))
			}
		}
		for _, sides := range [][2][]uint32{{x, y}, {x[:min(n, 1)], y}, {x, y[:min(n, 1)]}, {x[:min(n, 1)], y[:min(n, 1)]}} {
			if n == 0 {
				continue
			}
			Select32(z, c, sides[0], sides[1])
			for i := range z {
				xv, yv := sides[0][min(i, len(sides[0])-1)], sides[1][min(i, len(sides[1])-1)]
				want := yv
				if c[i] != 0 {
					want = xv
				}
				require.Equal(t, want, z[i], "n=%d element %d", n, i)
			}
		}
		IsNaN(nan, f)
		for i, v := range f {
			require.Equal(t, v != v, nan[i] == 1, "n=%d element %d (%v)", n, i, v)
			require.LessOrEqual(t, nan[i], byte(1))
		}
	}
}

func TestDequant4(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 1, 15, 16, 17, 40} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(r.IntN(256))
		}
		dst := make([]float32, 2*n)
		Dequant4(dst, src, 0.37, 8)
		for i, v := range src {
			require.InDelta(t, (float32(v&15)-8)*0.37, dst[2*i], 1e-6)
			require.InDelta(t, (float32(v>>4)-8)*0.37, dst[2*i+1], 1e-6)
		}
	}
}

func TestRopeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct{ half, heads, hstride, rows, rstride, tab int }{
		{8, 4, 16, 5, 64, 7},   // [B, S, N*D] rows of 4 heads of 16
		{8, 2, 48, 3, 16, 4},   // [B, N, S, D]: heads S*D apart, positions D apart
		{20, 3, 40, 4, 120, 9}, // half with a 4-lane tail
		{4, 2, 8, 3, 16, 5},    // no full 8 lanes
		{32, 1, 64, 2, 64, 3},  // one head of 64
	} {
		n := (tc.rows-1)*tc.rstride + (tc.heads-1)*tc.hstride + 2*tc.half
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(r.NormFloat64())
		}
		cos, sin := make([]float32, tc.tab*tc.half), make([]float32, tc.tab*tc.half)
		for k := range cos {
			a := r.Float64() * 2 * math.Pi
			cos[k], sin[k] = float32(math.Cos(a)), float32(math.Sin(a))
		}
		pos := make([]int64, tc.rows)
		for i := range pos {
			pos[i] = int64(r.IntN(tc.tab))
		}
		want := append([]float32(nil), src...)
		for row, p := range pos {
			for h := range tc.heads {
				o := row*tc.rstride + h*tc.hstride
				for k := range tc.half {
					c, s := float64(cos[int(p)*tc.half+k]), float64(sin[int(p)*tc.half+k])
					x0, x1 := float64(src[o+k]), float64(src[o+k+tc.half])
					want[o+k] = float32(x0*c - x1*s)
					want[o+k+tc.half] = float32(x1*c + x0*s)
				}
			}
		}
		dst := append([]float32(nil), src...) // lanes outside the heads stay as they were
		RopeRows(dst, src, cos, sin, pos, tc.half, tc.heads, tc.hstride, tc.rstride)
		inPlace := append([]float32(nil), src...)
		RopeRows(inPlace, inPlace, cos, sin, pos, tc.half, tc.heads, tc.hstride, tc.rstride)
		for i := range want {
			require.InDelta(t, want[i], dst[i], 1e-6, "%+v: element %d", tc, i)
			require.Equal(t, dst[i], inPlace[i], "%+v: in place, element %d", tc, i)
		}
		require.Panics(t, func() {
			RopeRows(dst, src, cos, sin, []int64{int64(tc.tab)}, tc.half, tc.heads, tc.hstride, tc.rstride)
		}, "a position past the tables")
	}
}
