package alloc

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"

	"carve.dev/libs/alloc/park"
)

// DefaultCPUMemory is a CPUDevice's total memory when CPUConfig.Memory is zero.
const DefaultCPUMemory int64 = 1 << 30

// CPUConfig configures a CPUDevice.
type CPUConfig struct {
	// Memory is the device's total memory in bytes (rounded up to whole pages per allocation);
	// Malloc fails with ErrOutOfMemory beyond it, so exhaustion is testable. 0 means
	// DefaultCPUMemory.
	Memory int64
}

// CPUDevice is a Device whose memory is host memory and whose streams are goroutines. It is the
// CPU twin of the CUDA device and behaves like one where the allocator can tell:
//
//   - Memory is mapped outside the Go heap, so a Ptr is a stable integer address; HostBytes and
//     Bytes view it as a []byte.
//   - Each stream is a goroutine that runs the funcs queued on it (Launch) one at a time, in
//     order, asynchronously to the caller. Work on different streams really runs concurrently,
//     so a block reused on one stream while another stream still writes it is corrupted, just as
//     on a GPU: stream-ordering bugs are reproducible here. A goroutine waiting for a stream
//     (Synchronize*, Free) runs the stream's next funcs itself whenever the stream's goroutine
//     is not running one, still one at a time and in order: a caller that launches a model's
//     kernels and waits for them then seldom hands work from one thread to another.
//   - Events complete when the work queued before their record has run; WaitEvent makes a
//     stream's later work wait for one.
//   - While a stream is captured, Launch records the func into the capture instead of queuing it;
//     LaunchGraph replays the recorded funcs in capture order (which respects every dependency,
//     because a func is only ever captured after the work it depends on).
//   - A func that panics does not kill its stream: the first panic is kept as the device's fault
//     and returned by every later Synchronize, SynchronizeStream and SynchronizeEvent, like
//     CUDA's sticky errors.
//
// CPUDevice is safe for concurrent use by multiple goroutines.
//
// Lock order inside the device: d.mu, then a stream's mu or a capture's mu, then an event's mu.
// No lock is held while a stream's func runs or while a caller waits for a stream.
type CPUDevice struct {
	total    int64
	pageSize int64
	calls    [numCPUCalls]atomic.Int64
	fault    atomic.Pointer[error] // first panic of a launched func
	workers  sync.WaitGroup        // one per stream goroutine

	mu          sync.RWMutex
	used        int64                 // bytes mapped, page-rounded
	mappings    []cpuMapping          // sorted by base
	streams     map[Stream]*cpuStream // live streams
	draining    map[*cpuStream]bool   // destroyed streams whose goroutine still runs queued work
	events      map[Event]*cpuEvent
	graphs      map[GraphExec]*cpuGraph
	captures    int // captures underway
	lastHandle  uintptr
	lastCapture CaptureID
	closed      bool
}

type cpuMapping struct {
	base Ptr
	mem  []byte
}

// NewCPU returns a CPU device with cfg's memory size.
func NewCPU(cfg CPUConfig) (*CPUDevice, error) {
	if cfg.Memory < 0 {
		return nil, fmt.Errorf("alloc: cpu device memory %d bytes is negative", cfg.Memory)
	}
	if cfg.Memory == 0 {
		cfg.Memory = DefaultCPUMemory
	}
	return &CPUDevice{
		total:    cfg.Memory,
		pageSize: int64(os.Getpagesize()),
		streams:  make(map[Stream]*cpuStream),
		draining: make(map[*cpuStream]bool),
		events:   make(map[Event]*cpuEvent),
		graphs:   make(map[GraphExec]*cpuGraph),
	}, nil
}

// Name returns "cpu".
func (d *CPUDevice) Name() string { return "cpu" }

// errClosed reports use of a closed device.
var errClosed = fmt.Errorf("cpu device is closed: %w", ErrInvalidHandle)

func (d *CPUDevice) handle() uintptr {
	d.lastHandle++
	return d.lastHandle
}

// Malloc maps size bytes, rounded up to whole pages, of zeroed memory.
func (d *CPUDevice) Malloc(size int64) (Ptr, error) {
	d.count(callMalloc)
	if size <= 0 {
		return 0, fmt.Errorf("cpu: malloc of %d bytes: size must be positive", size)
	}
	n := (size + d.pageSize - 1) / d.pageSize * d.pageSize
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return 0, errClosed
	}
	if n > d.total-d.used {
		used := d.used
		d.mu.Unlock()
		return 0, fmt.Errorf("cpu: malloc of %d bytes with %d of %d bytes in use: %w", size, used, d.total, ErrOutOfMemory)
	}
	d.used += n
	d.mu.Unlock()

	mem, err := mapMemory(n)
	if err != nil {
		d.mu.Lock()
		d.used -= n
		d.mu.Unlock()
		return 0, fmt.Errorf("cpu: malloc of %d bytes: mmap: %v: %w", size, err, ErrOutOfMemory)
	}
	p := Ptr(uintptrOf(mem))
	d.mu.Lock()
	i := sort.Search(len(d.mappings), func(i int) bool { return d.mappings[i].base > p })
	d.mappings = append(d.mappings, cpuMapping{})
	copy(d.mappings[i+1:], d.mappings[i:])
	d.mappings[i] = cpuMapping{base: p, mem: mem}
	d.mu.Unlock()
	return p, nil
}

// Free unmaps memory returned by Malloc. Like cudaFree it first waits for all work queued on
// every stream, so queued work never touches unmapped memory.
func (d *CPUDevice) Free(p Ptr) error {
	d.count(callFree)
	d.mu.Lock()
	if d.captures > 0 {
		d.mu.Unlock()
		return fmt.Errorf("cpu: free %#x: %w", uintptr(p), ErrCaptureUnsupported)
	}
	i := sort.Search(len(d.mappings), func(i int) bool { return d.mappings[i].base >= p })
	if i == len(d.mappings) || d.mappings[i].base != p {
		d.mu.Unlock()
		return fmt.Errorf("cpu: free %#x: not an address returned by Malloc: %w", uintptr(p), ErrInvalidHandle)
	}
	m := d.mappings[i]
	d.mappings = append(d.mappings[:i], d.mappings[i+1:]...)
	waits := d.pendingLocked()
	d.mu.Unlock()

	waitAll(waits)
	err := unmapMemory(m.mem)
	d.mu.Lock()
	d.used -= int64(len(m.mem))
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cpu: free %#x: munmap: %w", uintptr(p), err)
	}
	return nil
}

// MemInfo reports unmapped and total memory.
func (d *CPUDevice) MemInfo() (free, total int64, err error) {
	d.count(callMemInfo)
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.total - d.used, d.total, nil
}

// Bytes views n bytes at p, checking that they lie inside one live allocation.
func (d *CPUDevice) Bytes(p Ptr, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("cpu: view of %d bytes: negative size", n)
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	i := sort.Search(len(d.mappings), func(i int) bool { return d.mappings[i].base > p }) - 1
	if i < 0 {
		return nil, fmt.Errorf("cpu: view %#x+%d: not device memory: %w", uintptr(p), n, ErrInvalidHandle)
	}
	m := d.mappings[i]
	off := int64(p - m.base)
	if off+n > int64(len(m.mem)) {
		return nil, fmt.Errorf("cpu: view %#x+%d: outside the allocation at %#x of %d bytes: %w",
			uintptr(p), n, uintptr(m.base), len(m.mem), ErrInvalidHandle)
	}
	return m.mem[off : off+n : off+n], nil
}

// Synchronize waits for all work queued on every stream, including destroyed streams that still
// drain their queues.
func (d *CPUDevice) Synchronize() error {
	d.count(callSynchronize)
	d.mu.RLock()
	if d.captures > 0 {
		d.mu.RUnlock()
		return fmt.Errorf("cpu: synchronize: %w", ErrCaptureUnsupported)
	}
	waits := d.pendingLocked()
	d.mu.RUnlock()
	waitAll(waits)
	return d.faultErr()
}

// streamMark is a point in a stream's queue: the stream's first seq ops.
type streamMark struct {
	s   *cpuStream
	seq uint64
}

// pendingLocked marks the current end of every stream's queue. d.mu must be held.
func (d *CPUDevice) pendingLocked() []streamMark {
	waits := make([]streamMark, 0, len(d.streams)+len(d.draining))
	for _, s := range d.streams {
		waits = append(waits, streamMark{s, s.tail()})
	}
	for s := range d.draining {
		waits = append(waits, streamMark{s, s.tail()})
	}
	return waits
}

func waitAll(marks []streamMark) {
	for _, m := range marks {
		m.s.waitFor(m.seq)
	}
}

// NewStream starts a stream goroutine.
func (d *CPUDevice) NewStream() (Stream, error) {
	d.count(callNewStream)
	// The stream's goroutine and a caller waiting for it may both block a thread (see
	// cpuStream); runStream releases them.
	park.Reserve(2)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		park.Release(2)
		return 0, errClosed
	}
	s := &cpuStream{id: Stream(d.handle()), d: d}
	d.streams[s.id] = s
	d.workers.Add(1)
	go d.runStream(s)
	return s.id, nil
}

// DestroyStream releases s; its goroutine exits after running the work already queued.
func (d *CPUDevice) DestroyStream(h Stream) error {
	d.count(callDestroyStream)
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.streamLocked(h)
	if err != nil {
		return err
	}
	if s.capture != nil {
		return fmt.Errorf("cpu: destroy stream %d: %w", h, ErrCaptureUnsupported)
	}
	delete(d.streams, h)
	d.draining[s] = true
	s.close()
	return nil
}

// SynchronizeStream waits for all work queued on s.
func (d *CPUDevice) SynchronizeStream(h Stream) error {
	d.count(callSynchronizeStream)
	d.mu.RLock()
	s, err := d.streamLocked(h)
	if err == nil && s.capture != nil {
		err = fmt.Errorf("cpu: synchronize stream %d: %w", h, ErrCaptureUnsupported)
	}
	var seq uint64
	if err == nil {
		seq = s.tail()
	}
	d.mu.RUnlock()
	if err != nil {
		return err
	}
	s.waitFor(seq)
	return d.faultErr()
}

// Launch queues fn on stream s; fn runs after all work queued before it, on s's goroutine or on
// one waiting for s. While
// s is captured, fn is recorded into the capture instead. fn must not block on work queued
// after it on the same stream, and must not call the device's waiting methods (Synchronize*,
// Free) or an allocator over the device: they would wait for fn itself.
func (d *CPUDevice) Launch(h Stream, fn func()) error {
	d.count(callLaunch)
	if fn == nil {
		return errors.New("cpu: launch of a nil func")
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, err := d.streamLocked(h)
	if err != nil {
		return err
	}
	if c := s.capture; c != nil {
		c.add(fn)
		return nil
	}
	s.enqueue(fn)
	return nil
}

// NewEvent creates an event that counts as complete until it is recorded.
func (d *CPUDevice) NewEvent() (Event, error) {
	d.count(callNewEvent)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, errClosed
	}
	e := Event(d.handle())
	d.events[e] = &cpuEvent{}
	return e, nil
}

// DestroyEvent releases e.
func (d *CPUDevice) DestroyEvent(h Event) error {
	d.count(callDestroyEvent)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.events[h]; !ok {
		return fmt.Errorf("cpu: destroy event %d: %w", h, ErrInvalidHandle)
	}
	delete(d.events, h)
	return nil
}

// RecordEvent marks the current end of s's queue in e.
func (d *CPUDevice) RecordEvent(he Event, hs Stream) error {
	d.count(callRecordEvent)
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, err := d.streamLocked(hs)
	if err != nil {
		return err
	}
	e, err := d.eventLocked(he)
	if err != nil {
		return err
	}
	if c := s.capture; c != nil {
		e.set(nil, 0, c)
		return nil
	}
	e.set(s, s.tail(), nil)
	return nil
}

// WaitEvent makes work queued on s after this call wait for e. Waiting on an event recorded in
// a capture makes s join that capture.
func (d *CPUDevice) WaitEvent(hs Stream, he Event) error {
	d.count(callWaitEvent)
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.streamLocked(hs)
	if err != nil {
		return err
	}
	e, err := d.eventLocked(he)
	if err != nil {
		return err
	}
	src, seq, c := e.get()
	switch {
	case c != nil && s.capture == nil:
		s.capture = c
		c.join(s)
		return nil
	case c != nil && s.capture == c:
		return nil // ordering inside one capture is capture order
	case c != nil || s.capture != nil:
		return fmt.Errorf("cpu: stream %d waits on event %d across a capture boundary: %w", hs, he, ErrCaptureUnsupported)
	case src == nil:
		return nil // never recorded: complete
	}
	s.enqueue(func() { src.waitFor(seq) })
	return nil
}

// QueryEvent reports whether e has completed.
func (d *CPUDevice) QueryEvent(he Event) (bool, error) {
	d.count(callQueryEvent)
	d.mu.RLock()
	e, err := d.eventLocked(he)
	d.mu.RUnlock()
	if err != nil {
		return false, err
	}
	s, seq, c := e.get()
	if c != nil {
		return false, fmt.Errorf("cpu: query event %d recorded in a capture: %w", he, ErrCaptureUnsupported)
	}
	return s == nil || s.done.Load() >= seq, nil
}

// SynchronizeEvent waits until e has completed.
func (d *CPUDevice) SynchronizeEvent(he Event) error {
	d.count(callSynchronizeEvent)
	d.mu.RLock()
	e, err := d.eventLocked(he)
	d.mu.RUnlock()
	if err != nil {
		return err
	}
	s, seq, c := e.get()
	if c != nil {
		return fmt.Errorf("cpu: synchronize event %d recorded in a capture: %w", he, ErrCaptureUnsupported)
	}
	if s != nil {
		s.waitFor(seq)
	}
	return d.faultErr()
}

// BeginCapture starts capturing s.
func (d *CPUDevice) BeginCapture(h Stream) error {
	d.count(callBeginCapture)
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.streamLocked(h)
	if err != nil {
		return err
	}
	if s.capture != nil {
		return fmt.Errorf("cpu: begin capture on stream %d: already capturing: %w", h, ErrCaptureUnsupported)
	}
	d.lastCapture++
	s.capture = &cpuCapture{id: d.lastCapture, origin: s, streams: []*cpuStream{s}}
	d.captures++
	return nil
}

// EndCapture ends the capture that s began; streams that joined it leave it too.
func (d *CPUDevice) EndCapture(h Stream) (GraphExec, error) {
	d.count(callEndCapture)
	d.mu.Lock()
	defer d.mu.Unlock()
	s, err := d.streamLocked(h)
	if err != nil {
		return 0, err
	}
	c := s.capture
	if c == nil {
		return 0, fmt.Errorf("cpu: end capture on stream %d: %w", h, ErrNotCapturing)
	}
	if c.origin != s {
		return 0, fmt.Errorf("cpu: end capture on stream %d, which joined capture %d begun on stream %d: %w",
			h, c.id, c.origin.id, ErrNotCapturing)
	}
	c.mu.Lock()
	for _, js := range c.streams {
		js.capture = nil
	}
	nodes := c.nodes
	c.nodes = nil
	c.mu.Unlock()
	d.captures--
	g := GraphExec(d.handle())
	d.graphs[g] = newCPUGraph(nodes)
	return g, nil
}

// CaptureInfo reports whether s is being captured.
func (d *CPUDevice) CaptureInfo(h Stream) (CaptureID, bool, error) {
	d.count(callCaptureInfo)
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, err := d.streamLocked(h)
	if err != nil {
		return 0, false, err
	}
	if s.capture == nil {
		return 0, false, nil
	}
	return s.capture.id, true, nil
}

// LaunchGraph queues one replay of g on s: g's funcs run in capture order.
func (d *CPUDevice) LaunchGraph(hg GraphExec, hs Stream) error {
	d.count(callLaunchGraph)
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, err := d.streamLocked(hs)
	if err != nil {
		return err
	}
	g, ok := d.graphs[hg]
	if !ok {
		return fmt.Errorf("cpu: launch graph %d: %w", hg, ErrInvalidHandle)
	}
	if c := s.capture; c != nil {
		c.add(g.replay)
		return nil
	}
	s.enqueue(g.replay)
	return nil
}

// DestroyGraph releases g; replays already queued still run.
func (d *CPUDevice) DestroyGraph(h GraphExec) error {
	d.count(callDestroyGraph)
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.graphs[h]; !ok {
		return fmt.Errorf("cpu: destroy graph %d: %w", h, ErrInvalidHandle)
	}
	delete(d.graphs, h)
	return nil
}

// Close destroys every stream, waits for their queued work, and unmaps all memory. The device
// is unusable afterwards.
func (d *CPUDevice) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	for h, s := range d.streams {
		delete(d.streams, h)
		d.draining[s] = true
		s.close()
	}
	d.mu.Unlock()
	d.workers.Wait()

	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	for _, m := range d.mappings {
		if err := unmapMemory(m.mem); err != nil {
			errs = append(errs, err)
		}
		d.used -= int64(len(m.mem))
	}
	d.mappings = nil
	d.events = map[Event]*cpuEvent{}
	d.graphs = map[GraphExec]*cpuGraph{}
	return errors.Join(errs...)
}

// Calls returns how many times each method has been called so far.
func (d *CPUDevice) Calls() CPUCalls {
	var c CPUCalls
	fields := c.fields()
	for i := range fields {
		*fields[i] = d.calls[i].Load()
	}
	return c
}

// Fault returns the first panic of a launched func, or nil.
func (d *CPUDevice) Fault() error { return d.faultErr() }

func (d *CPUDevice) faultErr() error {
	if p := d.fault.Load(); p != nil {
		return *p
	}
	return nil
}

func (d *CPUDevice) count(c cpuCall) { d.calls[c].Add(1) }

func (d *CPUDevice) streamLocked(h Stream) (*cpuStream, error) {
	if d.closed {
		return nil, errClosed
	}
	s, ok := d.streams[h]
	if !ok {
		return nil, fmt.Errorf("cpu: stream %d: %w", h, ErrInvalidHandle)
	}
	return s, nil
}

func (d *CPUDevice) eventLocked(h Event) (*cpuEvent, error) {
	e, ok := d.events[h]
	if !ok {
		return nil, fmt.Errorf("cpu: event %d: %w", h, ErrInvalidHandle)
	}
	return e, nil
}

// runStream is s's goroutine: it runs queued funcs in order until s is closed and drained.
func (d *CPUDevice) runStream(s *cpuStream) {
	defer d.workers.Done()
	defer park.Release(2)
	park.PrepareSleep() // waiting for work may sleep (park.Event.Await)
	for {
		fn, ok := s.next()
		if !ok {
			break
		}
		d.run(fn)
		s.finish()
	}
	d.mu.Lock()
	delete(d.draining, s)
	d.mu.Unlock()
}

// run runs one func, turning a panic into the device's sticky fault.
func (d *CPUDevice) run(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			err := fmt.Errorf("cpu: launched func panicked: %v", r)
			d.fault.CompareAndSwap(nil, &err)
		}
	}()
	fn()
}

// cpuStream is one stream's queue and progress counter.
//
// Whoever runs one of its funcs holds running from taking it off the queue until it has
// finished: the stream's goroutine, or a goroutine waiting for the stream (waitFor), which takes
// the stream's work over while the goroutine is not running it. So the funcs run one at a time,
// in order.
//
// Its goroutine and the goroutines waiting for it wait through park.Event's Await rather than a
// condition variable, and its lock is spun on, not parked on: a run of a model launches and
// waits on a stream many times, and every Go blocking wait takes a sudog from a per-processor
// cache that, with many processors, the runtime refills by allocating now and then (see package
// park).
type cpuStream struct {
	id Stream
	d  *CPUDevice // runs the funcs (a panic becomes the device's fault)

	mu       park.SpinLock
	queue    []func()
	head     int           // queue[head:] is pending
	enqueued uint64        // ops ever queued
	done     atomic.Uint64 // ops finished
	closed   bool
	running  atomic.Bool // a goroutine is running one of the funcs
	work     park.Event  // moves when the queue gains work, the stream closes or running is let go
	progress park.Event  // moves when an op finishes

	capture *cpuCapture // guarded by the device's mu
}

// tail is the sequence number of the last op queued so far.
func (s *cpuStream) tail() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueued
}

func (s *cpuStream) enqueue(fn func()) {
	s.mu.Lock()
	if s.head > 0 && s.head >= len(s.queue)/2 {
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue = s.queue[:n]
		s.head = 0
	}
	s.queue = append(s.queue, fn)
	s.enqueued++
	s.mu.Unlock()
	s.work.Notify()
}

// take takes the next func off the queue together with running, if nobody holds running and the
// queue is not empty. With last set, a closed and empty stream gives its goroutine running for
// good, and drained reports it: the goroutine is done.
func (s *cpuStream) take(last bool) (fn func(), ok, drained bool) {
	if !s.running.CompareAndSwap(false, true) {
		return nil, false, false
	}
	s.mu.Lock()
	if s.head < len(s.queue) {
		fn, ok = s.queue[s.head], true
		s.queue[s.head] = nil
		s.head++
	} else {
		drained = last && s.closed
	}
	s.mu.Unlock()
	if !ok && !drained {
		s.running.Store(false)
	}
	return fn, ok, drained
}

// takeable reports whether take could take a func now.
func (s *cpuStream) takeable() bool {
	if s.running.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head < len(s.queue)
}

// next waits for the stream's goroutine's next func; false: the stream is closed and drained.
func (s *cpuStream) next() (func(), bool) {
	var fn func()
	var ok, drained bool
	s.work.Await(func() bool {
		fn, ok, drained = s.take(true)
		return ok || drained
	})
	return fn, ok
}

// finish counts the func taken last as done and lets running go.
func (s *cpuStream) finish() {
	s.done.Add(1)
	s.running.Store(false)
	s.progress.Notify()
	s.work.Notify()
}

func (s *cpuStream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.work.Notify()
}

// waitFor returns once the first seq ops of s have finished, running them itself while the
// stream's goroutine is not.
func (s *cpuStream) waitFor(seq uint64) {
	for s.done.Load() < seq {
		if fn, ok, _ := s.take(false); ok {
			s.d.run(fn)
			s.finish()
			continue
		}
		s.progress.Await(func() bool { return s.done.Load() >= seq || s.takeable() })
	}
}

// cpuEvent is the stream position an event was last recorded at.
type cpuEvent struct {
	mu      sync.Mutex
	stream  *cpuStream // nil: never recorded, or recorded in a capture
	seq     uint64
	capture *cpuCapture // non-nil: recorded in this capture
}

func (e *cpuEvent) set(s *cpuStream, seq uint64, c *cpuCapture) {
	e.mu.Lock()
	e.stream, e.seq, e.capture = s, seq, c
	e.mu.Unlock()
}

func (e *cpuEvent) get() (*cpuStream, uint64, *cpuCapture) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stream, e.seq, e.capture
}

// cpuCapture is the work recorded so far by one capture.
type cpuCapture struct {
	id     CaptureID
	origin *cpuStream

	mu      sync.Mutex
	nodes   []func()
	streams []*cpuStream // origin and joined streams
}

func (c *cpuCapture) add(fn func()) {
	c.mu.Lock()
	c.nodes = append(c.nodes, fn)
	c.mu.Unlock()
}

func (c *cpuCapture) join(s *cpuStream) {
	c.mu.Lock()
	c.streams = append(c.streams, s)
	c.mu.Unlock()
}

type cpuGraph struct {
	nodes  []func()
	replay func() // runs nodes; made once, so that a launch allocates nothing
}

func newCPUGraph(nodes []func()) *cpuGraph {
	return &cpuGraph{nodes: nodes, replay: func() {
		for _, fn := range nodes {
			fn()
		}
	}}
}

type cpuCall int

const (
	callMalloc cpuCall = iota
	callFree
	callMemInfo
	callSynchronize
	callNewStream
	callDestroyStream
	callSynchronizeStream
	callNewEvent
	callDestroyEvent
	callRecordEvent
	callWaitEvent
	callQueryEvent
	callSynchronizeEvent
	callBeginCapture
	callEndCapture
	callCaptureInfo
	callLaunchGraph
	callDestroyGraph
	callLaunch
	numCPUCalls
)

// CPUCalls counts calls to a CPUDevice's methods.
type CPUCalls struct {
	Malloc, Free, MemInfo, Synchronize             int64
	NewStream, DestroyStream, SynchronizeStream    int64
	NewEvent, DestroyEvent, RecordEvent, WaitEvent int64
	QueryEvent, SynchronizeEvent                   int64
	BeginCapture, EndCapture, CaptureInfo          int64
	LaunchGraph, DestroyGraph, Launch              int64
}

func (c *CPUCalls) fields() [numCPUCalls]*int64 {
	return [numCPUCalls]*int64{
		&c.Malloc, &c.Free, &c.MemInfo, &c.Synchronize,
		&c.NewStream, &c.DestroyStream, &c.SynchronizeStream,
		&c.NewEvent, &c.DestroyEvent, &c.RecordEvent, &c.WaitEvent,
		&c.QueryEvent, &c.SynchronizeEvent,
		&c.BeginCapture, &c.EndCapture, &c.CaptureInfo,
		&c.LaunchGraph, &c.DestroyGraph, &c.Launch,
	}
}

// Device returns the number of calls to Device interface methods, that is all calls except
// Launch.
func (c CPUCalls) Device() int64 {
	var n int64
	for _, f := range c.fields() {
		n += *f
	}
	return n - c.Launch
}

var _ Device = (*CPUDevice)(nil)
