//go:build !cuda

package cuda

import (
	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

func runGemm(g *gemmInstance, _, _ []kernels.Tensor, _ *alloc.Workspace, _ alloc.Stream) error {
	return &NotBuiltError{Op: "run " + g.kernel}
}

func measureGemm(g *gemmInstance, _ kernels.Backend) (int64, error) {
	return 0, &NotBuiltError{Op: "measure " + g.kernel}
}
