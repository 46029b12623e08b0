// Package sim is the simulated discrete backend: the CPU kernels run on an alloc.SimDevice, whose
// memory the engine reaches only through copies and the kernels only through address translation.
// It exists so that the device path of the engine — weights uploaded once, inputs copied in,
// outputs copied out, tensors bound by address — runs in CI without a GPU, and so that a mistake
// on that path fails loudly instead of computing on host bytes by accident:
//
//   - a tensor handed to a simulated kernel with host Data set is refused (the engine bound a
//     device tensor to host memory);
//   - reading device bytes that nothing wrote (a missing upload) is an
//     *alloc.UninitializedReadError, sticky on the device like a CUDA error.
//
// The kernels select exactly as the CPU's do, so a model's outputs on "sim" are byte-identical to
// those on "cpu"; only the arena differs, because on a discrete device graph inputs and
// host-computed values need device bytes too.
package sim

import (
	"errors"
	"fmt"
	"sync"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/cpu"
)

func init() {
	kernels.RegisterDriver(kernels.Driver{
		Name:     kernels.BackendSim,
		Registry: planningRegistry,
		Open:     func(o kernels.OpenOptions) (kernels.Backend, error) { return Open(o) },
	})
}

var (
	planOnce sync.Once
	planReg  *kernels.Registry
	planErr  error
)

// planningRegistry holds the simulated kernels without a device: they select and bound like the
// CPU's, for plans, and refuse to run.
func planningRegistry() (*kernels.Registry, error) {
	planOnce.Do(func() { planReg, planErr = newRegistry(nil, nil) })
	return planReg, planErr
}

// newRegistry wraps every CPU kernel for a simulated device whose memory is mem (nil: plans
// only), launched through launch (nil: mem's device).
func newRegistry(mem *alloc.SimMemory, launch kernelLauncher) (*kernels.Registry, error) {
	if launch == nil && mem != nil {
		launch = mem.Device()
	}
	r := kernels.NewRegistry()
	for _, k := range cpu.Kernels() {
		if err := r.Register(&kernel{inner: k, mem: mem, launch: launch}); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// kernelLauncher queues a kernel on a simulated device: the SimDevice, or a wrapper around it.
type kernelLauncher interface {
	LaunchKernel(s alloc.Stream, fn func() error) error
}

// copier copies between host and simulated memory: the SimDevice, or a wrapper around it.
type copier interface {
	CopyIn(dst alloc.Ptr, src []byte, s alloc.Stream) error
	CopyOut(dst []byte, src alloc.Ptr, s alloc.Stream) error
}

// Backend runs the CPU kernels on a simulated discrete device. It is safe for concurrent use.
type Backend struct {
	dev      alloc.Device     // the device the engine is given: sim, or a wrapper around it
	sim      *alloc.SimDevice // sim itself, for its counters
	mem      *alloc.SimMemory // sim's memory, for CopyRows
	copies   copier           // dev's copies
	launch   kernelLauncher   // dev's launches
	own      bool             // Close closes sim
	ordinal  int
	target   kernels.Target
	registry *kernels.Registry
}

// Open opens a simulated device of opts.Memory bytes (0: alloc.DefaultCPUMemory) whose kernels
// use opts.Workers workers. Every call makes a new, independent device; opts.Ordinal only names
// it, so that several replicas can be told apart.
func Open(opts kernels.OpenOptions) (*Backend, error) {
	if opts.Ordinal < 0 {
		return nil, fmt.Errorf("sim backend: device number %d is negative", opts.Ordinal)
	}
	dev, mem, err := alloc.NewSim(alloc.SimConfig{Memory: opts.Memory})
	if err != nil {
		return nil, err
	}
	b, err := NewBackend(dev, mem, opts.Workers)
	if err != nil {
		dev.Close()
		return nil, err
	}
	b.ordinal, b.own = opts.Ordinal, true
	return b, nil
}

// NewBackend runs the simulated kernels on dev, which is mem's device or a wrapper around it
// (alloc.InjectFaults in tests) that keeps its CopyIn, CopyOut and LaunchKernel methods: the
// engine's copies and the kernels' launches go through dev, and the kernels reach memory
// through mem. workers <= 0 means GOMAXPROCS. Close leaves dev open.
func NewBackend(dev alloc.Device, mem *alloc.SimMemory, workers int) (*Backend, error) {
	if !wraps(dev, mem.Device()) {
		return nil, fmt.Errorf("sim backend: device %s is not the simulated device of the memory given, nor a wrapper around it", dev.Name())
	}
	c, isCopier := dev.(copier)
	l, isLauncher := dev.(kernelLauncher)
	if !isCopier || !isLauncher {
		return nil, fmt.Errorf("sim backend: device %s lacks a simulated device's CopyIn, CopyOut or LaunchKernel", dev.Name())
	}
	reg, err := newRegistry(mem, l)
	if err != nil {
		return nil, err
	}
	t := kernels.CPU(workers)
	t.Backend = kernels.BackendSim
	return &Backend{dev: dev, sim: mem.Device(), mem: mem, copies: c, launch: l, target: t, registry: reg}, nil
}

// wraps reports whether dev is sim or wraps it (through Unwrap methods).
func wraps(dev alloc.Device, sim *alloc.SimDevice) bool {
	for dev != nil {
		if d, ok := dev.(*alloc.SimDevice); ok {
			return d == sim
		}
		u, ok := dev.(interface{ Unwrap() alloc.Device })
		if !ok {
			return false
		}
		dev = u.Unwrap()
	}
	return false
}

// Name is "sim", or "sim:N" for a device number N > 0 (each an independent simulated device).
func (b *Backend) Name() string {
	if b.ordinal > 0 {
		return fmt.Sprintf("%s:%d", b.dev.Name(), b.ordinal)
	}
	return b.dev.Name()
}

// Target is the simulated device: the CPU's workers under the sim backend's name.
func (b *Backend) Target() kernels.Target { return b.target }

// Registry holds the kernels bound to this device's memory.
func (b *Backend) Registry() *kernels.Registry { return b.registry }

// Device is the simulated device.
func (b *Backend) Device() alloc.Device { return b.dev }

// Bind sets t's address; Data stays nil.
func (b *Backend) Bind(t *kernels.Tensor, p alloc.Ptr, _ int64) { t.Data, t.Addr = nil, p }

// CopyIn queues a copy of src to the device.
func (b *Backend) CopyIn(p alloc.Ptr, src []byte, s alloc.Stream) error {
	return b.copies.CopyIn(p, src, s)
}

// CopyOut queues a copy from the device.
func (b *Backend) CopyOut(dst []byte, p alloc.Ptr, s alloc.Stream) error {
	return b.copies.CopyOut(dst, p, s)
}

// CopyRows queues a strided copy within the device's memory on s; the source rows must have
// been written.
func (b *Backend) CopyRows(dst alloc.Ptr, dstPitch int64, src alloc.Ptr, srcPitch int64, width, rows int64, s alloc.Stream) error {
	if rows <= 0 || width <= 0 {
		return nil
	}
	return b.launch.LaunchKernel(s, func() error {
		for i := int64(0); i < rows; i++ {
			r, err := b.mem.Read(src.Add(i*srcPitch), width, "CopyRows")
			if err != nil {
				return err
			}
			d, err := b.mem.Write(dst.Add(i*dstPitch), width)
			if err != nil {
				return err
			}
			copy(d, r)
		}
		return nil
	})
}

// Counters reports the device's copies.
func (b *Backend) Counters() kernels.CopyCounters {
	c := b.sim.Counters()
	return kernels.CopyCounters{Uploads: c.Uploads, UploadBytes: c.UploadBytes, Downloads: c.Downloads, DownloadBytes: c.DownloadBytes}
}

// Close closes the simulated device if Open made it.
func (b *Backend) Close() error {
	if !b.own {
		return nil
	}
	return b.sim.Close()
}

// kernel is a CPU kernel behind device addresses.
type kernel struct {
	inner  kernels.Kernel
	mem    *alloc.SimMemory
	launch kernelLauncher
}

func (k *kernel) Op() kernels.OpKey             { return k.inner.Op() }
func (k *kernel) Backend() string               { return kernels.BackendSim }
func (k *kernel) Tactics() []kernels.TacticInfo { return k.inner.Tactics() }

func (k *kernel) Select(n *kernels.Node, t kernels.Target) (kernels.Instance, error) {
	t.Backend = kernels.BackendCPU
	inst, err := k.inner.Select(n, t)
	if err != nil {
		return nil, err
	}
	return &instance{inner: inst, mem: k.mem, launch: k.launch, label: inst.Recipe().Kernel}, nil
}

func (k *kernel) Bound(r *kernels.NodeRange, t kernels.Target) (kernels.Bound, error) {
	t.Backend = kernels.BackendCPU
	return k.inner.Bound(r, t)
}

type instance struct {
	inner  kernels.Instance
	mem    *alloc.SimMemory
	launch kernelLauncher
	label  string
}

func (i *instance) Tactic() string       { return i.inner.Tactic() }
func (i *instance) Recipe() alloc.Recipe { return i.inner.Recipe() }

// InPlace is the CPU kernel's contract: the simulated memory behind the addresses is host memory
// that the CPU kernel reads and writes as it would its own.
func (i *instance) InPlace() []kernels.InPlace { return kernels.InPlaceOf(i.inner) }

// ErrHostData reports a tensor bound to host memory handed to a simulated kernel: on a discrete
// device that is the engine reading or writing host bytes where device bytes were meant.
var ErrHostData = errors.New("a tensor with host Data reached a kernel of a discrete device")

// Run queues the CPU kernel on s; when it runs, every tensor and the workspace are translated to the
// host bytes behind the simulated addresses, inputs checked for having been written.
func (i *instance) Run(in, out []kernels.Tensor, ws *alloc.Workspace, s alloc.Stream) error {
	if i.mem == nil {
		return fmt.Errorf("%s: the sim backend's planning registry cannot run kernels: open a sim backend", i.label)
	}
	for _, ts := range [][]kernels.Tensor{in, out} {
		for j := range ts {
			if ts[j].Data != nil {
				return fmt.Errorf("%s: tensor %d (%v): %w", i.label, j, ts[j], ErrHostData)
			}
		}
	}
	hin := append([]kernels.Tensor(nil), in...)
	hout := append([]kernels.Tensor(nil), out...)
	return i.launch.LaunchKernel(s, func() error {
		for j := range hin {
			if err := i.translate(&hin[j], false); err != nil {
				return err
			}
		}
		for j := range hout {
			if err := i.translate(&hout[j], true); err != nil {
				return err
			}
		}
		var hws *alloc.Workspace
		if ws != nil {
			reg := ws.Region()
			hp, err := i.mem.HostAddress(reg.Ptr, reg.Size)
			if err != nil {
				return fmt.Errorf("%s: workspace: %w", i.label, err)
			}
			if hws, err = alloc.Carve(alloc.Region{Ptr: hp, Size: reg.Size}, i.inner.Recipe()); err != nil {
				return fmt.Errorf("%s: workspace: %w", i.label, err)
			}
		}
		if err := i.inner.Run(hin, hout, hws, s); err != nil {
			return fmt.Errorf("%s: %w", i.label, err)
		}
		return nil
	})
}

// translate gives t the host bytes behind its address: checked as read for an input, counted as
// written for an output.
func (i *instance) translate(t *kernels.Tensor, write bool) error {
	if t.DType == graph.Undefined && t.Addr == 0 {
		return nil // an absent optional tensor
	}
	n, err := kernels.ByteSize(t.DType, t.Shape)
	if err != nil || n == 0 {
		return err
	}
	if write {
		t.Data, err = i.mem.Write(t.Addr, n)
	} else {
		t.Data, err = i.mem.Read(t.Addr, n, i.label)
	}
	return err
}

var (
	_ kernels.Backend   = (*Backend)(nil)
	_ kernels.RowCopier = (*Backend)(nil)
)
