package alloc

import (
	"errors"
	"unsafe"
)

// Ptr is a device address. It is an integer, not a Go pointer: device memory is not Go memory,
// the garbage collector never sees it, and a Ptr may be stored, compared and offset freely.
// The zero Ptr is the null address. A CUDA device uses its CUdeviceptr values directly.
type Ptr uintptr

// Add returns p offset by n bytes.
func (p Ptr) Add(n int64) Ptr { return p + Ptr(n) }

// Stream is a device's handle for an ordered queue of work (a CUstream on CUDA). Work launched on
// one stream runs in launch order; work on different streams is unordered unless an event orders
// it. The zero Stream is not a valid stream: devices hand out nonzero handles only (a CUDA device
// never exposes the legacy default stream through this interface).
type Stream uintptr

// Event is a device's handle for a marker in a stream (a CUevent on CUDA). An event that was
// recorded completes when all work queued on its stream before the record has run; an event that
// was never recorded counts as complete.
type Event uintptr

// GraphExec is a device's handle for captured, replayable work (an instantiated CUgraphExec on CUDA).
type GraphExec uintptr

// CaptureID identifies one stream capture on a device, as cuStreamGetCaptureInfo reports it.
// Every capture gets a new ID; IDs are never reused by a device.
type CaptureID uint64

// Device is the memory, stream, event and capture interface of one accelerator: the CPUDevice in
// this package, and a CUDA driver-API device behind the cuda build tag. The methods map one to one
// onto driver calls:
//
//	Malloc/Free/MemInfo          cuMemAlloc, cuMemFree, cuMemGetInfo
//	Synchronize                  cuCtxSynchronize
//	NewStream/DestroyStream      cuStreamCreate (non-blocking), cuStreamDestroy
//	SynchronizeStream            cuStreamSynchronize
//	NewEvent/DestroyEvent        cuEventCreate (timing disabled), cuEventDestroy
//	RecordEvent/WaitEvent        cuEventRecord, cuStreamWaitEvent
//	QueryEvent/SynchronizeEvent  cuEventQuery, cuEventSynchronize
//	BeginCapture/EndCapture      cuStreamBeginCapture, cuStreamEndCapture + cuGraphInstantiate
//	CaptureInfo                  cuStreamGetCaptureInfo
//	LaunchGraph/DestroyGraph     cuGraphLaunch, cuGraphExecDestroy + cuGraphDestroy
//
// Semantics every implementation keeps (the allocator relies on them):
//   - Malloc returns an address aligned to at least 256 bytes, or an error that wraps
//     ErrOutOfMemory when the device has no room.
//   - Free and Synchronize behave like cudaFree: the memory is not released while work queued
//     before the call may still touch it. Both fail with ErrCaptureUnsupported while any stream of
//     the device is being captured. Malloc must work during a capture (the allocator grows a
//     graph's private pool then): a CUDA device switches the calling thread to relaxed capture
//     mode around cuMemAlloc (cuThreadExchangeStreamCaptureMode), as PyTorch does.
//   - Stream work runs in order; RecordEvent marks the current end of a stream; WaitEvent makes
//     later work on a stream wait for the event as recorded at the time of the call.
//   - While a stream is captured its work is recorded into the capture, not run; events recorded
//     on it can be waited on by other streams (which then join the capture) but not queried or
//     synchronized (ErrCaptureUnsupported).
//   - Handles of destroyed objects are invalid; using them fails with ErrInvalidHandle (a CUDA
//     device may instead report the driver's error, wrapped).
//
// Implementations are safe for concurrent use by multiple goroutines.
type Device interface {
	// Name identifies the device in messages, for example "cpu" or "cuda:0".
	Name() string

	// Malloc reserves size bytes of device memory.
	Malloc(size int64) (Ptr, error)
	// Free releases memory returned by Malloc.
	Free(p Ptr) error
	// MemInfo reports the device's free and total memory in bytes.
	MemInfo() (free, total int64, err error)
	// Synchronize waits until all work queued on every stream has run.
	Synchronize() error

	// NewStream creates a stream.
	NewStream() (Stream, error)
	// DestroyStream releases a stream. Work already queued on it still runs.
	DestroyStream(s Stream) error
	// SynchronizeStream waits until all work queued on s has run.
	SynchronizeStream(s Stream) error

	// NewEvent creates an event.
	NewEvent() (Event, error)
	// DestroyEvent releases an event.
	DestroyEvent(e Event) error
	// RecordEvent marks the current end of s's queue in e, replacing e's previous record.
	RecordEvent(e Event, s Stream) error
	// WaitEvent makes all work queued on s after this call wait until e completes.
	WaitEvent(s Stream, e Event) error
	// QueryEvent reports whether e has completed, without blocking.
	QueryEvent(e Event) (bool, error)
	// SynchronizeEvent waits until e has completed.
	SynchronizeEvent(e Event) error

	// BeginCapture starts capturing s: work launched on s (and on streams that join by waiting
	// on an event recorded in the capture) is recorded instead of run.
	BeginCapture(s Stream) error
	// EndCapture ends the capture that s began and returns the replayable graph.
	EndCapture(s Stream) (GraphExec, error)
	// CaptureInfo reports whether s is being captured and, if so, the capture's ID.
	CaptureInfo(s Stream) (id CaptureID, capturing bool, err error)
	// LaunchGraph queues a replay of g on s.
	LaunchGraph(g GraphExec, s Stream) error
	// DestroyGraph releases g. Replays already queued still run.
	DestroyGraph(g GraphExec) error
}

// CallCounter is implemented by devices that count the calls made to them (CPUDevice, SimDevice):
// tests and the runner use it to show that steady-state runs make no device allocations.
type CallCounter interface {
	Calls() CPUCalls
}

// Timer is implemented by devices whose events can time the work between them (CUDA): the
// engine's kernel profiler uses it. Timing events cost more to record than plain ones, so
// they are made only for timing.
type Timer interface {
	// NewTimingEvent creates an event that records the time it completes at; DestroyEvent
	// releases it.
	NewTimingEvent() (Event, error)
	// ElapsedMs is the milliseconds between two completed timing events.
	ElapsedMs(start, end Event) (float32, error)
}

// Errors that devices report, wrapped with context; test with errors.Is.
var (
	// ErrOutOfMemory: the device (or the allocator's byte limit) has no room for the request.
	ErrOutOfMemory = errors.New("out of device memory")
	// ErrInvalidHandle: a stream, event, graph or address that the device does not know.
	ErrInvalidHandle = errors.New("invalid device handle")
	// ErrCaptureUnsupported: an operation that is illegal while a stream is being captured.
	ErrCaptureUnsupported = errors.New("operation not permitted during stream capture")
	// ErrNotCapturing: EndCapture on a stream that did not begin a capture.
	ErrNotCapturing = errors.New("stream is not capturing")
	// ErrDeviceLost: a failure that leaves the device unusable for the rest of the process,
	// such as a kernel's illegal memory access (a sticky CUDA error): every later call fails or
	// computes on corrupt state, and only a new process gets a working device.
	ErrDeviceLost = errors.New("the device is in an unrecoverable state")
)

// HostBytes views n bytes of host-visible device memory at p as a byte slice, without checking
// that the memory exists. It is valid only for memory of a device whose memory the host can
// address (the CPUDevice) and only while that memory is allocated; use CPUDevice.Bytes for a
// checked view. n must be nonnegative.
func HostBytes(p Ptr, n int64) []byte {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(ptrToPointer(p)), n)
}

// ptrToPointer reinterprets a device address as an unsafe.Pointer. It reads the integer's bits
// as a pointer instead of converting uintptr to unsafe.Pointer, which go vet rightly flags for Go
// memory: here the address is never Go memory (the CPUDevice maps it outside the Go heap with
// mmap), so the garbage collector neither moves nor tracks it and the conversion is sound.
func ptrToPointer(p Ptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}

// uintptrOf returns the address of b's first byte; b must not be empty.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
