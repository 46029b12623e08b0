//go:build cuda

package cuda

/*
#include <stdint.h>
#include "driver.h"

// carve_set_current makes the device's primary context current on the calling OS thread.
static CUresult carve_set_current(CUcontext ctx) { return carve_cu.cuCtxSetCurrent(ctx); }

// carve_malloc allocates in relaxed capture mode, so that an allocation made while some stream
// of this thread's process is being captured is legal (PyTorch does the same).
static CUresult carve_malloc(CUdeviceptr *p, size_t n) {
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	carve_cu.cuThreadExchangeStreamCaptureMode(&mode);
	CUresult r = carve_cu.cuMemAlloc(p, n);
	carve_cu.cuThreadExchangeStreamCaptureMode(&mode);
	return r;
}

// carve_capture_info is cuStreamGetCaptureInfo's status and id. Since CUDA 12, cuda.h maps the
// name to cuStreamGetCaptureInfo_v2, which also returns the capture's graph and dependencies;
// CUDA 11 headers declare the three-argument form.
static CUresult carve_capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id) {
#if CUDA_VERSION >= 12000
	return carve_cu.cuStreamGetCaptureInfo(s, status, id, NULL, NULL, NULL);
#else
	return carve_cu.cuStreamGetCaptureInfo(s, status, id);
#endif
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"carve.dev/libs/alloc"
)

// Device is an alloc.Device on one NVIDIA GPU, through the CUDA driver API in the device's
// primary context. Stream, event and graph handles are small integers that map to driver
// objects; they are unique across every Device of the process, so a stream names its device
// (StreamDevice). Device is safe for concurrent use.
//
// It calls the driver through the entry points driver.go loads at the first Open (driver.h),
// so a cuda build runs on hosts without an NVIDIA driver until a device is opened.
type Device struct {
	ordinal int
	dev     C.CUdevice
	ctx     C.CUcontext

	mu       sync.Mutex
	events   map[alloc.Event]C.CUevent
	graphs   map[alloc.GraphExec]graphPair
	captures int // streams being captured

	stats deviceStats
	calls deviceCalls
}

// nextHandle numbers the stream, event and graph handles of every Device in the process.
var nextHandle atomic.Uintptr

func newHandle() uintptr { return nextHandle.Add(1) }

// streamEntry is one live stream: its device and its driver handle.
type streamEntry struct {
	dev *Device
	cs  C.CUstream
}

// streams maps every live stream of every Device to its device, so that code given only an
// alloc.Stream (a kernel launch) finds the device and context to run in. Lookups take a read
// lock and do not allocate.
var streams struct {
	sync.RWMutex
	m map[alloc.Stream]streamEntry
}

func init() { streams.m = map[alloc.Stream]streamEntry{} }

// StreamDevice returns the device that created s, or an error wrapping alloc.ErrInvalidHandle
// for a stream that no live Device created.
func StreamDevice(s alloc.Stream) (*Device, error) {
	streams.RLock()
	e, ok := streams.m[s]
	streams.RUnlock()
	if !ok {
		return nil, fmt.Errorf("cuda: stream %d: %w", s, alloc.ErrInvalidHandle)
	}
	return e.dev, nil
}

// RawStream returns s's driver handle (a CUstream) as an integer, for cgo code of other
// packages (cgo types are per package). The handle is valid until DestroyStream.
func (d *Device) RawStream(s alloc.Stream) (uintptr, error) {
	cs, err := d.stream(s)
	return uintptr(unsafe.Pointer(cs)), err
}

type graphPair struct {
	graph C.CUgraph
	exec  C.CUgraphExec
}

// Error is a CUDA driver error.
type Error struct {
	Call string
	Code int
	Name string
	Text string
}

func (e *Error) Error() string {
	return fmt.Sprintf("cuda: %s: %s (%d): %s", e.Call, e.Name, e.Code, e.Text)
}

// Is maps driver errors onto alloc's: out of memory, invalid handles, capture violations, and
// sticky errors (DeviceLost) onto alloc.ErrDeviceLost.
func (e *Error) Is(target error) bool {
	if target == alloc.ErrDeviceLost {
		return DeviceLost(e.Code)
	}
	switch C.CUresult(e.Code) {
	case C.CUDA_ERROR_OUT_OF_MEMORY:
		return target == alloc.ErrOutOfMemory
	case C.CUDA_ERROR_INVALID_HANDLE:
		return target == alloc.ErrInvalidHandle
	case C.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, C.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
		return target == alloc.ErrCaptureUnsupported
	}
	return false
}

func check(call string, r C.CUresult) error {
	if r == C.CUDA_SUCCESS {
		return nil
	}
	var name, text *C.char
	C.carve_cuGetErrorName(r, &name)
	C.carve_cuGetErrorString(r, &text)
	return &Error{Call: call, Code: int(r), Name: C.GoString(name), Text: C.GoString(text)}
}

// DeviceCount loads and initialises the driver and returns how many CUDA devices it sees (0
// when the driver is installed but finds no GPU). Without a driver it returns a
// *NoDriverError.
func DeviceCount() (int, error) {
	if err := loadDriver(); err != nil {
		return 0, err
	}
	r := C.carve_cuInit(0)
	if r == C.CUDA_ERROR_NO_DEVICE {
		return 0, nil
	}
	if err := check("cuInit", r); err != nil {
		return 0, err
	}
	var n C.int
	if err := check("cuDeviceGetCount", C.carve_cuDeviceGetCount(&n)); err != nil {
		return 0, err
	}
	return int(n), nil
}

// Open loads and initialises the driver and retains device ordinal's primary context. It
// returns a *NoDriverError without a driver, and a *NoDeviceError for an ordinal the driver
// does not have.
func Open(ordinal int) (*Device, error) {
	n, err := DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, &NoDeviceError{Ordinal: ordinal, Count: n}
	}
	d := &Device{ordinal: ordinal, events: map[alloc.Event]C.CUevent{}, graphs: map[alloc.GraphExec]graphPair{}}
	if err := check("cuDeviceGet", C.carve_cuDeviceGet(&d.dev, C.int(ordinal))); err != nil {
		return nil, err
	}
	if err := check("cuDevicePrimaryCtxRetain", C.carve_cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return nil, err
	}
	return d, nil
}

// Close releases the primary context. Streams, events and graphs must be destroyed first.
func (d *Device) Close() error {
	return check("cuDevicePrimaryCtxRelease", C.carve_cuDevicePrimaryCtxRelease(d.dev))
}

// Do runs fn on a locked OS thread with the device's context current, for driver calls made by
// other packages' cgo code (driver calls act on the calling thread's current context, and
// goroutines move between threads). fn must not keep the thread's context for later.
func (d *Device) Do(fn func() error) error { return d.do(fn) }

// Ordinal is the device's index among the driver's devices.
func (d *Device) Ordinal() int { return d.ordinal }

// do runs fn on a locked OS thread with the device's context current: driver calls act on the
// calling thread's current context, and goroutines move between threads.
func (d *Device) do(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := check("cuCtxSetCurrent", C.carve_set_current(d.ctx)); err != nil {
		return err
	}
	return fn()
}

// Name is "cuda:N".
func (d *Device) Name() string { return fmt.Sprintf("cuda:%d", d.ordinal) }

// Malloc allocates with cuMemAlloc (256-byte aligned or better).
func (d *Device) Malloc(size int64) (alloc.Ptr, error) {
	d.calls.malloc.Add(1)
	if size <= 0 {
		return 0, fmt.Errorf("cuda: malloc of %d bytes", size)
	}
	var p C.CUdeviceptr
	err := d.do(func() error { return check("cuMemAlloc", C.carve_malloc(&p, C.size_t(size))) })
	if err == nil {
		d.stats.mallocs.Add(1)
	}
	return alloc.Ptr(p), err
}

// Free releases memory with cuMemFree, which waits for the work that may still use it. It fails
// while a stream of the device is being captured.
func (d *Device) Free(p alloc.Ptr) error {
	d.calls.free.Add(1)
	if d.capturing() {
		return fmt.Errorf("cuda: free: %w", alloc.ErrCaptureUnsupported)
	}
	err := d.do(func() error { return check("cuMemFree", C.carve_cuMemFree(C.CUdeviceptr(p))) })
	if err == nil {
		d.stats.frees.Add(1)
	}
	return err
}

// MemInfo reports free and total device memory.
func (d *Device) MemInfo() (free, total int64, err error) {
	d.calls.memInfo.Add(1)
	var f, t C.size_t
	err = d.do(func() error { return check("cuMemGetInfo", C.carve_cuMemGetInfo(&f, &t)) })
	return int64(f), int64(t), err
}

// Synchronize waits for all work of the context. It fails during a capture.
func (d *Device) Synchronize() error {
	d.calls.synchronize.Add(1)
	if d.capturing() {
		return fmt.Errorf("cuda: synchronize: %w", alloc.ErrCaptureUnsupported)
	}
	return d.do(func() error { return check("cuCtxSynchronize", C.carve_cuCtxSynchronize()) })
}

func (d *Device) capturing() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.captures > 0
}

// stream returns the driver handle of s, a stream of d.
func (d *Device) stream(s alloc.Stream) (C.CUstream, error) {
	streams.RLock()
	e, ok := streams.m[s]
	streams.RUnlock()
	if !ok || e.dev != d {
		return nil, fmt.Errorf("cuda: stream %d: %w", s, alloc.ErrInvalidHandle)
	}
	return e.cs, nil
}

func (d *Device) event(e alloc.Event) (C.CUevent, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	ce, ok := d.events[e]
	if !ok {
		return nil, fmt.Errorf("cuda: event %d: %w", e, alloc.ErrInvalidHandle)
	}
	return ce, nil
}

// NewStream creates a non-blocking stream (it never synchronizes with the legacy stream).
func (d *Device) NewStream() (alloc.Stream, error) {
	d.calls.newStream.Add(1)
	var cs C.CUstream
	if err := d.do(func() error { return check("cuStreamCreate", C.carve_cuStreamCreate(&cs, C.CU_STREAM_NON_BLOCKING)) }); err != nil {
		return 0, err
	}
	h := alloc.Stream(newHandle())
	streams.Lock()
	streams.m[h] = streamEntry{dev: d, cs: cs}
	streams.Unlock()
	return h, nil
}

// DestroyStream destroys s; work already queued on it still runs.
func (d *Device) DestroyStream(s alloc.Stream) error {
	d.calls.destroyStream.Add(1)
	streams.Lock()
	e, ok := streams.m[s]
	if ok && e.dev == d {
		delete(streams.m, s)
	}
	streams.Unlock()
	if !ok || e.dev != d {
		return fmt.Errorf("cuda: stream %d: %w", s, alloc.ErrInvalidHandle)
	}
	return d.do(func() error { return check("cuStreamDestroy", C.carve_cuStreamDestroy(e.cs)) })
}

// SynchronizeStream waits for the work queued on s.
func (d *Device) SynchronizeStream(s alloc.Stream) error {
	d.calls.synchronizeStream.Add(1)
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error { return check("cuStreamSynchronize", C.carve_cuStreamSynchronize(cs)) })
}

// NewEvent creates an event without timing.
func (d *Device) NewEvent() (alloc.Event, error) {
	d.calls.newEvent.Add(1)
	var ce C.CUevent
	if err := d.do(func() error { return check("cuEventCreate", C.carve_cuEventCreate(&ce, C.CU_EVENT_DISABLE_TIMING)) }); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := alloc.Event(newHandle())
	d.events[h] = ce
	return h, nil
}

// DestroyEvent destroys e.
func (d *Device) DestroyEvent(e alloc.Event) error {
	d.calls.destroyEvent.Add(1)
	d.mu.Lock()
	ce, ok := d.events[e]
	delete(d.events, e)
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("cuda: event %d: %w", e, alloc.ErrInvalidHandle)
	}
	return d.do(func() error { return check("cuEventDestroy", C.carve_cuEventDestroy(ce)) })
}

// eventAndStream looks up both handles of a call that takes an event and a stream.
func (d *Device) eventAndStream(e alloc.Event, s alloc.Stream) (C.CUevent, C.CUstream, error) {
	ce, err := d.event(e)
	if err != nil {
		return nil, nil, err
	}
	cs, err := d.stream(s)
	return ce, cs, err
}

// RecordEvent marks the current end of s in e.
func (d *Device) RecordEvent(e alloc.Event, s alloc.Stream) error {
	d.calls.recordEvent.Add(1)
	ce, cs, err := d.eventAndStream(e, s)
	if err != nil {
		return err
	}
	return d.do(func() error { return check("cuEventRecord", C.carve_cuEventRecord(ce, cs)) })
}

// WaitEvent makes later work on s wait for e.
func (d *Device) WaitEvent(s alloc.Stream, e alloc.Event) error {
	d.calls.waitEvent.Add(1)
	ce, cs, err := d.eventAndStream(e, s)
	if err != nil {
		return err
	}
	return d.do(func() error { return check("cuStreamWaitEvent", C.carve_cuStreamWaitEvent(cs, ce, 0)) })
}

// QueryEvent reports whether e has completed.
func (d *Device) QueryEvent(e alloc.Event) (bool, error) {
	d.calls.queryEvent.Add(1)
	ce, err := d.event(e)
	if err != nil {
		return false, err
	}
	var r C.CUresult
	if err := d.do(func() error { r = C.carve_cuEventQuery(ce); return nil }); err != nil {
		return false, err
	}
	if r == C.CUDA_ERROR_NOT_READY {
		return false, nil
	}
	return r == C.CUDA_SUCCESS, check("cuEventQuery", r)
}

// SynchronizeEvent waits for e.
func (d *Device) SynchronizeEvent(e alloc.Event) error {
	d.calls.synchronizeEvent.Add(1)
	ce, err := d.event(e)
	if err != nil {
		return err
	}
	return d.do(func() error { return check("cuEventSynchronize", C.carve_cuEventSynchronize(ce)) })
}

// BeginCapture starts capturing s in relaxed mode (allocations stay legal; the allocator keeps
// frees out of captures itself).
func (d *Device) BeginCapture(s alloc.Stream) error {
	d.calls.beginCapture.Add(1)
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	if err := d.do(func() error {
		return check("cuStreamBeginCapture", C.carve_cuStreamBeginCapture(cs, C.CU_STREAM_CAPTURE_MODE_RELAXED))
	}); err != nil {
		return err
	}
	d.mu.Lock()
	d.captures++
	d.mu.Unlock()
	return nil
}

// EndCapture ends s's capture and instantiates the graph.
func (d *Device) EndCapture(s alloc.Stream) (alloc.GraphExec, error) {
	d.calls.endCapture.Add(1)
	cs, err := d.stream(s)
	if err != nil {
		return 0, err
	}
	var g graphPair
	err = d.do(func() error {
		var status C.CUstreamCaptureStatus
		if err := check("cuStreamIsCapturing", C.carve_cuStreamIsCapturing(cs, &status)); err != nil {
			return err
		}
		if status == C.CU_STREAM_CAPTURE_STATUS_NONE {
			return alloc.ErrNotCapturing
		}
		if err := check("cuStreamEndCapture", C.carve_cuStreamEndCapture(cs, &g.graph)); err != nil {
			return err
		}
		return check("cuGraphInstantiateWithFlags", C.carve_cuGraphInstantiateWithFlags(&g.exec, g.graph, 0))
	})
	if err == alloc.ErrNotCapturing {
		return 0, fmt.Errorf("cuda: stream %d: %w", s, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.captures--
	if err != nil {
		if g.graph != nil {
			C.carve_cuGraphDestroy(g.graph)
		}
		return 0, err
	}
	h := alloc.GraphExec(newHandle())
	d.graphs[h] = g
	return h, nil
}

// CaptureInfo reports whether s is being captured, and the capture's id.
func (d *Device) CaptureInfo(s alloc.Stream) (alloc.CaptureID, bool, error) {
	d.calls.captureInfo.Add(1)
	cs, err := d.stream(s)
	if err != nil {
		return 0, false, err
	}
	var status C.CUstreamCaptureStatus
	var id C.cuuint64_t
	err = d.do(func() error { return check("cuStreamGetCaptureInfo", C.carve_capture_info(cs, &status, &id)) })
	return alloc.CaptureID(id), status == C.CU_STREAM_CAPTURE_STATUS_ACTIVE, err
}

// LaunchGraph queues a replay of g on s.
func (d *Device) LaunchGraph(g alloc.GraphExec, s alloc.Stream) error {
	d.calls.launchGraph.Add(1)
	d.mu.Lock()
	gp, ok := d.graphs[g]
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("cuda: graph %d: %w", g, alloc.ErrInvalidHandle)
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error { return check("cuGraphLaunch", C.carve_cuGraphLaunch(gp.exec, cs)) })
}

// DestroyGraph releases g; replays already queued still run.
func (d *Device) DestroyGraph(g alloc.GraphExec) error {
	d.calls.destroyGraph.Add(1)
	d.mu.Lock()
	gp, ok := d.graphs[g]
	delete(d.graphs, g)
	d.mu.Unlock()
	if !ok {
		return fmt.Errorf("cuda: graph %d: %w", g, alloc.ErrInvalidHandle)
	}
	return d.do(func() error {
		if err := check("cuGraphExecDestroy", C.carve_cuGraphExecDestroy(gp.exec)); err != nil {
			return err
		}
		return check("cuGraphDestroy", C.carve_cuGraphDestroy(gp.graph))
	})
}

// Memset queues filling n 32-bit words at p with v on s: device work for tests and tools.
func (d *Device) Memset(p alloc.Ptr, v uint32, n int64, s alloc.Stream) error {
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error {
		return check("cuMemsetD32Async", C.carve_cuMemsetD32Async(C.CUdeviceptr(p), C.uint(v), C.size_t(n), cs))
	})
}

// CopyToHost copies len(dst) bytes at p into dst, after the work queued on s.
func (d *Device) CopyToHost(dst []byte, p alloc.Ptr, s alloc.Stream) error {
	if len(dst) == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error {
		if err := check("cuMemcpyDtoHAsync", C.carve_cuMemcpyDtoHAsync(unsafe.Pointer(&dst[0]), C.CUdeviceptr(p), C.size_t(len(dst)), cs)); err != nil {
			return err
		}
		return check("cuStreamSynchronize", C.carve_cuStreamSynchronize(cs))
	})
}

// CopyToDevice copies src to p on s and waits for the copy.
func (d *Device) CopyToDevice(p alloc.Ptr, src []byte, s alloc.Stream) error {
	if len(src) == 0 {
		return nil
	}
	cs, err := d.stream(s)
	if err != nil {
		return err
	}
	return d.do(func() error {
		if err := check("cuMemcpyHtoDAsync", C.carve_cuMemcpyHtoDAsync(C.CUdeviceptr(p), unsafe.Pointer(&src[0]), C.size_t(len(src)), cs)); err != nil {
			return err
		}
		return check("cuStreamSynchronize", C.carve_cuStreamSynchronize(cs))
	})
}

var _ alloc.Device = (*Device)(nil)
