package vec

// RopeHalves rotates heads vectors in the half form of rotary embeddings: vector h starts at
// h*stride in src and in dst, and with half = len(cos) its pairs (x[k], x[k+half]), k < half,
// become (x[k]*cos[k] - x[k+half]*sin[k], x[k+half]*cos[k] + x[k]*sin[k]). Only the first
// 2*half elements of each vector are written. dst may be src; len(sin) >= half, and src and
// dst hold (heads-1)*stride + 2*half elements.
//
// Every vector shares cos and sin (one position's heads), so a row of heads is one call: the
// kernel's heads are often short (16 or 32 elements), and a call per head cost more than its
// arithmetic.
func RopeHalves(dst, src, cos, sin []float32, heads, stride int) {
	half := len(cos)
	if heads <= 0 || half == 0 {
		return
	}
	last := (heads-1)*stride + 2*half
	dst, src, sin = dst[:last], src[:last], sin[:half]
	n := bulk(half)
	if n > 0 {
		ropeHalves(dst, src, cos, sin, n, half, heads, stride)
		if n == half {
			return
		}
	}
	for h := range heads {
		o := h * stride
		s0, s1 := src[o:o+half], src[o+half:o+2*half]
		d0, d1 := dst[o:o+half], dst[o+half:o+2*half]
		for k := n; k < half; k++ {
			x0, x1, c, sn := s0[k], s1[k], cos[k], sin[k]
			d0[k] = x0*c - x1*sn
			d1[k] = x1*c + x0*sn
		}
	}
}
