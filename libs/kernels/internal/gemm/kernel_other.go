//go:build !amd64 || purego

package gemm

func init() { best, narrow = kernels[len(kernels)-1], kernels[len(kernels)-1] }
