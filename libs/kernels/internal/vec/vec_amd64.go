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
