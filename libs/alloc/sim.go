package alloc

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

// SimDevice is a discrete device simulated in host memory: what a GPU is to the engine, so that
// every path that a GPU takes (weights uploaded once, inputs copied in, outputs copied out, kernels
// reaching memory by address alone) runs and is tested on machines without one.
//
// Its rules are stricter than a GPU's where a GPU would fail silently:
//
//  1. Its memory is a region of its own. Addresses lie in a range no host pointer can have
//     (simBase and up, which is not a canonical x86-64 or arm64 user address), so handing one to
//     HostBytes, or any other host access, faults at once instead of reading something.
//  2. The host reaches that memory only through CopyIn and CopyOut, which are stream ordered and
//     asynchronous like cuMemcpyHtoDAsync: the host slice must stay untouched until the stream
//     passes the copy. They are counted (SimCounters).
//  3. Kernels reach it only through the SimMemory handed to the simulated backend by NewSim, never
//     to the engine. SimMemory tracks which bytes were ever written (by a copy or a kernel's
//     output); a kernel that reads bytes nothing wrote — a missing upload — fails with an
//     *UninitializedReadError instead of computing on garbage.
//  4. A kernel's failure is sticky, as CUDA's errors are: the device runs no later work, and every
//     Synchronize, SynchronizeStream and SynchronizeEvent returns the first failure, which
//     errors.Is reports as ErrDeviceLost.
//
// Streams, events and capture are a CPUDevice's. SimDevice is safe for concurrent use.
type SimDevice struct {
	host  *CPUDevice // streams, events, capture, and the memory behind the simulation
	fault atomic.Pointer[error]

	uploads, uploadBytes, downloads, downloadBytes atomic.Int64

	mu     sync.RWMutex
	allocs []*simAlloc // sorted by base
	next   Ptr         // the next base address to hand out
}

// simBase is the first simulated address: above the 47- and 48-bit user address spaces, so no host
// pointer equals a simulated address and dereferencing one faults.
const simBase Ptr = 0xd000_0000_0000_0000

// simAlign is the alignment and spacing of simulated allocations (a GPU's is 256 bytes or more;
// a page keeps neighbouring allocations apart so that an overrun never lands in the next one).
const simAlign = 1 << 16

type simAlloc struct {
	base Ptr
	size int64
	host Ptr    // the CPUDevice memory behind it
	mem  []byte // host view of it
	wmu  sync.Mutex
	set  []uint64 // bit i: byte i was written
}

// SimConfig configures a SimDevice.
type SimConfig struct {
	// Memory is the device's total memory in bytes; 0 means DefaultCPUMemory.
	Memory int64
}

// SimCounters count a SimDevice's host-device copies.
type SimCounters struct {
	Uploads, UploadBytes, Downloads, DownloadBytes int64
}

// SimMemory is the capability to reach a SimDevice's memory by address. NewSim returns it beside
// the device so that only the code it is handed to — the simulated backend's kernels — can read or
// write device memory; the engine, which only has the device, cannot.
type SimMemory struct{ d *SimDevice }

// NewSim returns a simulated device and the capability to reach its memory.
func NewSim(cfg SimConfig) (*SimDevice, *SimMemory, error) {
	//lint:ignore S1016 the host gets the one field it shares with SimConfig, not a conversion that breaks when SimConfig grows
	host, err := NewCPU(CPUConfig{Memory: cfg.Memory})
	if err != nil {
		return nil, nil, err
	}
	d := &SimDevice{host: host, next: simBase}
	return d, &SimMemory{d: d}, nil
}

// Name returns "sim".
func (d *SimDevice) Name() string { return "sim" }

// Malloc reserves size bytes of simulated memory; none of it counts as written.
func (d *SimDevice) Malloc(size int64) (Ptr, error) {
	hp, err := d.host.Malloc(size)
	if errors.Is(err, ErrOutOfMemory) {
		free, total, _ := d.host.MemInfo()
		return 0, fmt.Errorf("sim: malloc of %d bytes with %d of %d bytes free: %w", size, free, total, ErrOutOfMemory)
	}
	if err != nil {
		return 0, simErr(err)
	}
	mem := HostBytes(hp, size)
	d.mu.Lock()
	defer d.mu.Unlock()
	a := &simAlloc{base: d.next, size: size, host: hp, mem: mem, set: make([]uint64, (size+63)/64)}
	d.next += Ptr((size + simAlign - 1) / simAlign * simAlign)
	d.allocs = append(d.allocs, a) // bases only grow, so the slice stays sorted
	return a.base, nil
}

// Free releases memory returned by Malloc, after the work queued before it (like cudaFree).
func (d *SimDevice) Free(p Ptr) error {
	d.mu.Lock()
	i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].base >= p })
	if i == len(d.allocs) || d.allocs[i].base != p {
		d.mu.Unlock()
		return fmt.Errorf("sim: free %#x: not an address returned by Malloc: %w", uintptr(p), ErrInvalidHandle)
	}
	a := d.allocs[i]
	d.allocs = append(d.allocs[:i], d.allocs[i+1:]...)
	d.mu.Unlock()
	return simErr(d.host.Free(a.host))
}

// MemInfo reports free and total simulated memory.
func (d *SimDevice) MemInfo() (free, total int64, err error) { return d.host.MemInfo() }

// Synchronize waits for every stream and returns the device's sticky fault, if any.
func (d *SimDevice) Synchronize() error { return d.sticky(d.host.Synchronize()) }

// NewStream creates a stream.
func (d *SimDevice) NewStream() (Stream, error) { return d.host.NewStream() }

// DestroyStream releases a stream; its queued work still runs.
func (d *SimDevice) DestroyStream(s Stream) error { return d.host.DestroyStream(s) }

// SynchronizeStream waits for s and returns the device's sticky fault, if any.
func (d *SimDevice) SynchronizeStream(s Stream) error {
	return d.sticky(d.host.SynchronizeStream(s))
}

// NewEvent creates an event.
func (d *SimDevice) NewEvent() (Event, error) { return d.host.NewEvent() }

// DestroyEvent releases an event.
func (d *SimDevice) DestroyEvent(e Event) error { return d.host.DestroyEvent(e) }

// RecordEvent marks the current end of s's queue in e.
func (d *SimDevice) RecordEvent(e Event, s Stream) error { return d.host.RecordEvent(e, s) }

// WaitEvent makes s's later work wait for e.
func (d *SimDevice) WaitEvent(s Stream, e Event) error { return d.host.WaitEvent(s, e) }

// QueryEvent reports whether e has completed.
func (d *SimDevice) QueryEvent(e Event) (bool, error) { return d.host.QueryEvent(e) }

// SynchronizeEvent waits for e and returns the device's sticky fault, if any.
func (d *SimDevice) SynchronizeEvent(e Event) error {
	return d.sticky(d.host.SynchronizeEvent(e))
}

// BeginCapture starts capturing s.
func (d *SimDevice) BeginCapture(s Stream) error { return d.host.BeginCapture(s) }

// EndCapture ends s's capture.
func (d *SimDevice) EndCapture(s Stream) (GraphExec, error) { return d.host.EndCapture(s) }

// CaptureInfo reports whether s is being captured.
func (d *SimDevice) CaptureInfo(s Stream) (CaptureID, bool, error) { return d.host.CaptureInfo(s) }

// LaunchGraph queues a replay of g on s.
func (d *SimDevice) LaunchGraph(g GraphExec, s Stream) error { return d.host.LaunchGraph(g, s) }

// DestroyGraph releases g.
func (d *SimDevice) DestroyGraph(g GraphExec) error { return d.host.DestroyGraph(g) }

// Close destroys every stream, waits for queued work and releases all memory.
func (d *SimDevice) Close() error {
	d.mu.Lock()
	d.allocs = nil
	d.mu.Unlock()
	return d.host.Close()
}

// Fault returns the device's sticky fault: the first kernel failure or panic, or nil.
func (d *SimDevice) Fault() error {
	if p := d.fault.Load(); p != nil {
		return *p
	}
	return d.host.Fault()
}

// Counters returns the copies made so far.
func (d *SimDevice) Counters() SimCounters {
	return SimCounters{Uploads: d.uploads.Load(), UploadBytes: d.uploadBytes.Load(),
		Downloads: d.downloads.Load(), DownloadBytes: d.downloadBytes.Load()}
}

// CopyIn queues a copy of src to simulated memory at dst on s. The copied bytes count as written.
func (d *SimDevice) CopyIn(dst Ptr, src []byte, s Stream) error {
	n := int64(len(src))
	a, off, err := d.find(dst, n)
	if err != nil {
		return fmt.Errorf("sim: copy of %d bytes to the device: %w", n, err)
	}
	d.uploads.Add(1)
	d.uploadBytes.Add(n)
	return d.launch(s, func() error {
		copy(a.mem[off:off+n], src)
		a.mark(off, n)
		return nil
	})
}

// CopyOut queues a copy of len(dst) bytes of simulated memory at src to dst on s. Copying bytes
// nothing wrote is an *UninitializedReadError (sticky, like a kernel's).
func (d *SimDevice) CopyOut(dst []byte, src Ptr, s Stream) error {
	n := int64(len(dst))
	a, off, err := d.find(src, n)
	if err != nil {
		return fmt.Errorf("sim: copy of %d bytes to the host: %w", n, err)
	}
	d.downloads.Add(1)
	d.downloadBytes.Add(n)
	return d.launch(s, func() error {
		if err := a.check(off, n, "copy to the host"); err != nil {
			return err
		}
		copy(dst, a.mem[off:off+n])
		return nil
	})
}

// launch queues fn on s; its error becomes the device's sticky fault, after which queued work is
// skipped.
func (d *SimDevice) launch(s Stream, fn func() error) error {
	return d.host.Launch(s, func() {
		if d.Fault() != nil {
			return
		}
		if err := fn(); err != nil {
			d.fault.CompareAndSwap(nil, &err)
		}
	})
}

// sticky returns err, or the device's fault when err is nil.
func (d *SimDevice) sticky(err error) error {
	if err != nil {
		return simErr(err)
	}
	if err := d.Fault(); err != nil {
		return &lostError{err}
	}
	return nil
}

// lostError is a sticky fault as the synchronizing calls return it: errors.Is(err,
// ErrDeviceLost) holds, and the fault itself is kept for errors.As.
type lostError struct{ err error }

func (e *lostError) Error() string        { return e.err.Error() }
func (e *lostError) Unwrap() error        { return e.err }
func (e *lostError) Is(target error) bool { return target == ErrDeviceLost }

// LaunchKernel queues fn on s, like a kernel launch: fn runs in stream order on the device's
// worker, and an error it returns is the device's sticky fault, after which queued work is
// skipped. The simulated backend launches its kernels through it, so that a device wrapper
// (InjectFaults) sees the launches; fn reaches memory only through the SimMemory it holds.
func (d *SimDevice) LaunchKernel(s Stream, fn func() error) error { return d.launch(s, fn) }

// find returns the allocation holding [p, p+n) and p's offset in it.
func (d *SimDevice) find(p Ptr, n int64) (*simAlloc, int64, error) {
	if n < 0 {
		return nil, 0, fmt.Errorf("negative size %d: %w", n, ErrOutOfBounds)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	i := sort.Search(len(d.allocs), func(i int) bool { return d.allocs[i].base > p }) - 1
	if i < 0 || p < simBase {
		return nil, 0, fmt.Errorf("%#x is not simulated device memory: %w", uintptr(p), ErrInvalidHandle)
	}
	a := d.allocs[i]
	off := int64(p - a.base)
	if off > a.size || n > a.size-off {
		return nil, 0, fmt.Errorf("[%#x, +%d) leaves the allocation at %#x of %d bytes: %w",
			uintptr(p), n, uintptr(a.base), a.size, ErrOutOfBounds)
	}
	return a, off, nil
}

// simErr marks an error of the CPUDevice behind the simulation as the simulated device's.
func simErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("sim: %w", err)
}

// UninitializedReadError reports a read of simulated device memory that nothing wrote: a weight,
// input or host value that was never uploaded, or an activation read before its producer ran.
type UninitializedReadError struct {
	Ptr    Ptr
	Size   int64
	First  int64 // offset from Ptr of the first unwritten byte
	Reader string
}

func (e *UninitializedReadError) Error() string {
	return fmt.Sprintf("sim: %s reads %d bytes at %#x, of which byte %d was never written (a missing upload, or a read before the write)",
		e.Reader, e.Size, uintptr(e.Ptr), e.First)
}

// mark records [off, off+n) as written.
func (a *simAlloc) mark(off, n int64) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	for i := off; i < off+n; {
		w, b := i/64, i%64
		if b == 0 && off+n-i >= 64 {
			a.set[w] = ^uint64(0)
			i += 64
			continue
		}
		a.set[w] |= 1 << b
		i++
	}
}

// check fails unless every byte of [off, off+n) was written.
func (a *simAlloc) check(off, n int64, reader string) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	for i := off; i < off+n; {
		w, b := i/64, i%64
		if b == 0 && off+n-i >= 64 && a.set[w] == ^uint64(0) {
			i += 64
			continue
		}
		if a.set[w]&(1<<b) == 0 {
			return &UninitializedReadError{Ptr: a.base.Add(off), Size: n, First: i - off, Reader: reader}
		}
		i++
	}
	return nil
}

// Launch queues fn on s, like a kernel launch: fn runs in stream order on the device's worker and
// may reach memory through m. An error fn returns is the device's sticky fault.
func (m *SimMemory) Launch(s Stream, fn func() error) error { return m.d.launch(s, fn) }

// Device returns the device whose memory m reaches.
func (m *SimMemory) Device() *SimDevice { return m.d }

// Read views n bytes at p for a kernel named reader, failing with an *UninitializedReadError if any
// of them was never written. Call it only from work launched with Launch.
func (m *SimMemory) Read(p Ptr, n int64, reader string) ([]byte, error) {
	a, off, err := m.d.find(p, n)
	if err != nil {
		return nil, fmt.Errorf("sim: %s reads: %w", reader, err)
	}
	if err := a.check(off, n, reader); err != nil {
		return nil, err
	}
	return a.mem[off : off+n : off+n], nil
}

// Write views n bytes at p for writing and counts them as written. Call it only from work
// launched with Launch.
func (m *SimMemory) Write(p Ptr, n int64) ([]byte, error) {
	a, off, err := m.d.find(p, n)
	if err != nil {
		return nil, fmt.Errorf("sim: write: %w", err)
	}
	a.mark(off, n)
	return a.mem[off : off+n : off+n], nil
}

// Scratch views n bytes at p as workspace: readable and writable, counted as written (a kernel's
// workspace holds no input). Call it only from work launched with Launch.
func (m *SimMemory) Scratch(p Ptr, n int64) ([]byte, error) { return m.Write(p, n) }

// HostAddress translates a simulated address to the host address behind it, for a workspace
// carved by address. Call it only from work launched with Launch.
func (m *SimMemory) HostAddress(p Ptr, n int64) (Ptr, error) {
	a, off, err := m.d.find(p, n)
	if err != nil {
		return 0, fmt.Errorf("sim: %w", err)
	}
	a.mark(off, n)
	return a.host.Add(off), nil
}

var _ Device = (*SimDevice)(nil)

// Calls counts the calls made to the device behind the simulation: its mallocs and frees are the
// simulated device's, and its launches include the copies.
func (d *SimDevice) Calls() CPUCalls { return d.host.Calls() }
