package vec

// Sums returns the sum and the sum of squares of x, accumulated in float64.
func Sums(x []float32) (sum, sumsq float64) {
	n := bulk(len(x))
	if n > 0 {
		sum, sumsq = sums(x[:n])
	}
	for _, v := range x[n:] {
		sum += float64(v)
		sumsq += float64(v) * float64(v)
	}
	return sum, sumsq
}

// SumSqDev returns the sum of (x[i] - m)^2, accumulated in float64.
func SumSqDev(x []float32, m float64) float64 {
	n := bulk(len(x))
	var s float64
	if n > 0 {
		s = sumSqDev(x[:n], m)
	}
	for _, v := range x[n:] {
		d := float64(v) - m
		s += d * d
	}
	return s
}

// Affine sets y[i] = (x[i] - m) * inv * g[i] + b[i], without b when b is nil (len(x), len(g),
// len(b) >= len(y)).
func Affine(y, x, g, b []float32, m, inv float32) {
	x, g = x[:len(y)], g[:len(y)]
	if b != nil {
		b = b[:len(y)]
	}
	n := bulk(len(y))
	if n > 0 {
		var bn []float32
		if b != nil {
			bn = b[:n]
		}
		affine(y[:n], x[:n], g[:n], bn, m, inv)
	}
	for i := n; i < len(y); i++ {
		o := (x[i] - m) * inv * g[i]
		if b != nil {
			o += b[i]
		}
		y[i] = o
	}
}
