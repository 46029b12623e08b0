//go:build !cuda

package cuda

import (
	"fmt"

	"carve.dev/libs/kernels"
)

func open(opts kernels.OpenOptions) (kernels.Backend, error) {
	return nil, &NotBuiltError{Op: fmt.Sprintf("open device %d", opts.Ordinal)}
}

func count() (int, error) { return 0, &NotBuiltError{Op: "count devices"} }
