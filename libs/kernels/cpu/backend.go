package cpu

import (
	"fmt"
	"sync"
	"sync/atomic"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

func init() {
	kernels.RegisterDriver(kernels.Driver{
		Name:     kernels.BackendCPU,
		Registry: SharedRegistry,
		Open:     func(o kernels.OpenOptions) (kernels.Backend, error) { return Open(o) },
	})
}

var (
	sharedOnce sync.Once
	shared     *kernels.Registry
)

// SharedRegistry returns the registry of the CPU kernels, built once and shared by every CPU
// backend. It never fails; the error is the Driver's signature.
func SharedRegistry() (*kernels.Registry, error) {
	sharedOnce.Do(func() { shared = NewRegistry() })
	return shared, nil
}

// Backend runs the CPU kernels on a host-memory device. Tensors it binds carry host Data (and the
// address in Addr), so weights, inputs and host-computed values are read where they lie and need no
// copies; kernels run as work launched on the device's streams. It is safe for concurrent use.
type Backend struct {
	dev      hostDevice
	device   alloc.Device // dev as an alloc.Device, converted once (see Device)
	own      bool         // Close closes dev
	target   kernels.Target
	copies   [4]atomic.Int64 // uploads, upload bytes, downloads, download bytes
	registry *kernels.Registry
	rows     copyList // CopyRows's queued copies, recycled
}

// hostDevice is a device whose memory the host addresses directly and whose streams run host work:
// a CPUDevice, or a wrapper around one (fault injection in tests).
type hostDevice interface {
	alloc.Device
	kernels.Launcher
}

// Open opens a CPU backend on a new CPUDevice of opts.Memory bytes with opts.Workers workers.
func Open(opts kernels.OpenOptions) (*Backend, error) {
	if opts.Ordinal != 0 {
		return nil, fmt.Errorf("cpu backend: there is one CPU device, not %d", opts.Ordinal+1)
	}
	dev, err := alloc.NewCPU(alloc.CPUConfig{Memory: opts.Memory})
	if err != nil {
		return nil, err
	}
	b, err := NewBackend(dev, opts.Workers)
	if err != nil {
		return nil, err
	}
	b.own = true
	return b, nil
}

// NewBackend runs the CPU kernels on dev, whose memory must be host memory (a CPUDevice or a
// wrapper around one) and which must launch host work on its streams. workers <= 0 means
// GOMAXPROCS. Close leaves dev open.
func NewBackend(dev alloc.Device, workers int) (*Backend, error) {
	hd, ok := dev.(hostDevice)
	if !ok {
		return nil, fmt.Errorf("cpu backend: device %s does not run host work on its streams (no Launch method)", dev.Name())
	}
	reg, _ := SharedRegistry()
	return &Backend{dev: hd, device: dev, target: kernels.CPU(workers), registry: reg}, nil
}

// Name is the device's name.
func (b *Backend) Name() string { return b.dev.Name() }

// Target is the CPU with the backend's workers.
func (b *Backend) Target() kernels.Target { return b.target }

// Registry holds the CPU kernels.
func (b *Backend) Registry() *kernels.Registry { return b.registry }

// Device is the host-memory device. It is the device NewBackend was given rather than a
// conversion of dev: converting one interface to another consults a type-assertion cache that
// the runtime fills at random moments, allocating, and a session calls Device every run.
func (b *Backend) Device() alloc.Device { return b.device }

// Bind points t at n bytes of host memory at p: Data views them and Addr holds p.
func (b *Backend) Bind(t *kernels.Tensor, p alloc.Ptr, n int64) {
	t.Data, t.Addr = alloc.HostBytes(p, n), p
}

// Launch queues fn on s.
func (b *Backend) Launch(s alloc.Stream, fn func()) error { return b.dev.Launch(s, fn) }

// CopyIn queues a copy of src to p on s.
func (b *Backend) CopyIn(p alloc.Ptr, src []byte, s alloc.Stream) error {
	b.copies[0].Add(1)
	b.copies[1].Add(int64(len(src)))
	dst := alloc.HostBytes(p, int64(len(src)))
	return b.dev.Launch(s, func() { copy(dst, src) })
}

// CopyOut queues a copy of len(dst) bytes at p to dst on s.
func (b *Backend) CopyOut(dst []byte, p alloc.Ptr, s alloc.Stream) error {
	b.copies[2].Add(1)
	b.copies[3].Add(int64(len(dst)))
	src := alloc.HostBytes(p, int64(len(dst)))
	return b.dev.Launch(s, func() { copy(dst, src) })
}

// CopyRows queues a strided copy within host memory on s. Outside a capture the copy is one of
// the backend's recycled rowCopy values, so that a generator's per-step cache copies allocate
// nothing once warm; a captured copy runs at every replay and gets a closure of its own.
func (b *Backend) CopyRows(dst alloc.Ptr, dstPitch int64, src alloc.Ptr, srcPitch int64, width, rows int64, s alloc.Stream) error {
	if rows <= 0 || width <= 0 {
		return nil
	}
	c := rowCopy{d: alloc.HostBytes(dst, (rows-1)*dstPitch+width), r: alloc.HostBytes(src, (rows-1)*srcPitch+width),
		dstPitch: dstPitch, srcPitch: srcPitch, width: width, rows: rows}
	if _, capturing, err := b.dev.CaptureInfo(s); err != nil || capturing {
		captured := new(rowCopy) // c itself stays on the stack
		*captured = c
		return b.dev.Launch(s, captured.copy)
	}
	q := b.rows.get()
	q.rowCopy = c
	return b.dev.Launch(s, q.run)
}

// rowCopy is one strided copy.
type rowCopy struct {
	d, r                            []byte
	dstPitch, srcPitch, width, rows int64
}

func (c *rowCopy) copy() {
	for i := int64(0); i < c.rows; i++ {
		copy(c.d[i*c.dstPitch:i*c.dstPitch+c.width], c.r[i*c.srcPitch:i*c.srcPitch+c.width])
	}
}

// queuedCopy is a rowCopy queued on a stream; run (bound once, when it is made) copies and
// returns it to its list.
type queuedCopy struct {
	rowCopy
	list *copyList
	run  func()
}

// copyList is a free list of queuedCopy values: hand-written rather than a sync.Pool because a
// pool may drop its values at any GC, and then each copy allocates again.
type copyList struct {
	mu   sync.Mutex
	free []*queuedCopy
}

func (l *copyList) get() *queuedCopy {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		q := l.free[n-1]
		l.free = l.free[:n-1]
		return q
	}
	q := &queuedCopy{list: l}
	q.run = func() {
		q.copy()
		q.rowCopy = rowCopy{} // drop the buffers
		l.mu.Lock()
		l.free = append(l.free, q)
		l.mu.Unlock()
	}
	return q
}

// Counters reports the copies queued so far.
func (b *Backend) Counters() kernels.CopyCounters {
	return kernels.CopyCounters{Uploads: b.copies[0].Load(), UploadBytes: b.copies[1].Load(),
		Downloads: b.copies[2].Load(), DownloadBytes: b.copies[3].Load()}
}

// Close closes the device if Open made it.
func (b *Backend) Close() error {
	if c, ok := b.dev.(interface{ Close() error }); ok && b.own {
		return c.Close()
	}
	return nil
}

var (
	_ kernels.Backend   = (*Backend)(nil)
	_ kernels.Launcher  = (*Backend)(nil)
	_ kernels.RowCopier = (*Backend)(nil)
)
