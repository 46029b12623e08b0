package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine/bytesize"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// Launcher runs host work in stream order; the CPU device is one. Kernels of a host backend run
// inside launched work; a device backend's kernels enqueue on the stream themselves.
type Launcher interface {
	Launch(s alloc.Stream, fn func()) error
}

// RuntimeOptions configure a Runtime.
type RuntimeOptions struct {
	Options
	// Envelope is the range of bindings the runtime admits and reserves for.
	Envelope Envelope
	// Policy decides what happens when an invocation needs more workspace than its pattern's
	// plan holds (R > C): fail (Strict, the default) or allocate it dynamically (Fallback).
	Policy planner.Policy
	// Sessions is how many sessions the reservation check counts (each has its own arena);
	// 0 means 1.
	Sessions int
}

// Runtime is a model loaded for execution on one device: its weights, the plan of its
// envelope (the Level-2 reservation) and the plans of the input-shape patterns seen so far,
// shared by its sessions. It is safe for concurrent use.
type Runtime struct {
	Model   *graph.Model
	Device  alloc.Device
	Alloc   *alloc.Allocator
	Reserve *EnvelopePlan // the envelope's plan; Reserve.ArenaBytes is each session's arena

	opts     RuntimeOptions
	weights  [][]byte // by Value.ID, for initializers
	patterns *planner.Cache[*Planned]

	dynamicAllocs atomic.Int64 // workspaces allocated dynamically under the fallback policy
	dynamicBytes  atomic.Int64
}

// ReservationError reports, at load, that the envelope's arena does not fit: what it needs,
// what is available, and which dim to lower.
type ReservationError struct {
	Needed    int64 // bytes: the arena times the sessions; -1 when that overflows int64
	Available int64 // bytes the device has free, or the limit if smaller
	Limit     int64 // the allocator's byte limit; 0 when none
	Sessions  int
	Worst     Binding // the binding whose plan sets the arena size
	Envelope  Envelope
	Dim       string // the dim that drives the arena, "" if none varies
	Fits      int64  // the largest value of Dim that fits, or -1 if none does
}

func (e *ReservationError) Error() string {
	var sb strings.Builder
	needed := "overflow" // Needed is -1 when the arena times the sessions overflows int64
	if e.Needed >= 0 {
		needed = bytesize.Format(e.Needed)
	}
	fmt.Fprintf(&sb, "reservation does not fit: the envelope %s needs %s of arena", e.Envelope, needed)
	if e.Sessions > 1 {
		fmt.Fprintf(&sb, " (%d sessions)", e.Sessions)
	}
	fmt.Fprintf(&sb, " at %s, but only %s is available", e.Worst, bytesize.Format(e.Available))
	if e.Limit > 0 && e.Limit == e.Available {
		sb.WriteString(" under the limit")
	}
	switch {
	case e.Dim != "" && e.Fits >= e.Envelope[e.Dim].Lo:
		fmt.Fprintf(&sb, "; lower %s (it drives the arena): %s<=%d fits", e.Dim, e.Dim, e.Fits)
	case e.Dim != "":
		fmt.Fprintf(&sb, "; lower %s (it drives the arena), or other dims: even %s=%d does not fit", e.Dim, e.Dim, e.Envelope[e.Dim].Lo)
	default:
		sb.WriteString("; lower the dims or raise the limit")
	}
	return sb.String()
}

// NewRuntime plans m over the envelope and checks, before anything is allocated, that the
// sessions' arenas fit the device and the allocator's limit. Weights must be readable.
func NewRuntime(ctx context.Context, m *graph.Model, dev alloc.Device, al *alloc.Allocator, opts RuntimeOptions) (*Runtime, error) {
	norm, err := opts.Options.normalized()
	if err != nil {
		return nil, err
	}
	opts.Options = norm
	if opts.Sessions <= 0 {
		opts.Sessions = 1
	}
	ep, err := PlanEnvelope(ctx, m, opts.Envelope, opts.Options)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{Model: m, Device: dev, Alloc: al, Reserve: ep, opts: opts,
		weights: make([][]byte, len(m.Values)), patterns: planner.NewCache[*Planned](64)}
	if err := rt.checkFits(ctx); err != nil {
		return nil, err
	}
	for _, v := range m.Initializers {
		b, err := v.Init.Bytes()
		if err != nil {
			return nil, fmt.Errorf("weight %q: %w", v.Name, err)
		}
		rt.weights[v.ID] = b
	}
	// The envelope's worst plan is a pattern too.
	rt.patterns.Put(signature(Binding(ep.Worst.Binding.Dims)), ep.Worst)
	return rt, nil
}

// checkFits compares the sessions' arenas with the device's free memory and the limit.
func (rt *Runtime) checkFits(ctx context.Context) error {
	ep := rt.Reserve
	need, ok := mulOK(ep.ArenaBytes, int64(rt.opts.Sessions))
	free, _, err := rt.Device.MemInfo()
	if err != nil {
		return err
	}
	avail := free
	limit := rt.Alloc.Stats().BytesLimit
	if limit > 0 && limit < avail {
		avail = limit
	}
	if ok && need <= avail {
		return nil
	}
	e := &ReservationError{Needed: need, Available: avail, Limit: limit, Sessions: rt.opts.Sessions,
		Worst: Binding(ep.Worst.Binding.Dims), Envelope: ep.Envelope, Dim: ep.DrivingDim, Fits: -1}
	if !ok {
		e.Needed = -1
	}
	if e.Dim != "" {
		perSession := avail / int64(rt.opts.Sessions)
		e.Fits, _ = LargestFitting(ctx, rt.Model, ep.Envelope, e.Dim, func(p *EnvelopePlan) bool {
			return p.ArenaBytes <= perSession
		}, rt.opts.Options, nil)
	}
	return e
}

func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	c := a * b
	return c, c/b == a
}

// Stats are a runtime's execution counters.
type Stats struct {
	Patterns         planner.CacheStats `json:"patterns"`
	DynamicWorkspace int64              `json:"dynamic_workspaces"`      // fallback allocations
	DynamicBytes     int64              `json:"dynamic_workspace_bytes"` // their bytes
}

// Stats returns the runtime's counters.
func (rt *Runtime) Stats() Stats {
	return Stats{Patterns: rt.patterns.Stats(), DynamicWorkspace: rt.dynamicAllocs.Load(), DynamicBytes: rt.dynamicBytes.Load()}
}

// pattern returns the plan of a binding, planning it on first use.
func (rt *Runtime) pattern(ctx context.Context, dims Binding) (*Planned, error) {
	return rt.patterns.GetOrCompute(ctx, signature(dims), func(ctx context.Context) (*Planned, error) {
		return Plan(ctx, rt.Model, dims, rt.opts.Options)
	})
}

// signature is a binding's pattern key. The model's input shapes are functions of its dims,
// so the dims identify the input-shape pattern.
func signature(dims Binding) planner.Signature {
	return planner.NewSignature(nil, dims)
}

// Session runs a runtime's model on one stream with its own arena. Runs of one session are
// serialized; run sessions concurrently for parallelism. A Session is safe for concurrent use
// (Run takes its lock).
type Session struct {
	rt     *Runtime
	stream alloc.Stream
	arena  *alloc.Arena
	host   []byte // the arena's bytes, for a host device

	mu       sync.Mutex
	programs map[string]*program
	last     *program // the program of the last run, reused while input shapes repeat
	err      error    // the first kernel error of the run in progress, set on the stream
	closed   bool
}

// NewSession creates a stream and reserves the session's arena.
func (rt *Runtime) NewSession() (*Session, error) {
	s, err := rt.Device.NewStream()
	if err != nil {
		return nil, err
	}
	ar, err := rt.Alloc.ReserveArena(max(rt.Reserve.ArenaBytes, 1))
	if err != nil {
		rt.Device.DestroyStream(s)
		return nil, err
	}
	sess := &Session{rt: rt, stream: s, arena: ar, programs: map[string]*program{}}
	if _, ok := rt.Device.(Launcher); ok {
		sess.host = alloc.HostBytes(ar.Base(), ar.Size())
	}
	return sess, nil
}

// Close releases the session's arena and stream.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	// The allocator's DestroyStream waits for the stream's work and destroys it on the device.
	err := s.rt.Alloc.DestroyStream(s.stream)
	return errors.Join(err, s.arena.Release())
}

// Bind derives the binding of the model's dims from input shapes and checks the inputs:
// every input present with its dtype and rank, fixed dims matching, named dims consistent and
// inside the envelope (InputDims, then CheckBinding).
func (rt *Runtime) Bind(inputs map[string]kernels.Tensor) (Binding, error) {
	dims, err := InputDims(rt.Model, inputs)
	if err != nil {
		return nil, err
	}
	if err := CheckBinding(rt.Model, rt.opts.Envelope, dims); err != nil {
		return nil, err
	}
	return dims, nil
}
