//go:build !cuda

package cuda

import (
	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// Run fails with a *NotBuiltError: this program was built without the cuda tag. Selection,
// recipes and bounds work; execution needs a cuda build.
func (i *instance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	return &NotBuiltError{Op: "run " + i.label}
}
