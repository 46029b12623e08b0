package cuda

import (
	"fmt"
	"math"

	"carve.dev/libs/alloc"
)

// Dim3 is a CUDA grid or block shape. A zero field counts as 1.
type Dim3 struct{ X, Y, Z uint32 }

// Arg is one kernel parameter: its bits and its size in bytes, which must be the size the
// kernel declares for the parameter at that position (launch checks it). Build Args with
// PtrArg, Int32Arg, Int64Arg, Float32Arg, Float64Arg and Uint32Arg.
type Arg struct {
	bits uint64
	size uint8
}

// PtrArg is a device pointer parameter (T*, 8 bytes).
func PtrArg(p alloc.Ptr) Arg { return Arg{bits: uint64(p), size: 8} }

// Int32Arg is an int parameter (4 bytes).
func Int32Arg(v int32) Arg { return Arg{bits: uint64(uint32(v)), size: 4} }

// Int64Arg is a long long / int64_t parameter (8 bytes).
func Int64Arg(v int64) Arg { return Arg{bits: uint64(v), size: 8} }

// Float32Arg is a float parameter (4 bytes).
func Float32Arg(v float32) Arg { return Arg{bits: uint64(math.Float32bits(v)), size: 4} }

// Float64Arg is a double parameter (8 bytes).
func Float64Arg(v float64) Arg { return Arg{bits: math.Float64bits(v), size: 8} }

// Uint32Arg is an unsigned int parameter (4 bytes).
func Uint32Arg(v uint32) Arg { return Arg{bits: uint64(v), size: 4} }

// MaxArgs is the most parameters a kernel launched through launch may take.
const MaxArgs = 40 // the arrays of launch_cuda.go hold as many

// LaunchError reports a launch that was refused before it reached the device, or that the
// driver rejected.
type LaunchError struct {
	Kernel string
	Err    error
}

func (e *LaunchError) Error() string { return fmt.Sprintf("cuda: launch %s: %v", e.Kernel, e.Err) }

func (e *LaunchError) Unwrap() error { return e.Err }

// launch queues kernel (an extern "C" __global__ function of the embedded fatbins) on s with
// the given grid, block, dynamic shared memory and parameters. It finds the device and its
// context from the stream, looks the function up once per context (raising its dynamic shared
// memory limit when sharedBytes exceeds the default 48 KiB), checks each Arg's size against the
// kernel's declared parameters, and passes them to cuLaunchKernel. It does not allocate on the
// Go heap. Without the cuda build tag it fails with a *NotBuiltError.
func launch(s alloc.Stream, kernel string, grid, block Dim3, sharedBytes uint32, args ...Arg) error {
	if len(args) > MaxArgs {
		return &LaunchError{Kernel: kernel, Err: fmt.Errorf("%d parameters; at most %d are supported", len(args), MaxArgs)}
	}
	return launchKernel(s, kernel, grid, block, sharedBytes, false, args)
}

// launchDependent is launch with programmatic dependent launch: the kernel's blocks may be
// scheduled before the kernel ahead of it on s has finished, once that kernel's blocks have all
// executed griddepcontrol.launch_dependents; the kernel must execute griddepcontrol.wait before
// it reads what that kernel writes. It hides the launch gap of a short kernel behind its
// predecessor.
func launchDependent(s alloc.Stream, kernel string, grid, block Dim3, sharedBytes uint32, args ...Arg) error {
	if len(args) > MaxArgs {
		return &LaunchError{Kernel: kernel, Err: fmt.Errorf("%d parameters; at most %d are supported", len(args), MaxArgs)}
	}
	return launchKernel(s, kernel, grid, block, sharedBytes, true, args)
}
