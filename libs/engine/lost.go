package engine

import (
	"context"
	"errors"
	"fmt"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// A device can fail in a way that leaves it unusable for the rest of the process: a kernel's
// illegal memory access is a sticky CUDA error, after which every call on the context fails and
// the memory may hold anything. Devices report such failures as alloc.ErrDeviceLost. The first
// run that meets one marks its runtime lost, and from then on every run of every session of the
// runtime, and every new session, fails at once with the same *DeviceLostError: serving on would
// give errors at best and wrong results at worst, and only a new process gets a working device.

// DeviceLostError reports that a runtime's device is in an unrecoverable state.
type DeviceLostError struct {
	Device string
	// Node is the node whose kernel failed, when the failure was reported at its launch; nil
	// when the device reported it later, at a synchronize (kernels fail asynchronously, so the
	// failing one is then unknown: making launches synchronous, as CUDA_LAUNCH_BLOCKING=1 does for
	// CUDA, has the launch report it).
	Node *graph.Node
	Err  error // the failure of the run that met it
}

func (e *DeviceLostError) Error() string {
	return fmt.Sprintf("the device %s is in an unrecoverable state; restart the process: %v", e.Device, e.Err)
}

func (e *DeviceLostError) Unwrap() error { return e.Err }

// KernelError reports a kernel whose launch failed: the node and the device's error.
type KernelError struct {
	Node *graph.Node
	Err  error
}

func (e *KernelError) Error() string { return fmt.Sprintf("%s: %v", e.Node, e.Err) }
func (e *KernelError) Unwrap() error { return e.Err }

// Lost returns the runtime's *DeviceLostError once a run met a failure that leaves the device
// unusable, and nil before.
func (rt *Runtime) Lost() error {
	if e := rt.lost.Load(); e != nil {
		return e
	}
	return nil
}

// Run executes the model on inputs (by input name; host tensors). The returned outputs, in the
// model's order, are host tensors that alias the session's memory (the arena on a host-visible
// backend, the program's output buffers on a discrete device) and stay valid until the next Run
// or Close; on a discrete device, outputs held in state buffers and RuntimeOptions.DeviceOutputs
// carry only their device address (read them with CopyOut). The first run of a new input-shape pattern plans it (cached for every session of the
// runtime) and binds it to the session's arena (cached in the session, up to
// RuntimeOptions.Programs patterns); later runs of the pattern allocate nothing.
//
// Once a run of any session of the runtime met a failure that leaves the device unusable
// (alloc.ErrDeviceLost), Run returns that *DeviceLostError at once.
func (s *Session) Run(ctx context.Context, inputs map[string]kernels.Tensor) ([]kernels.Tensor, error) {
	rt := s.rt
	if err := rt.Lost(); err != nil {
		return nil, err
	}
	out, err := s.run(ctx, inputs)
	if err != nil && errors.Is(err, alloc.ErrDeviceLost) {
		e := &DeviceLostError{Device: rt.Backend.Name(), Err: err}
		var ke *KernelError
		if errors.As(err, &ke) {
			e.Node = ke.Node
		}
		rt.lost.CompareAndSwap(nil, e)
		return nil, rt.Lost()
	}
	return out, err
}
