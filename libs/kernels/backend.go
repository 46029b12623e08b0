package kernels

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"carve.dev/libs/alloc"
)

// Backend is one device's execution layer: the device itself, the kernels that run on it, and
// the two things the engine may not do by itself because they depend on where the device's
// memory is:
//
//   - Bind points a Tensor at device memory. A host-visible backend (the CPU) sets Data to the
//     bytes at the address; a backend with memory of its own sets Addr and leaves Data nil, and
//     its kernels reach the bytes through the address alone.
//   - CopyIn and CopyOut move bytes between host memory and the device, in stream order. The
//     host slice must stay untouched until the stream has passed the copy (the engine
//     synchronizes the stream or records an event). A backend whose device has memory of its
//     own stages through pinned host buffers it owns.
//
// The engine names no backend and imports none: backends register a Driver (RegisterDriver)
// from their package's init, and programs import the backends they want (the runner imports
// the CPU and simulated ones always, and the CUDA one in cuda builds).
//
// Invariants every backend keeps:
//  1. Its kernels are registered in Registry under Target().Backend and select tactics from
//     Target() alone, so the estimator, which has no device, agrees with the runner.
//  2. A kernel's Run only enqueues work on its stream (or, for a Launcher, runs inside work the
//     engine launched); it never allocates device memory or waits for the device.
//  3. Bind gives tensors host Data exactly when Target().HostVisible().
//  4. Memory the engine got from Device (directly or through an allocator over it) is the only
//     memory Bind, CopyIn and CopyOut are given.
//
// Implementations are safe for concurrent use.
type Backend interface {
	// Name identifies the backend's device in messages: "cpu", "sim", "cuda:0".
	Name() string
	// Target describes the device for tactic selection.
	Target() Target
	// Registry holds the backend's kernels.
	Registry() *Registry
	// Device is the backend's device: memory, streams, events, capture.
	Device() alloc.Device
	// Bind points t at the n bytes of device memory at p.
	Bind(t *Tensor, p alloc.Ptr, n int64)
	// CopyIn queues a copy of src to device memory at dst on s.
	CopyIn(dst alloc.Ptr, src []byte, s alloc.Stream) error
	// CopyOut queues a copy of len(dst) bytes of device memory at src to dst on s.
	CopyOut(dst []byte, src alloc.Ptr, s alloc.Stream) error
	// Counters reports the backend's copies so far.
	Counters() CopyCounters
	// Close releases the backend and its device. Memory still allocated on the device is
	// released with it.
	Close() error
}

// Launcher is implemented by backends whose kernels run on the host: the engine launches each
// kernel's Run as host work in stream order (the CPU backend's streams are goroutines).
// Kernels of other backends enqueue their own work on the stream they are given.
type Launcher interface {
	Launch(s alloc.Stream, fn func()) error
}

// A Staller holds back the work queued on a stream after it for about d, so that a profiler can
// queue a run's kernels ahead of the device and time each one without the host's launch gaps.
type Staller interface {
	Stall(s alloc.Stream, d time.Duration) error
}

// A RowCopier copies device memory to device memory in stream order: rows rows of width bytes,
// the first at src (dst), each srcPitch (dstPitch) bytes after the one before. The source and
// destination ranges must not overlap. The engine uses it to move state that outlives runs,
// such as a KV cache, without a round trip through the host.
type RowCopier interface {
	CopyRows(dst alloc.Ptr, dstPitch int64, src alloc.Ptr, srcPitch int64, width, rows int64, s alloc.Stream) error
}

// CopyCounters count a backend's host-device copies.
type CopyCounters struct {
	Uploads       int64 `json:"uploads"`
	UploadBytes   int64 `json:"upload_bytes"`
	Downloads     int64 `json:"downloads"`
	DownloadBytes int64 `json:"download_bytes"`
}

// OpenOptions configure a backend at Open.
type OpenOptions struct {
	// Ordinal picks the device among several of the driver's kind (cuda:1 is ordinal 1).
	Ordinal int
	// Workers is the CPU kernels' worker count; 0 means GOMAXPROCS.
	Workers int
	// Memory is the size of a simulated device's memory (cpu, sim); 0 means the driver's default.
	Memory int64
}

// Driver makes backends of one kind. Registry returns the kind's kernels without opening a
// device, so that plans can be made for a target the machine does not have.
type Driver struct {
	// Name is the backend kind, the Target.Backend of its backends.
	Name string
	// Registry returns the kernels of this kind, built once.
	Registry func() (*Registry, error)
	// Open opens one device of this kind.
	Open func(opts OpenOptions) (Backend, error)
	// Count says how many devices of this kind the machine has; nil for kinds whose devices
	// are made on demand (the CPU, simulated devices).
	Count func() (int, error)
}

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// RegisterDriver makes a backend kind available by name. It panics on a second driver of the
// same name: backends register from init, and two are a build mistake.
func RegisterDriver(d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if _, dup := drivers[d.Name]; dup {
		panic(fmt.Sprintf("kernels: backend driver %q registered twice", d.Name))
	}
	drivers[d.Name] = d
}

// Drivers lists the registered backend kinds, sorted.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupDriver returns the driver of a backend kind, or an *UnknownBackendError naming the
// kinds this program was built with.
func LookupDriver(name string) (Driver, error) {
	driversMu.RLock()
	d, ok := drivers[name]
	driversMu.RUnlock()
	if !ok {
		return Driver{}, &UnknownBackendError{Backend: name, Known: Drivers()}
	}
	return d, nil
}

// RegistryFor returns the kernels of a backend kind.
func RegistryFor(backend string) (*Registry, error) {
	d, err := LookupDriver(backend)
	if err != nil {
		return nil, err
	}
	return d.Registry()
}
