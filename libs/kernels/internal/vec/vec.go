// Package vec is float32 vector math for the CPU kernels: exp, tanh and erf, the functions
// built on them (sigmoid, SiLU, GELU in both forms), maximum, dot products, scaled additions
// and rotary embeddings' rotations, computed in float32 without float64 round trips, with AVX2
// assembly where the CPU has it (8 lanes; a scalar Go form of the same formulas does tails and
// other CPUs).
//
// Accuracy: exp is Cephes' expf (a degree-6 polynomial after a Cody-Waite reduction), within
// 2 ulp, flushing results below the smallest normal float32 to 0; tanh and erf are Eigen's rational approximations, within 3e-7 and 7e-8 absolute.
// NaN inputs give NaN. None allocates; slices may alias exactly (dst == src) but must not
// overlap otherwise.
package vec

import "math"

// Exp32 is e^x in float32: Exp's scalar form, for tails and CPUs without AVX2.
func Exp32(x float32) float32 {
	if x != x {
		return x
	}
	if x < -87.33654 {
		return 0 // below the smallest normal float32, as the assembly
	}
	x = min(x, 89)
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

// Max returns the largest element of x (-Inf for none), NaN if any is NaN.
func Max(x []float32) float32 {
	m := float32(math.Inf(-1))
	if useAVX2 && len(x) >= 8 {
		n8 := len(x) &^ 7
		m = max8(x[:n8])
		x = x[n8:]
	}
	for _, v := range x {
		m = max(m, v) // Go's max is NaN when either is
	}
	return m
}

// Scale sets x[i] *= a.
func Scale(x []float32, a float32) { VS(Mul, x, x, a) }

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

// Axpy sets y[i] += a*x[i] (len(x) >= len(y)): a product then a sum, two roundings, in the
// assembly's 8 lanes as in the Go loop of the tail, so an element's bits do not depend on
// where it falls.
func Axpy(a float32, x, y []float32) {
	x = x[:len(y)]
	n := bulk(len(y))
	if n > 0 {
		axpy(y[:n], x[:n], a)
	}
	for i := n; i < len(y); i++ {
		y[i] += float32(a * x[i]) // the conversion rounds the product: never fused
	}
}

// Relu sets z[i] = 0 where x[i] < 0, else x[i] (len(x) >= len(z)): NaN stays NaN and -0
// stays -0, in the assembly's lanes as in the tail.
func Relu(z, x []float32) {
	x = x[:len(z)]
	n := bulk(len(z))
	if n > 0 {
		relu(z[:n], x[:n])
	}
	for i := n; i < len(z); i++ {
		v := x[i]
		if v < 0 {
			v = 0
		}
		z[i] = v
	}
}

// Tanh and erf are Eigen's float rational approximations: x P(x^2) / Q(x^2), x clamped where
// the function is 1 in float32. The functions below use them in assembly (8 lanes at a time)
// and in these scalar forms for tails and CPUs without AVX2.

func tanh32(x float32) float32 {
	x = min(max(x, -7.90531110763549805), 7.90531110763549805)
	x2 := x * x
	p := float32(-2.76076847742355e-16)
	p = p*x2 + 2.00018790482477e-13
	p = p*x2 + -8.60467152213735e-11
	p = p*x2 + 5.12229709037114e-08
	p = p*x2 + 1.48572235717979e-05
	p = p*x2 + 6.37261928875436e-04
	p = p*x2 + 4.89352455891786e-03
	q := float32(1.19825839466702e-06)
	q = q*x2 + 1.18534705686654e-04
	q = q*x2 + 2.26843463243900e-03
	q = q*x2 + 4.89352518554385e-03
	return x * p / q
}

func erf32(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := float32(-2.72614225801306e-10)
	p = p*x2 + 2.77068142495902e-08
	p = p*x2 + -2.10102402082508e-06
	p = p*x2 + -5.69250639462346e-05
	p = p*x2 + -7.34990630326855e-04
	p = p*x2 + -2.95459980854025e-03
	p = p*x2 + -1.60960333262415e-02
	q := float32(-1.45660718464996e-05)
	q = q*x2 + -2.13374055278905e-04
	q = q*x2 + -1.68282697438203e-03
	q = q*x2 + -7.37332916720468e-03
	q = q*x2 + -1.42647390514189e-02
	return x * p / q
}

// bulk is the part of n the assembly takes: a multiple of 8, or nothing without AVX2.
func bulk(n int) int {
	if useAVX2 {
		return n &^ 7
	}
	return 0
}

// Tanh sets dst[i] = tanh(src[i]).
func Tanh(dst, src []float32) {
	dst = dst[:len(src)]
	n := bulk(len(src))
	if n > 0 {
		tanhV(dst[:n], src[:n])
	}
	for i, x := range src[n:] {
		dst[n+i] = tanh32(x)
	}
}

// Sigmoid sets dst[i] = 1 / (1 + e^-src[i]).
func Sigmoid(dst, src []float32) { sigmoid(dst, src, 1, false) }

// SiLU sets dst[i] = src[i] * sigmoid(alpha*src[i]) (alpha 1 is SiLU, 1.702 QuickGelu).
func SiLU(dst, src []float32, alpha float32) { sigmoid(dst, src, alpha, true) }

func sigmoid(dst, src []float32, alpha float32, mulx bool) {
	dst = dst[:len(src)]
	n := bulk(len(src))
	if n > 0 {
		sigmoidV(dst[:n], src[:n], alpha, mulx)
	}
	for i, x := range src[n:] {
		r := 1 / (1 + Exp32(-alpha*x))
		if mulx {
			r *= x
		}
		dst[n+i] = r
	}
}

// GeluTanh sets dst[i] to the tanh approximation of GELU: 0.5 x (1 + tanh(u)), u = sqrt(2/pi)
// (x + 0.044715 x^3), computed as x / (1 + e^(-2u)), which is exact in both tails.
func GeluTanh(dst, src []float32) {
	dst = dst[:len(src)]
	n := bulk(len(src))
	if n > 0 {
		geluTanhV(dst[:n], src[:n])
	}
	for i, x := range src[n:] {
		u := 0.7978845608028654 * x * (1 + 0.044715*x*x)
		dst[n+i] = x / (1 + Exp32(-2*u))
	}
}

// Erf sets dst[i] = erf(src[i]).
func Erf(dst, src []float32) {
	dst = dst[:len(src)]
	n := bulk(len(src))
	if n > 0 {
		erfV(dst[:n], src[:n])
	}
	for i, x := range src[n:] {
		dst[n+i] = erf32(x)
	}
}

// Gelu sets dst[i] = 0.5 x (1 + erf(x / sqrt 2)).
func Gelu(dst, src []float32) {
	dst = dst[:len(src)]
	n := bulk(len(src))
	if n > 0 {
		geluV(dst[:n], src[:n])
	}
	for i, x := range src[n:] {
		dst[n+i] = 0.5*x + 0.5*x*erf32(x*0.7071067811865476)
	}
}
