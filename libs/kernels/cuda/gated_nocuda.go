//go:build !cuda

package cuda

import (
	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

func (c *gatedProj) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	return &NotBuiltError{Op: "GatedMatMul product"}
}
