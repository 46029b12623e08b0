//go:build amd64 && !purego

package vec

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func expShiftAVX2(dst, src *float32, n int, shift float32) (sum float32)

//go:noescape
func maxAVX2(x *float32, n int) float32

// expShift takes n a multiple of 8: 16 lanes at a time with AVX-512, the rest with AVX2.
func expShift(dst, src []float32, shift float32) float32 {
	var sum float32
	if n16 := len(src) &^ 15; useAVX512 && n16 > 0 {
		sum = expShiftAVX512(unsafe.SliceData(dst), unsafe.SliceData(src), n16, shift)
		dst, src = dst[n16:], src[n16:]
	}
	if len(src) > 0 {
		sum += expShiftAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src), shift)
	}
	return sum
}

func max8(x []float32) float32 { return maxAVX2(unsafe.SliceData(x), len(x)) }

//go:noescape
func tanhAVX2(dst, src *float32, n int)

//go:noescape
func sigmoidAVX2(dst, src *float32, n int, alpha float32, mulx bool)

//go:noescape
func geluTanhAVX2(dst, src *float32, n int)

//go:noescape
func erfAVX2(dst, src *float32, n int)

//go:noescape
func geluAVX2(dst, src *float32, n int)

func tanhV(dst, src []float32) { tanhAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src)) }

func sigmoidV(dst, src []float32, alpha float32, mulx bool) {
	sigmoidAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src), alpha, mulx)
}

func geluTanhV(dst, src []float32) {
	geluTanhAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src))
}

func erfV(dst, src []float32) { erfAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src)) }

func geluV(dst, src []float32) { geluAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src)) }

//go:noescape
func addVV(z, x, y *float32, n int)

//go:noescape
func subVV(z, x, y *float32, n int)

//go:noescape
func mulVV(z, x, y *float32, n int)

//go:noescape
func divVV(z, x, y *float32, n int)

//go:noescape
func addVS(z, x *float32, s float32, n int)

//go:noescape
func subVS(z, x *float32, s float32, n int)

//go:noescape
func mulVS(z, x *float32, s float32, n int)

//go:noescape
func divVS(z, x *float32, s float32, n int)

//go:noescape
func subSV(z *float32, s float32, y *float32, n int)

//go:noescape
func divSV(z *float32, s float32, y *float32, n int)

//go:noescape
func axpyVS(y, x *float32, a float32, n int)

func axpy(y, x []float32, a float32) { axpyVS(unsafe.SliceData(y), unsafe.SliceData(x), a, len(y)) }

//go:noescape
func reluV(z, x *float32, n int)

func relu(z, x []float32) { reluV(unsafe.SliceData(z), unsafe.SliceData(x), len(z)) }

func vv(op Op, z, x, y []float32) {
	zp, xp, yp := unsafe.SliceData(z), unsafe.SliceData(x), unsafe.SliceData(y)
	switch op {
	case Add:
		addVV(zp, xp, yp, len(z))
	case Sub:
		subVV(zp, xp, yp, len(z))
	case Mul:
		mulVV(zp, xp, yp, len(z))
	default:
		divVV(zp, xp, yp, len(z))
	}
}

func vs(op Op, z, x []float32, s float32) {
	zp, xp := unsafe.SliceData(z), unsafe.SliceData(x)
	switch op {
	case Add:
		addVS(zp, xp, s, len(z))
	case Sub:
		subVS(zp, xp, s, len(z))
	case Mul:
		mulVS(zp, xp, s, len(z))
	default:
		divVS(zp, xp, s, len(z))
	}
}

func sv(op Op, z []float32, s float32, y []float32) {
	if op == Sub {
		subSV(unsafe.SliceData(z), s, unsafe.SliceData(y), len(z))
	} else {
		divSV(unsafe.SliceData(z), s, unsafe.SliceData(y), len(z))
	}
}

//go:noescape
func sumsAVX2(x *float32, n int) (sum, sumsq float64)

//go:noescape
func sumSqDevAVX2(x *float32, n int, m float64) float64

//go:noescape
func affineAVX2(y, x, gamma, beta *float32, n int, m, inv float32)

func sums(x []float32) (float64, float64) { return sumsAVX2(unsafe.SliceData(x), len(x)) }

func sumSqDev(x []float32, m float64) float64 { return sumSqDevAVX2(unsafe.SliceData(x), len(x), m) }

func affine(y, x, g, b []float32, m, inv float32) {
	var bp *float32
	if b != nil {
		bp = unsafe.SliceData(b)
	}
	affineAVX2(unsafe.SliceData(y), unsafe.SliceData(x), unsafe.SliceData(g), bp, len(y), m, inv)
}

//go:noescape
func select32AVX2(z *uint32, c *byte, x *uint32, xstep int, y *uint32, ystep int, n int)

//go:noescape
func isNaNAVX2(z *byte, x *float32, n int)

// sel32 runs select32AVX2; a scalar side is passed as 8 copies that the pointer does not leave.
func sel32(z []uint32, c []byte, x []uint32, xs bool, y []uint32, ys bool) {
	var xb, yb [8]uint32
	xp, yp, xstep, ystep := unsafe.SliceData(x), unsafe.SliceData(y), 32, 32
	if !xs {
		for i := range xb {
			xb[i] = x[0]
		}
		xp, xstep = &xb[0], 0
	}
	if !ys {
		for i := range yb {
			yb[i] = y[0]
		}
		yp, ystep = &yb[0], 0
	}
	select32AVX2(unsafe.SliceData(z), unsafe.SliceData(c), xp, xstep, yp, ystep, len(z))
}

func isNaN(z []byte, x []float32) { isNaNAVX2(unsafe.SliceData(z), unsafe.SliceData(x), len(z)) }

var useAVX512 = cpu.X86.HasAVX512F

//go:noescape
func expShiftAVX512(dst, src *float32, n int, shift float32) (sum float32)

//go:noescape
func dequant4AVX2(dst *float32, src *byte, n int, scale, offset float32)

func dequant4(dst []float32, src []byte, scale, offset float32) {
	dequant4AVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src), scale, offset)
}

//go:noescape
func ropeRowsAVX2(dst, src, cos, sin *float32, pos *int64, rows, n, half, heads, hstride, rstride int)

// ropeRows rotates lanes [0, n) of each head's halves of len(pos) rows, n a multiple of 8.
func ropeRows(dst, src, cos, sin []float32, pos []int64, n, half, heads, hstride, rstride int) {
	ropeRowsAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), unsafe.SliceData(cos), unsafe.SliceData(sin), unsafe.SliceData(pos), len(pos), n, half, heads, hstride, rstride)
}
