package cuda

// NotBuiltError is returned by everything that needs a GPU in a program built without CUDA
// support (without the cuda build tag): opening a device, launching a kernel. Planning for a
// CUDA target works in such programs.
type NotBuiltError struct {
	// Op is what was attempted, for example "open device 0".
	Op string
}

func (e *NotBuiltError) Error() string {
	return "cuda: " + e.Op + ": this program was built without CUDA support (the cuda build tag); " +
		"it can plan for CUDA targets but not run on a GPU"
}
