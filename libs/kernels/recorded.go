package kernels

import "carve.dev/libs/alloc"

// A RecordedTimer is an Instance whose time on its target's device is known without the device,
// from measurements recorded on such a device and kept with the backend (the CUDA backend's
// convolutions: what cuDNN's Find and carve's own kernels took on an H200). RecordedTime is one
// run of the fastest recorded way to run the node within the workspace of r: the instance's
// Recipe, or the same with its parts carved smaller (a plan gives a kernel whose workspace is a
// choice what it has free); ok is false when nothing was recorded for the node's shapes on a
// device of the target.
type RecordedTimer interface {
	RecordedTime(r alloc.Recipe) (t RecordedTime, ok bool)
}

// RecordedTime is a node's recorded time.
type RecordedTime struct {
	Ms     float64 // milliseconds per run
	What   string  // the way it ran, e.g. "cuDNN IMPLICIT_PRECOMP_GEMM" or "own"
	Device string  // where it was recorded, e.g. "NVIDIA H200"
}
