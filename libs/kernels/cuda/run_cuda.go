//go:build cuda

package cuda

import (
	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// Run launches the instance's kernels on stream s. It only enqueues: it never allocates device
// memory and never waits for the device.
func (i *instance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	return i.run(in, out, ws, s, nil) // nil: exec calls launch itself, without allocating
}
