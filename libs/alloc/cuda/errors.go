package cuda

import "fmt"

// These errors are in every build (not only with the cuda tag), so programs can recognise them
// with errors.As whichever way they were built.

// NoDriverError reports that the CUDA driver could not be loaded: the host has no NVIDIA driver
// (Library does not load), or its driver is older than this package needs (Library lacks the
// entry point Symbol). Open and DeviceCount return it; nothing of the driver is used then.
type NoDriverError struct {
	Library     string // the driver's shared library, "libcuda.so.1"
	Symbol      string // the entry point Library lacks; "" when Library did not load
	Reason      string // the dynamic loader's message when Library did not load
	CUDAVersion int    // the CUDA version the program was built for, 1000*major + 10*minor
}

func (e *NoDriverError) Error() string {
	if e.Symbol != "" {
		return fmt.Sprintf("cuda: the NVIDIA driver is too old: %s has no %s (this program needs a driver for CUDA %s or later)",
			e.Library, e.Symbol, e.Version())
	}
	return fmt.Sprintf("cuda: no NVIDIA driver found: %s could not be loaded (%s)", e.Library, e.Reason)
}

// Version is CUDAVersion as people write it, for example "12.4".
func (e *NoDriverError) Version() string {
	return fmt.Sprintf("%d.%d", e.CUDAVersion/1000, e.CUDAVersion%1000/10)
}

// NoDeviceError reports a device ordinal the driver does not have: Open(Ordinal) on a host
// whose driver sees Count devices (ordinals 0 to Count-1).
type NoDeviceError struct {
	Ordinal int
	Count   int
}

func (e *NoDeviceError) Error() string {
	return fmt.Sprintf("cuda: no device %d: the driver sees %d", e.Ordinal, e.Count)
}
