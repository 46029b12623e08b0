//go:build !cuda

package cuda

import (
	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

func (c *convCall) call(alloc.Stream, []kernels.Tensor, []kernels.Tensor, *alloc.Workspace) error {
	return &NotBuiltError{Op: "run " + c.label + " with cuDNN"}
}

func (c *convCall) need(kernels.Backend, int64) (int64, error) {
	return 0, &NotBuiltError{Op: "measure " + c.label + " with cuDNN"}
}

func (c *convCall) prepare(kernels.Backend) error {
	return &NotBuiltError{Op: "prepare " + c.label + " with cuDNN"}
}

func (c *convCall) describe(kernels.Backend) string { return "cuDNN: not built with CUDA" }
