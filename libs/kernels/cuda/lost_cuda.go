//go:build cuda

package cuda

import (
	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
)

// Is makes errors.Is(err, alloc.ErrDeviceLost) hold for a sticky error, which a launch reports
// when launches are synchronous (CUDA_LAUNCH_BLOCKING=1) and the kernel faulted.
func (e *DriverError) Is(target error) bool {
	return target == alloc.ErrDeviceLost && acuda.DeviceLost(e.Code)
}
