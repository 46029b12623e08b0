package vec

// RopeRows rotates vectors in the half form of rotary embeddings, len(pos) rows of heads
// vectors, each row by its own angles: row r's vector h starts at r*rowStride + h*headStride in
// src and in dst, and with c and s the tables' row pos[r] (cos[pos[r]*half : (pos[r]+1)*half],
// and the same of sin) its pairs (x[k], x[k+half]), k < half, become
// (x[k]*c[k] - x[k+half]*s[k], x[k+half]*c[k] + x[k]*s[k]). Only the first 2*half elements of
// each vector are written; dst may be src. It panics when a position is outside the tables or
// a slice is short.
//
// A run of positions is one call: with heads of 16 or 32 elements, a call a position (or a
// head) cost as much as the rotations.
func RopeRows(dst, src, cos, sin []float32, pos []int64, half, heads, headStride, rowStride int) {
	rows := len(pos)
	if rows == 0 || heads <= 0 || half <= 0 {
		return
	}
	last := (rows-1)*rowStride + (heads-1)*headStride + 2*half
	dst, src = dst[:last], src[:last]
	tab := int64(min(len(cos), len(sin)) / half) // rows of the tables
	for _, p := range pos {
		if p < 0 || p >= tab {
			panic("vec: RopeRows position outside the tables")
		}
	}
	n := bulk(half)
	if n > 0 {
		ropeRows(dst, src, cos, sin, pos, n, half, heads, headStride, rowStride)
		if n == half {
			return
		}
	}
	for r, p := range pos {
		c, s := cos[int(p)*half:int(p+1)*half], sin[int(p)*half:int(p+1)*half]
		for h := range heads {
			o := r*rowStride + h*headStride
			s0, s1 := src[o:o+half], src[o+half:o+2*half]
			d0, d1 := dst[o:o+half], dst[o+half:o+2*half]
			for k := n; k < half; k++ {
				x0, x1 := s0[k], s1[k]
				d0[k] = x0*c[k] - x1*s[k]
				d1[k] = x1*c[k] + x0*s[k]
			}
		}
	}
}
