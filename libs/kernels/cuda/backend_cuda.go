//go:build cuda

package cuda

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"carve.dev/libs/alloc"
	acuda "carve.dev/libs/alloc/cuda"
	"carve.dev/libs/kernels"
)

// stagingChunk is the size of each pinned staging buffer. Copies larger than a chunk go
// through it in pieces; two chunks per stream let the host fill one while the device drains
// the other.
const stagingChunk = 8 << 20

// Backend is the CUDA kernels.Backend on one GPU: libs/alloc/cuda's Device, the target read
// from it, and pinned staging buffers for host copies. It is safe for concurrent use.
type Backend struct {
	dev    *acuda.Device
	target kernels.Target
	reg    *kernels.Registry

	mu      sync.Mutex
	staging map[alloc.Stream]*staging
	closed  bool

	faults *alloc.Faults // set by InjectFaults before first use; nil: no calls are counted

	uploads, uploadBytes, downloads, downloadBytes atomic.Int64
}

// staging is one stream's pair of pinned buffers, each with the event that marks when the
// device has finished reading or writing it.
type staging struct {
	mu    sync.Mutex
	bufs  [2][]byte
	done  [2]alloc.Event
	next  int
	inUse [2]bool // whether done[i] was recorded since the buffer was last waited on
}

func open(opts kernels.OpenOptions) (kernels.Backend, error) {
	reg, err := Registry()
	if err != nil {
		return nil, err
	}
	dev, err := acuda.Open(opts.Ordinal)
	if err != nil {
		return nil, err
	}
	p, err := dev.Properties()
	if err != nil {
		dev.Close()
		return nil, err
	}
	b := &Backend{dev: dev, reg: reg, staging: map[alloc.Stream]*staging{}, target: kernels.Target{
		Backend:           kernels.BackendCUDA,
		Arch:              fmt.Sprintf("sm_%d%d", p.Major, p.Minor),
		SMs:               p.SMs,
		SharedMemPerBlock: p.SharedOptin,
		Memory:            p.TotalMemory,
	}}
	return b, nil
}

// count is the number of CUDA devices the driver sees.
func count() (int, error) { return acuda.DeviceCount() }

// Name is "cuda:N".
func (b *Backend) Name() string { return b.dev.Name() }

// Target is the device as the driver reports it.
func (b *Backend) Target() kernels.Target { return b.target }

// Registry holds the CUDA kernels.
func (b *Backend) Registry() *kernels.Registry { return b.reg }

// Device is the GPU.
func (b *Backend) Device() alloc.Device { return b.dev }

// CUDADevice is the GPU with the CUDA-only calls (pinned memory, copies, properties).
func (b *Backend) CUDADevice() *acuda.Device { return b.dev }

// HostVisible is false: kernels reach device memory through addresses only.
func (b *Backend) HostVisible() bool { return false }

// Bind sets t.Addr; Data stays nil.
func (b *Backend) Bind(t *kernels.Tensor, p alloc.Ptr, _ int64) {
	t.Addr, t.Data = p, nil
}

// stagingFor returns s's staging buffers, allocating them on the stream's first copy.
func (b *Backend) stagingFor(s alloc.Stream) (*staging, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, errors.New("cuda: backend is closed")
	}
	if st := b.staging[s]; st != nil {
		return st, nil
	}
	st := &staging{}
	for i := range st.bufs {
		buf, err := b.dev.HostAlloc(stagingChunk)
		if err != nil {
			b.freeStaging(st)
			return nil, err
		}
		st.bufs[i] = buf
		if err := b.fault(alloc.FaultEvent, "new staging event"); err != nil {
			b.freeStaging(st)
			return nil, err
		}
		if st.done[i], err = b.dev.NewEvent(); err != nil {
			b.freeStaging(st)
			return nil, err
		}
	}
	b.staging[s] = st
	return st, nil
}

func (b *Backend) freeStaging(st *staging) error {
	var errs []error
	for i := range st.bufs {
		if st.bufs[i] != nil {
			errs = append(errs, b.dev.HostFree(st.bufs[i]))
		}
		if st.done[i] != 0 {
			errs = append(errs, b.dev.DestroyEvent(st.done[i]))
		}
	}
	return errors.Join(errs...)
}

// take returns the next staging buffer once the device is done with its previous use.
func (st *staging) take(b *Backend) (int, error) {
	i := st.next
	st.next = 1 - i
	if st.inUse[i] {
		if err := b.fault(alloc.FaultSync, "synchronize staging event"); err != nil {
			return 0, err
		}
		if err := b.dev.SynchronizeEvent(st.done[i]); err != nil {
			return 0, err
		}
		st.inUse[i] = false
	}
	return i, nil
}

// recordStaging marks, with its event, the end of the copy just queued on s through staging
// buffer i. If the event cannot be recorded, nothing would say when the device is done with the
// buffer, so the stream is waited for instead: the next copy through the buffer must not
// overwrite bytes the device has yet to read.
func (b *Backend) recordStaging(st *staging, i int, s alloc.Stream) error {
	err := b.fault(alloc.FaultEvent, "record staging event")
	if err == nil {
		err = b.dev.RecordEvent(st.done[i], s)
	}
	if err != nil {
		return errors.Join(err, b.dev.SynchronizeStream(s))
	}
	st.inUse[i] = true
	return nil
}

// CopyIn queues a copy of src to dst on s through pinned staging buffers: src is copied into a
// staging buffer, and the device copies from there in stream order. CopyIn returns once src
// has been read (it may wait for the device to free a staging buffer), so src may be reused
// at once.
func (b *Backend) CopyIn(dst alloc.Ptr, src []byte, s alloc.Stream) error {
	if len(src) == 0 {
		return nil
	}
	st, err := b.stagingFor(s)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for off := 0; off < len(src); off += stagingChunk {
		n := min(stagingChunk, len(src)-off)
		i, err := st.take(b)
		if err != nil {
			return err
		}
		hostCopy(st.bufs[i], src[off:off+n])
		if err := b.fault(alloc.FaultCopy, "copy in"); err != nil {
			return err
		}
		if err := b.dev.CopyToDeviceAsync(dst.Add(int64(off)), st.bufs[i][:n], s); err != nil {
			return err
		}
		if err := b.recordStaging(st, i, s); err != nil {
			return err
		}
	}
	b.uploads.Add(1)
	b.uploadBytes.Add(int64(len(src)))
	return nil
}

// CopyOut copies len(dst) bytes at src into dst after the work queued on s, through pinned
// staging buffers. It returns once dst holds the bytes (it waits for the stream to reach the
// copy), so it cannot be captured into a graph.
func (b *Backend) CopyOut(dst []byte, src alloc.Ptr, s alloc.Stream) error {
	if len(dst) == 0 {
		return nil
	}
	st, err := b.stagingFor(s)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	// Chunk k's device copy is queued before chunk k-1 is read out of its staging buffer, so
	// the device copies one chunk while the host reads the other.
	pending, pendingOff, pendingN := -1, 0, 0
	drain := func() error {
		if pending < 0 {
			return nil
		}
		if err := b.dev.SynchronizeEvent(st.done[pending]); err != nil {
			return err
		}
		st.inUse[pending] = false
		hostCopy(dst[pendingOff:pendingOff+pendingN], st.bufs[pending][:pendingN])
		pending = -1
		return nil
	}
	for off := 0; off < len(dst); off += stagingChunk {
		n := min(stagingChunk, len(dst)-off)
		i, err := st.take(b)
		if err != nil {
			return err
		}
		if err := b.fault(alloc.FaultCopy, "copy out"); err != nil {
			return err
		}
		if err := b.dev.CopyToHostAsync(st.bufs[i][:n], src.Add(int64(off)), s); err != nil {
			return err
		}
		if err := b.recordStaging(st, i, s); err != nil {
			return err
		}
		if err := drain(); err != nil {
			return err
		}
		pending, pendingOff, pendingN = i, off, n
	}
	if err := drain(); err != nil {
		return err
	}
	b.downloads.Add(1)
	b.downloadBytes.Add(int64(len(dst)))
	return nil
}

// CopyRows queues a strided device-to-device copy on s (kernels.RowCopier): one grid-stride
// kernel, in 16-byte words when every address, pitch and width allows.
func (b *Backend) CopyRows(dst alloc.Ptr, dstPitch int64, src alloc.Ptr, srcPitch int64, width, rows int64, s alloc.Stream) error {
	if rows <= 0 || width <= 0 {
		return nil
	}
	es, kernel := int64(16), "carve_copy_rows_16"
	if (uint64(dst)|uint64(src)|uint64(dstPitch)|uint64(srcPitch)|uint64(width))%16 != 0 {
		es, kernel = 1, "carve_copy_rows_1"
	}
	if err := b.fault(alloc.FaultLaunch, "launch copy rows"); err != nil {
		return err
	}
	return launch(s, kernel, grid1(rows*width/es, 1, b.target), block1, 0,
		PtrArg(dst), Int64Arg(dstPitch/es), PtrArg(src), Int64Arg(srcPitch/es), Int64Arg(width/es), Int64Arg(rows))
}

// Stall queues one kernel on s that waits d on the device (kernels.Staller).
func (b *Backend) Stall(s alloc.Stream, d time.Duration) error {
	if err := b.fault(alloc.FaultLaunch, "launch carve_stall"); err != nil {
		return err
	}
	return launch(s, "carve_stall", Dim3{X: 1}, Dim3{X: 1}, 0, Int64Arg(d.Nanoseconds()))
}

// InjectFaults has the backend count, and fail, through f (alloc.Faults.Inject) the calls it
// makes to the driver around its Device, which a Device wrapped by alloc.InjectFaults does not
// see: its staging buffers' events (created, recorded: alloc.FaultEvent; waited for:
// alloc.FaultSync), the host copies through them (alloc.FaultCopy, one a chunk), and the
// launches of CopyRows and Stall (alloc.FaultLaunch). The kernels' own launches are made by
// their instances, not the backend: a test wraps the registry to count them. InjectFaults is
// for fault-injection tests and must be called before the backend is first used.
func (b *Backend) InjectFaults(f *alloc.Faults) { b.faults = f }

// fault counts a call of kind op made around the Device, and fails it as InjectFaults's Faults
// says; without them it is nil. what is a constant, so that counting allocates nothing.
func (b *Backend) fault(op alloc.FaultOp, what string) error {
	if b.faults == nil {
		return nil
	}
	return b.faults.Inject(op, b.Name()+": "+what)
}

// Counters reports the copies so far.
func (b *Backend) Counters() kernels.CopyCounters {
	return kernels.CopyCounters{Uploads: b.uploads.Load(), UploadBytes: b.uploadBytes.Load(),
		Downloads: b.downloads.Load(), DownloadBytes: b.downloadBytes.Load()}
}

// Close synchronizes the device and releases the staging buffers, the cuDNN plans and handle,
// the cuBLAS ltHandles, the loaded kernels and the device's context.
func (b *Backend) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	st := b.staging
	b.staging = nil
	b.mu.Unlock()
	errs := []error{b.dev.Synchronize()}
	for _, s := range st {
		errs = append(errs, b.freeStaging(s))
	}
	errs = append(errs, closeDnn(b.dev), closeBlas(b.dev), unloadModule(b.dev), b.dev.Close())
	return errors.Join(errs...)
}

var (
	_ kernels.Backend   = (*Backend)(nil)
	_ kernels.RowCopier = (*Backend)(nil)
)
