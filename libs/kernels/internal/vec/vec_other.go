//go:build !amd64 || purego

package vec

const useAVX2 = false

func expShift(dst, src []float32, shift float32) float32 { panic("unreachable") }

func max8(x []float32) float32 { panic("unreachable") }

func tanhV(dst, src []float32)                              { panic("unreachable") }
func sigmoidV(dst, src []float32, alpha float32, mulx bool) { panic("unreachable") }
func geluTanhV(dst, src []float32)                          { panic("unreachable") }
func erfV(dst, src []float32)                               { panic("unreachable") }
func geluV(dst, src []float32)                              { panic("unreachable") }

func vv(op Op, z, x, y []float32)                   { panic("unreachable") }
func vs(op Op, z, x []float32, s float32)           { panic("unreachable") }
func axpy(y, x []float32, a float32)                { panic("unreachable") }
func relu(z, x []float32)                           { panic("unreachable") }
func sv(op Op, z []float32, s float32, y []float32) { panic("unreachable") }

func sums(x []float32) (float64, float64)         { panic("unreachable") }
func sumSqDev(x []float32, m float64) float64     { panic("unreachable") }
func affine(y, x, g, b []float32, m, inv float32) { panic("unreachable") }

func sel32(z []uint32, c []byte, x []uint32, xs bool, y []uint32, ys bool) { panic("unreachable") }
func isNaN(z []byte, x []float32)                                          { panic("unreachable") }

func dequant4(dst []float32, src []byte, scale, offset float32) { panic("unreachable") }

func ropeRows(dst, src, cos, sin []float32, pos []int64, n, half, heads, hstride, rstride int) {
	panic("unreachable")
}
