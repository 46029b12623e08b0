package vec

// Dequant4 expands 4-bit values, two a byte low bits first, to floats: dst[2i] = (src[i] & 15
// - zp) * scale and dst[2i+1] = (src[i] >> 4 - zp) * scale (len(dst) = 2 len(src)). It computes
// q * scale + (-zp * scale), which may differ from (q - zp) * scale in the last bit.
func Dequant4(dst []float32, src []byte, scale, zp float32) {
	dst = dst[:2*len(src)]
	off := -zp * scale
	n := 0
	if useAVX2 {
		n = len(src) &^ 15
	}
	if n > 0 {
		dequant4(dst[:2*n], src[:n], scale, off)
	}
	for i, v := range src[n:] {
		dst[2*(n+i)] = float32(v&15)*scale + off
		dst[2*(n+i)+1] = float32(v>>4)*scale + off
	}
}
