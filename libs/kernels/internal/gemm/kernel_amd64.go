//go:build amd64 && !purego

package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:generate sh -c "go run ./asmgen > kernel_amd64.s"

// The micro-kernels of kernel_amd64.s (see asmgen). Strides are in bytes.

//go:noescape
func kernAVX2(rows, k int, a *float32, rsa, csa int, b *float32, rsb int, c *float32, ldc int, alpha float32, acc bool, bias *float32, relu bool)

//go:noescape
func kernAVX512(rows, k int, a *float32, rsa, csa int, b *float32, rsb int, c *float32, ldc int, alpha float32, acc bool, bias *float32, relu bool)

//go:noescape
func kernAVX512N16(rows, k int, a *float32, rsa, csa int, b *float32, rsb int, c *float32, ldc int, alpha float32, acc bool, bias *float32, relu bool)

func callAVX2(rows, k int, a []float32, rsa, csa int, b []float32, rsb int, c []float32, ldc int, alpha float32, acc bool, bias []float32, relu bool) {
	kernAVX2(rows, k, unsafe.SliceData(a), rsa*4, csa*4, unsafe.SliceData(b), rsb*4, unsafe.SliceData(c), ldc*4, alpha, acc, unsafe.SliceData(bias), relu)
}

func callAVX512(rows, k int, a []float32, rsa, csa int, b []float32, rsb int, c []float32, ldc int, alpha float32, acc bool, bias []float32, relu bool) {
	kernAVX512(rows, k, unsafe.SliceData(a), rsa*4, csa*4, unsafe.SliceData(b), rsb*4, unsafe.SliceData(c), ldc*4, alpha, acc, unsafe.SliceData(bias), relu)
}

func callAVX512N16(rows, k int, a []float32, rsa, csa int, b []float32, rsb int, c []float32, ldc int, alpha float32, acc bool, bias []float32, relu bool) {
	kernAVX512N16(rows, k, unsafe.SliceData(a), rsa*4, csa*4, unsafe.SliceData(b), rsb*4, unsafe.SliceData(c), ldc*4, alpha, acc, unsafe.SliceData(bias), relu)
}

//go:noescape
func pack8AVX2(dst *float32, dstStride int, src *float32, srcStride int, k int)

// pack8 transposes 8 rows of k floats (k a multiple of 8; row r at src[r*srcStride:]) into
// columns 0..7 of dst, float p of row r at dst[p*dstStride + r]. Strides are in elements.
func pack8(dst []float32, dstStride int, src []float32, srcStride, k int) {
	_ = dst[(k-1)*dstStride+7]
	_ = src[7*srcStride+k-1]
	pack8AVX2(unsafe.SliceData(dst), dstStride*4, unsafe.SliceData(src), srcStride*4, k)
}

func init() {
	hasPack8 = cpu.X86.HasAVX2
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		kernels = append(kernels, Kernel{Name: "avx2", MR: 6, NR: 16, fn: callAVX2})
	}
	if cpu.X86.HasAVX512F {
		kernels = append(kernels, Kernel{Name: "avx512-16", MR: 12, NR: 16, fn: callAVX512N16})
		kernels = append(kernels, Kernel{Name: "avx512", MR: 12, NR: 32, fn: callAVX512})
	}
	best = kernels[len(kernels)-1]
	narrow = best
	for _, k := range kernels {
		if k.NR <= 16 {
			narrow = k // the last (fastest) of them
		}
	}
}
