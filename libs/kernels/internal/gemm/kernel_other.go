//go:build !amd64 || purego

package gemm

func init() { best, narrow = kernels[len(kernels)-1], kernels[len(kernels)-1] }

func pack8(dst []float32, dstStride int, src []float32, srcStride, k int) { panic("unreachable") }
