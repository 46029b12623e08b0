//go:build !cuda

package cuda

import (
	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

func (c *attnProj) call(s alloc.Stream, in, out []kernels.Tensor, ws *alloc.Workspace) error {
	return &NotBuiltError{Op: "Attention QKV projection"}
}
