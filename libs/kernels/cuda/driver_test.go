//go:build !cuda

package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/kernels"
)

// A program built without CUDA plans for CUDA targets and says plainly why it cannot open one.
func TestOpenWithoutCUDA(t *testing.T) {
	d, err := kernels.LookupDriver(kernels.BackendCUDA)
	require.NoError(t, err)
	reg, err := d.Registry()
	require.NoError(t, err)
	require.NotEmpty(t, reg.Ops(kernels.BackendCUDA))
	_, err = d.Open(kernels.OpenOptions{Ordinal: 1})
	var nb *NotBuiltError
	require.ErrorAs(t, err, &nb)
	require.Contains(t, err.Error(), "built without CUDA support")
	require.ErrorAs(t, launch(1, "carve_x", Dim3{}, Dim3{}, 0), &nb)
}
