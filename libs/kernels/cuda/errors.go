package cuda

import (
	"carve.dev/libs/kernels"
	"fmt"
	"strings"
)

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

// NoKernelsError reports a cuda build that embedded no kernel fatbins: the binary was built
// with `go build -tags cuda` without compiling the kernels first.
type NoKernelsError struct{}

func (*NoKernelsError) Error() string {
	return "cuda: this program embeds no CUDA kernels: compile them with tools/cuda/kernels.sh " +
		"before go build -tags cuda (bazel build --config=cuda compiles them itself)"
}

// UnknownKernelError reports a launch of a kernel that no embedded fatbin holds.
type UnknownKernelError struct {
	Kernel  string
	Modules []string // the embedded fatbins, by .cu file
}

func (e *UnknownKernelError) Error() string {
	return fmt.Sprintf("cuda: kernel %s is in none of the embedded fatbins (%s); is its .cu file in csrc/ and were the fatbins rebuilt (tools/cuda/kernels.sh)?",
		e.Kernel, strings.Join(e.Modules, ", "))
}

// WorkspaceMeasurer is implemented by instances one part of whose Recipe is a cap that the
// device may not need whole (cuBLASLt's "cublas" part): MeasuredPart is its index (-1: none at
// this tactic), and MeasureWorkspace reports what the instance really needs of it on b's
// device, at most the part's size. It is libs/engine's interface of the same name.
type WorkspaceMeasurer interface {
	MeasuredPart() int
	MeasureWorkspace(b kernels.Backend) (int64, error)
}
