package alloc

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// Fault injection: a Device wrapper that fails the N-th call of chosen kinds, so that tests can
// sweep N over every call a whole workload makes (load, reservation, runs, close) and check
// that each failure surfaces as a clean error and leaves nothing allocated.
//
// The wrapper forwards every call to the device it wraps and counts the calls of the kinds in
// FaultConfig.Ops; the FailAt-th counted call returns an error wrapping ErrInjected (a Malloc's
// also wraps ErrOutOfMemory, as a real device's would) without reaching the device. Optional
// interfaces of the wrapped device are kept, and no others are added: the result launches host
// work (Launch, as the CPUDevice) exactly when the wrapped device does, launches kernels given
// as host functions (LaunchKernel, as the SimDevice) exactly when it does, and copies between
// host and device memory (CopyIn, CopyOut, as the SimDevice) exactly when it does, so code that
// checks for those interfaces takes the same path through the wrapper. Calls a backend makes
// around the device (the CUDA backend's copies go through the driver, not the Device
// interface) can be counted with Faults.Inject.

// ErrInjected marks a failure made by a fault-injecting device wrapper; test with errors.Is.
var ErrInjected = errors.New("injected device fault")

// FaultOp is a set of kinds of device call that InjectFaults counts and can fail.
type FaultOp uint16

// Kinds of device call.
const (
	FaultMalloc FaultOp = 1 << iota // Malloc
	FaultStream                     // NewStream
	FaultEvent                      // NewEvent, RecordEvent, WaitEvent
	FaultCopy                       // CopyIn, CopyOut
	FaultLaunch                     // Launch, LaunchGraph
	FaultSync                       // Synchronize, SynchronizeStream, SynchronizeEvent

	// FaultAll is every kind but FaultSync: the calls that create something or queue work.
	FaultAll = FaultMalloc | FaultStream | FaultEvent | FaultCopy | FaultLaunch
)

var faultOpNames = []string{"malloc", "stream", "event", "copy", "launch", "sync"}

func (o FaultOp) String() string {
	for i, n := range faultOpNames {
		if o == 1<<i {
			return n
		}
	}
	return fmt.Sprintf("FaultOp(%#x)", uint16(o))
}

// FaultConfig says which calls a fault-injecting wrapper counts and which one fails.
type FaultConfig struct {
	// Ops are the kinds of call counted; 0 means FaultAll.
	Ops FaultOp
	// FailAt is the 1-based number of the counted call that fails; 0 means none does (the
	// wrapper only counts, which is how a sweep learns how many calls a workload makes).
	FailAt int64
	// Sticky makes every counted call after the first failure fail too, as every call on a
	// CUDA context fails after a sticky error.
	Sticky bool
}

// Faults is the state of a fault-injecting wrapper: what it counted and what it failed. It is
// safe for concurrent use.
type Faults struct {
	cfg   FaultConfig
	calls atomic.Int64 // counted calls so far

	mu     sync.Mutex
	failed []FaultRecord
}

// FaultRecord is one injected failure.
type FaultRecord struct {
	Call int64 // the counted call's number, from 1
	Op   FaultOp
	What string // the call, e.g. "malloc 4096 bytes"
}

// Calls returns how many counted calls were made, failed ones included.
func (f *Faults) Calls() int64 { return f.calls.Load() }

// Failed returns the injected failures so far, in order.
func (f *Faults) Failed() []FaultRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]FaultRecord(nil), f.failed...)
}

// Inject counts a call of kind op that does not go through the wrapper (a backend's copy made
// with the driver directly, say) and returns the injected error if it is the one to fail; what
// names the call in the error.
func (f *Faults) Inject(op FaultOp, what string) error {
	return f.check(op, func() string { return what })
}

// check counts a call of kind op and returns the injected error if it is to fail.
func (f *Faults) check(op FaultOp, what func() string) error {
	if f.cfg.Ops&op == 0 {
		return nil
	}
	n := f.calls.Add(1)
	at := f.cfg.FailAt
	if at <= 0 || n < at || (n > at && !f.cfg.Sticky) {
		return nil
	}
	r := FaultRecord{Call: n, Op: op, What: what()}
	f.mu.Lock()
	f.failed = append(f.failed, r)
	f.mu.Unlock()
	if op == FaultMalloc {
		return fmt.Errorf("%s (call %d): %w: %w", r.What, n, ErrInjected, ErrOutOfMemory)
	}
	return fmt.Errorf("%s (call %d): %w", r.What, n, ErrInjected)
}

// InjectFaults wraps d in a Device that counts, and fails, calls as cfg says. The result has
// d's optional Launch, LaunchKernel and CopyIn/CopyOut methods (see the package's fault
// injection notes; a device with LaunchKernel and not CopyIn/CopyOut, or with it and Launch, is
// refused with a panic: no device is so, and a wrapper would lose a method), a Close that closes
// d if d has one, and Unwrap returning d.
func InjectFaults(d Device, cfg FaultConfig) (Device, *Faults) {
	if cfg.Ops == 0 {
		cfg.Ops = FaultAll
	}
	f := &Faults{cfg: cfg}
	base := faultDevice{Device: d, f: f}
	l, isLauncher := d.(hostLauncher)
	c, isCopier := d.(deviceCopier)
	k, isKernelLauncher := d.(kernelLauncher)
	switch {
	case isKernelLauncher && isCopier && !isLauncher:
		return &faultKernelCopier{faultCopier: faultCopier{faultDevice: base, c: c}, k: k}, f
	case isKernelLauncher:
		panic(fmt.Sprintf("alloc: InjectFaults: device %s has LaunchKernel but no CopyIn/CopyOut, or also Launch", d.Name()))
	case isLauncher && isCopier:
		return &faultLauncherCopier{faultDevice: base, l: l, c: c}, f
	case isLauncher:
		return &faultLauncher{faultDevice: base, l: l}, f
	case isCopier:
		return &faultCopier{faultDevice: base, c: c}, f
	}
	return &base, f
}

// hostLauncher is a device that runs host functions in stream order (the CPUDevice).
type hostLauncher interface {
	Launch(s Stream, fn func()) error
}

// kernelLauncher is a device whose kernels are host functions run in stream order, with a
// sticky error (the SimDevice).
type kernelLauncher interface {
	LaunchKernel(s Stream, fn func() error) error
}

// deviceCopier is a device with memory of its own, reached through stream-ordered copies.
type deviceCopier interface {
	CopyIn(dst Ptr, src []byte, s Stream) error
	CopyOut(dst []byte, src Ptr, s Stream) error
}

// faultDevice forwards the Device interface, counting and failing the calls that Faults
// watches. The embedded Device forwards the rest.
type faultDevice struct {
	Device
	f *Faults
}

// Unwrap returns the wrapped device.
func (d *faultDevice) Unwrap() Device { return d.Device }

// Close closes the wrapped device if it has a Close method.
func (d *faultDevice) Close() error {
	if c, ok := d.Device.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (d *faultDevice) Malloc(size int64) (Ptr, error) {
	if err := d.f.check(FaultMalloc, func() string { return fmt.Sprintf("%s: malloc %d bytes", d.Name(), size) }); err != nil {
		return 0, err
	}
	return d.Device.Malloc(size)
}

func (d *faultDevice) NewStream() (Stream, error) {
	if err := d.f.check(FaultStream, d.what("new stream")); err != nil {
		return 0, err
	}
	return d.Device.NewStream()
}

func (d *faultDevice) NewEvent() (Event, error) {
	if err := d.f.check(FaultEvent, d.what("new event")); err != nil {
		return 0, err
	}
	return d.Device.NewEvent()
}

func (d *faultDevice) RecordEvent(e Event, s Stream) error {
	if err := d.f.check(FaultEvent, d.what("record event")); err != nil {
		return err
	}
	return d.Device.RecordEvent(e, s)
}

func (d *faultDevice) WaitEvent(s Stream, e Event) error {
	if err := d.f.check(FaultEvent, d.what("wait event")); err != nil {
		return err
	}
	return d.Device.WaitEvent(s, e)
}

func (d *faultDevice) LaunchGraph(g GraphExec, s Stream) error {
	if err := d.f.check(FaultLaunch, d.what("launch graph")); err != nil {
		return err
	}
	return d.Device.LaunchGraph(g, s)
}

func (d *faultDevice) Synchronize() error {
	if err := d.f.check(FaultSync, d.what("synchronize")); err != nil {
		return err
	}
	return d.Device.Synchronize()
}

func (d *faultDevice) SynchronizeStream(s Stream) error {
	if err := d.f.check(FaultSync, d.what("synchronize stream")); err != nil {
		return err
	}
	return d.Device.SynchronizeStream(s)
}

func (d *faultDevice) SynchronizeEvent(e Event) error {
	if err := d.f.check(FaultSync, d.what("synchronize event")); err != nil {
		return err
	}
	return d.Device.SynchronizeEvent(e)
}

func (d *faultDevice) what(call string) func() string {
	return func() string { return d.Name() + ": " + call }
}

func (d *faultDevice) launch(l hostLauncher, s Stream, fn func()) error {
	if err := d.f.check(FaultLaunch, d.what("launch")); err != nil {
		return err
	}
	return l.Launch(s, fn)
}

func (d *faultDevice) copyIn(c deviceCopier, dst Ptr, src []byte, s Stream) error {
	if err := d.f.check(FaultCopy, func() string { return fmt.Sprintf("%s: copy %d bytes in", d.Name(), len(src)) }); err != nil {
		return err
	}
	return c.CopyIn(dst, src, s)
}

func (d *faultDevice) copyOut(c deviceCopier, dst []byte, src Ptr, s Stream) error {
	if err := d.f.check(FaultCopy, func() string { return fmt.Sprintf("%s: copy %d bytes out", d.Name(), len(dst)) }); err != nil {
		return err
	}
	return c.CopyOut(dst, src, s)
}

type faultLauncher struct {
	faultDevice
	l hostLauncher
}

// Launch runs fn in stream order on the wrapped device, unless the call is to fail.
func (d *faultLauncher) Launch(s Stream, fn func()) error { return d.launch(d.l, s, fn) }

type faultCopier struct {
	faultDevice
	c deviceCopier
}

// CopyIn forwards to the wrapped device, unless the call is to fail.
func (d *faultCopier) CopyIn(dst Ptr, src []byte, s Stream) error { return d.copyIn(d.c, dst, src, s) }

// CopyOut forwards to the wrapped device, unless the call is to fail.
func (d *faultCopier) CopyOut(dst []byte, src Ptr, s Stream) error {
	return d.copyOut(d.c, dst, src, s)
}

type faultLauncherCopier struct {
	faultDevice
	l hostLauncher
	c deviceCopier
}

// Launch runs fn in stream order on the wrapped device, unless the call is to fail.
func (d *faultLauncherCopier) Launch(s Stream, fn func()) error { return d.launch(d.l, s, fn) }

// CopyIn forwards to the wrapped device, unless the call is to fail.
func (d *faultLauncherCopier) CopyIn(dst Ptr, src []byte, s Stream) error {
	return d.copyIn(d.c, dst, src, s)
}

// CopyOut forwards to the wrapped device, unless the call is to fail.
func (d *faultLauncherCopier) CopyOut(dst []byte, src Ptr, s Stream) error {
	return d.copyOut(d.c, dst, src, s)
}

type faultKernelCopier struct {
	faultCopier
	k kernelLauncher
}

// LaunchKernel forwards to the wrapped device, unless the call is to fail.
func (d *faultKernelCopier) LaunchKernel(s Stream, fn func() error) error {
	if err := d.f.check(FaultLaunch, d.what("launch kernel")); err != nil {
		return err
	}
	return d.k.LaunchKernel(s, fn)
}
