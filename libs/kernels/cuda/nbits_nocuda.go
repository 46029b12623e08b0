//go:build !cuda

package cuda

import (
	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

func (c *nbitsGemm) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	return &NotBuiltError{Op: "MatMulNBits GEMM"}
}

func (c *nbitsGemm) need(kernels.Backend, int64) (int64, error) {
	return 0, &NotBuiltError{Op: "measure MatMulNBits GEMM"}
}
