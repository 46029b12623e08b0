package vec

import "math"

// Select32 sets z[i] = x[i] where c[i] != 0, else y[i], for 4-byte elements; a scalar side
// (len 1) is broadcast.
func Select32(z []uint32, c []byte, x, y []uint32) {
	c = c[:len(z)]
	xs, ys := len(x) != 1, len(y) != 1
	n := bulk(len(z))
	if n > 0 {
		sel32(z[:n], c[:n], x, xs, y, ys)
	}
	for i := n; i < len(z); i++ {
		xv, yv := x[0], y[0]
		if xs {
			xv = x[i]
		}
		if ys {
			yv = y[i]
		}
		b := c[i]
		m := -uint32((b | -b) >> 7)
		z[i] = yv ^ ((xv ^ yv) & m)
	}
}

// IsNaN sets z[i] to 1 where x[i] is NaN, else 0 (len(x) >= len(z)).
func IsNaN(z []byte, x []float32) {
	x = x[:len(z)]
	n := 0
	if useAVX2 {
		n = len(z) &^ 31
	}
	if n > 0 {
		isNaN(z[:n], x[:n])
	}
	for i, v := range x[n:] {
		// |v|'s bits exceed +Inf's exactly for NaNs
		z[n+i] = byte((0x7f800000 - math.Float32bits(v)&0x7fffffff) >> 31)
	}
}
