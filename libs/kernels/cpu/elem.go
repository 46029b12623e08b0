package cpu

import "carve.dev/libs/graph"

// elt is the element types the float kernels (norms, softmax, attention, rotary) read and
// write: float32, and float16/bfloat16 bits as uint16, converted to float32 on the fly.
type elt interface{ float32 | uint16 }

// ld converts an element to float32; bf selects bfloat16 for uint16 elements.
func ld[E elt](v E, bf bool) float32 {
	switch x := any(v).(type) {
	case float32:
		return x
	case uint16:
		if bf {
			return bf16(x)
		}
		return f16(x)
	}
	return 0
}

// st converts a float32 to an element.
func st[E elt](f float32, bf bool) E {
	var z E
	switch any(z).(type) {
	case float32:
		return E(f)
	case uint16:
		if bf {
			return E(tobf16(f))
		}
		return E(tof16(f))
	}
	return z
}

// halfOK reports whether dt is one of the float types the float kernels take.
func halfOK(dt graph.DType) bool {
	return dt == graph.Float32 || dt == graph.Float16 || dt == graph.BFloat16
}
