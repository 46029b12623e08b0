//go:build cuda

package cuda

// DeviceLost reports whether a CUresult is a sticky error: one after which the context is
// unusable and every later call fails with it, so that only a new process gets a working
// device (the CUDA driver API's documentation of each code says so). Error.Is maps these onto
// alloc.ErrDeviceLost.
func DeviceLost(code int) bool {
	switch code {
	case 214, // CUDA_ERROR_ECC_UNCORRECTABLE
		700, // CUDA_ERROR_ILLEGAL_ADDRESS
		702, // CUDA_ERROR_LAUNCH_TIMEOUT
		710, // CUDA_ERROR_ASSERT
		714, // CUDA_ERROR_HARDWARE_STACK_ERROR
		715, // CUDA_ERROR_ILLEGAL_INSTRUCTION
		716, // CUDA_ERROR_MISALIGNED_ADDRESS
		717, // CUDA_ERROR_INVALID_ADDRESS_SPACE
		718, // CUDA_ERROR_INVALID_PC
		719: // CUDA_ERROR_LAUNCH_FAILED
		return true
	}
	return false
}
