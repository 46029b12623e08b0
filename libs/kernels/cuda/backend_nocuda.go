//go:build !cuda

package cuda

import (
	"fmt"

	"carve.dev/libs/kernels"
)

func open(opts kernels.OpenOptions) (kernels.Backend, error) {
	return nil, &NotBuiltError{Op: fmt.Sprintf("open device %d", opts.Ordinal)}
}
