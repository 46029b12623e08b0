// Package vec is float32 vector math for the CPU kernels: exp (and the functions built on it:
// softmax rows, sigmoid, SiLU, tanh, GELU), erf, maximum, dot products and scaled additions,
// computed in float32 without float64 round trips, with AVX2 assembly for exp and max where
// the CPU has it.
//
// Accuracy: exp is Cephes' expf (a degree-6 polynomial after a Cody-Waite reduction), within
// 2 ulp; the others are built on it or are polynomial approximations within a few 1e-7 of the
// float64 results. None allocates; slices may alias exactly (dst == src) but must not overlap
// otherwise.
package vec

import "math"

// Exp32 is e^x in float32: Exp's scalar form, for tails and CPUs without AVX2.
func Exp32(x float32) float32 {
	if x != x {
		return x
	}
	x = min(max(x, -104), 89)
	n := float32(math.RoundToEven(float64(x * 1.44269504088896341)))
	r := x - n*0.693359375
	r -= n * -2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	ni := int32(n)
	n1 := ni >> 1
	n2 := ni - n1
	return y * math.Float32frombits(uint32(n1+127)<<23) * math.Float32frombits(uint32(n2+127)<<23)
}

// ExpShift sets dst[i] = e^(src[i]-shift) and returns the sum of dst (len(dst) >= len(src)).
func ExpShift(dst, src []float32, shift float32) float32 {
	dst = dst[:len(src)]
	var sum float32
	n := len(src)
	if useAVX2 && n >= 8 {
		n8 := n &^ 7
		sum = expShift(dst[:n8], src[:n8], shift)
		dst, src = dst[n8:], src[n8:]
	}
	for i, v := range src {
		e := Exp32(v - shift)
		dst[i] = e
		sum += e
	}
	return sum
}

// Exp sets dst[i] = e^src[i].
func Exp(dst, src []float32) { ExpShift(dst, src, 0) }

// Max returns the largest element of x (-Inf for none). NaNs may or may not be skipped.
func Max(x []float32) float32 {
	m := float32(math.Inf(-1))
	if useAVX2 && len(x) >= 8 {
		n8 := len(x) &^ 7
		m = max8(x[:n8])
		x = x[n8:]
	}
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

// Scale sets x[i] *= a.
func Scale(x []float32, a float32) {
	for i := range x {
		x[i] *= a
	}
}

// Dot returns the sum of a[i]*b[i] (len(b) >= len(a)).
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Axpy sets y[i] += a*x[i] (len(x) >= len(y)).
func Axpy(a float32, x, y []float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += a * v
	}
}

// chunk is how many elements the composite functions process at a time in a stack buffer.
const chunk = 256

// Sigmoid sets dst[i] = 1 / (1 + e^-src[i]).
func Sigmoid(dst, src []float32) {
	var t [chunk]float32
	for len(src) > 0 {
		n := min(len(src), chunk)
		for i, v := range src[:n] {
			t[i] = -v
		}
		Exp(t[:n], t[:n])
		for i, e := range t[:n] {
			dst[i] = 1 / (1 + e)
		}
		dst, src = dst[n:], src[n:]
	}
}

// SiLU sets dst[i] = src[i] * sigmoid(alpha*src[i]) (alpha 1 is SiLU, 1.702 QuickGelu).
func SiLU(dst, src []float32, alpha float32) {
	var t [chunk]float32
	for len(src) > 0 {
		n := min(len(src), chunk)
		for i, v := range src[:n] {
			t[i] = -alpha * v
		}
		Exp(t[:n], t[:n])
		for i, e := range t[:n] {
			dst[i] = src[i] / (1 + e)
		}
		dst, src = dst[n:], src[n:]
	}
}

// Tanh sets dst[i] = tanh(src[i]): 1 - 2 / (e^(2|x|) + 1) with x's sign, and a Taylor
// polynomial near 0, where that form would cancel.
func Tanh(dst, src []float32) {
	var t [chunk]float32
	for len(src) > 0 {
		n := min(len(src), chunk)
		for i, v := range src[:n] {
			t[i] = 2 * abs(v)
		}
		Exp(t[:n], t[:n])
		for i, e := range t[:n] {
			dst[i] = tanhFrom(src[i], e)
		}
		dst, src = dst[n:], src[n:]
	}
}

// tanhFrom is tanh(x) given e = e^(2|x|).
func tanhFrom(x, e float32) float32 {
	a := abs(x)
	var r float32
	if a < 0.25 {
		x2 := x * x
		return x * (1 + x2*(-1.0/3+x2*(2.0/15+x2*(-17.0/315+x2*(62.0/2835+x2*(-1382.0/155925))))))
	}
	r = 1 - 2/(e+1)
	if x < 0 {
		return -r
	}
	if x != x {
		return x
	}
	return r
}

func abs(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// GeluTanh sets dst[i] to the tanh approximation of GELU: 0.5 x (1 + tanh(sqrt(2/pi) (x +
// 0.044715 x^3))).
func GeluTanh(dst, src []float32) {
	const c = 0.7978845608028654 // sqrt(2/pi)
	var u, t [chunk]float32
	for len(src) > 0 {
		n := min(len(src), chunk)
		for i, x := range src[:n] {
			u[i] = c * (x + 0.044715*x*x*x)
			t[i] = 2 * abs(u[i])
		}
		Exp(t[:n], t[:n])
		for i, e := range t[:n] {
			x := src[i]
			dst[i] = 0.5 * x * (1 + tanhFrom(u[i], e))
		}
		dst, src = dst[n:], src[n:]
	}
}

// Erf sets dst[i] = erf(src[i]): a Taylor series below 0.5, else Abramowitz and Stegun 7.1.26
// (within 1.5e-7 absolute, on top of exp's error).
func Erf(dst, src []float32) {
	var t [chunk]float32
	for len(src) > 0 {
		n := min(len(src), chunk)
		for i, x := range src[:n] {
			t[i] = -x * x
		}
		Exp(t[:n], t[:n])
		for i, e := range t[:n] {
			dst[i] = erfFrom(src[i], e)
		}
		dst, src = dst[n:], src[n:]
	}
}

// erfFrom is erf(x) given e = e^(-x^2).
func erfFrom(x, e float32) float32 {
	if x != x {
		return x
	}
	a := abs(x)
	if a < 0.5 { // Taylor series: the form below cancels near 0
		x2 := x * x
		return 1.1283791670955126 * x * (1 + x2*(-1.0/3+x2*(1.0/10+x2*(-1.0/42+x2*(1.0/216+x2*(-1.0/1320+x2*(1.0/9360)))))))
	}
	t := 1 / (1 + 0.3275911*a)
	p := t * (0.254829592 + t*(-0.284496736+t*(1.421413741+t*(-1.453152027+t*1.061405429))))
	r := 1 - p*e
	if x < 0 {
		return -r
	}
	return r
}

// Gelu sets dst[i] = 0.5 x (1 + erf(x / sqrt 2)).
func Gelu(dst, src []float32) {
	var t [chunk]float32
	for len(src) > 0 {
		n := min(len(src), chunk)
		for i, x := range src[:n] {
			t[i] = -0.5 * x * x
		}
		Exp(t[:n], t[:n])
		for i, e := range t[:n] {
			x := src[i]
			dst[i] = 0.5 * x * (1 + erfFrom(x*0.7071067811865476, e))
		}
		dst, src = dst[n:], src[n:]
	}
}
