package run

import (
	"fmt"

	"carve.dev/libs/alloc"
)

// newDevice opens the named device. Only the CPU exists so far; the CUDA backend is a later
// issue (see device_cuda.go and device_nocuda.go for what "cuda" says meanwhile).
func newDevice(name string, memory int64) (*alloc.CPUDevice, error) {
	switch name {
	case "", "cpu":
	case "cuda":
		return nil, errCUDA
	default:
		return nil, &UsageError{fmt.Sprintf("unknown device %q: use --device cpu (or cuda in a build with -tags cuda)", name)}
	}
	if memory == 0 {
		memory = alloc.HostAvailableMemory()
	}
	return alloc.NewCPU(alloc.CPUConfig{Memory: memory})
}
