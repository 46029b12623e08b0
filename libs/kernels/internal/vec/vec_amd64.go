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

func expShift(dst, src []float32, shift float32) float32 {
	return expShiftAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), len(src), shift)
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
