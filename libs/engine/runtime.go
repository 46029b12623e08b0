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

// DefaultPrograms is how many programs (patterns bound to its arena) a session keeps when
// RuntimeOptions.Programs is 0.
const DefaultPrograms = 16

// RuntimeOptions configure a Runtime.
type RuntimeOptions struct {
	// Options say how the model is planned. A zero Target means the backend's; Target, when set,
	// must name the backend's kind.
	Options
	// Envelope is the range of bindings the runtime admits and reserves for.
	Envelope Envelope
	// Policy decides what happens when an invocation needs more workspace than its pattern's
	// plan holds (R > C): fail (Strict, the default) or allocate it dynamically (Fallback).
	Policy planner.Policy
	// Sessions is how many sessions the reservation check counts (each has its own arena);
	// 0 means 1.
	Sessions int
	// Programs bounds the programs each session keeps, least recently used first out; 0 means
	// DefaultPrograms.
	Programs int
	// Graphs captures each program's kernels into a replayable graph (a CUDA graph on a GPU) at
	// its first run and replays it afterwards; inputs are copied into the arena before and outputs
	// out after, outside the graph. Each capture gets the allocator's fresh graph-private pool, so
	// no capture reuses an earlier one's memory.
	Graphs bool
	// State are buffers each session keeps for its whole life (see StateBuffer); the values they
	// hold are added to Options.External.
	State []StateBuffer
	// DeviceOutputs are graph outputs a run leaves where the kernels wrote them, on a discrete
	// device: Run returns them with Addr set and no Data, copies nothing, and the caller reads
	// the bytes it needs with Session.CopyOut before the next run. A decoder's logits are the
	// case: one row per sequence is read of a prompt's [batch, seq, vocab]. On a host-visible
	// backend they are returned as every output is, aliasing the arena.
	DeviceOutputs []string
	// Tight reserves the tight plan (tight.go): kernels whose workspace is a cap get what the
	// device says they need at the envelope's candidates instead, measured at load.
	Tight bool
}

// Runtime is a model loaded for execution on one backend's device: its weights, resident on the
// device once and shared by every session, the plan of its envelope (the Level-2 reservation)
// and the plans of the input-shape patterns seen so far, shared by its sessions. It is safe for
// concurrent use.
type Runtime struct {
	Model   *graph.Model
	Backend kernels.Backend
	Alloc   *alloc.Allocator
	Reserve *EnvelopePlan // the envelope's plan; Reserve.ArenaBytes is each session's arena

	lost atomic.Pointer[DeviceLostError] // set by the first run that left the device unusable (lost.go)

	opts       RuntimeOptions
	launcher   kernels.Launcher     // Backend as a Launcher (host-run kernels); nil if it is not one
	weights    []weight             // by Value.ID, for the load-time values: initializers and Constant outputs
	resident   *alloc.Arena         // the weights and constants in a discrete device's memory; nil on host-visible ones
	inputIndex map[*graph.Value]int // each graph input's index in Model.Inputs
	patterns   *planner.Cache[*Planned]
	tight      tightCache // the tight plan, once computed (Tight)

	mu             sync.Mutex
	sessions       map[*Session]struct{} // open sessions, for Stats
	closedPrograms planner.CacheStats    // program counters of closed sessions

	dynamicAllocs atomic.Int64 // workspaces allocated dynamically under the fallback policy
	dynamicBytes  atomic.Int64
	captures      atomic.Int64 // programs captured into graphs
	replays       atomic.Int64 // graph replays

	stateSlots map[string]stateSlot // each state buffer's place in a session's state reservation
	stateOf    map[int]int          // by Value.ID: the state buffer (index in opts.State) holding it
	stateTotal int64                // the state reservation's size before rounding; 0 without state
}

// weight is where one load-time value's bytes are (a weight's or a Constant's, resident.go): host
// bytes (a weight's mapped from the model file), and on a discrete device their resident copy.
type weight struct {
	host []byte
	ptr  alloc.Ptr // 0 when the weight is read on the host only
}

// ReservationError reports, at load, that the weights and the sessions' arenas do not fit: what
// they need, what is available, and which dim to lower.
type ReservationError struct {
	Needed    int64 // bytes: device weights plus the arena times the sessions; -1 on overflow
	Weights   int64 // bytes of Needed that the weights take (0 when they stay in host memory)
	Arena     int64 // one session's arena, as reserved (alloc.ReservedSize)
	State     int64 // one session's state buffers, as reserved (Runtime.StateBytes); 0 without
	Available int64 // bytes the device has free, or the limit if smaller
	Limit     int64 // the allocator's byte limit; 0 when none
	Sessions  int
	Worst     Binding // the binding whose plan sets the arena size
	Envelope  Envelope
	Dim       string // the dim that drives the arena, "" if none varies
	Fits      int64  // the largest value of Dim that fits, or -1 if none does
}

// Short is how many bytes are missing; -1 when Needed overflowed.
func (e *ReservationError) Short() int64 {
	if e.Needed < 0 {
		return -1
	}
	return e.Needed - e.Available
}

func (e *ReservationError) Error() string {
	var sb strings.Builder
	needed := "overflow" // Needed is -1 when the arena times the sessions overflows int64
	if e.Needed >= 0 {
		needed = bytesize.Format(e.Needed)
	}
	fmt.Fprintf(&sb, "reservation does not fit: the envelope %s needs %s", e.Envelope, needed)
	perSession := "arena " + bytesize.Format(e.Arena)
	if e.State > 0 {
		perSession = fmt.Sprintf("(arena %s + state %s)", bytesize.Format(e.Arena), bytesize.Format(e.State))
	}
	switch {
	case e.Weights > 0 && e.Sessions > 1:
		fmt.Fprintf(&sb, " (weights %s + %d sessions x %s)", bytesize.Format(e.Weights), e.Sessions, perSession)
	case e.Weights > 0:
		fmt.Fprintf(&sb, " (weights %s + %s)", bytesize.Format(e.Weights), perSession)
	case e.State > 0 && e.Sessions > 1:
		fmt.Fprintf(&sb, " (%d sessions x %s)", e.Sessions, perSession)
	case e.State > 0:
		fmt.Fprintf(&sb, " (%s)", perSession)
	case e.Sessions > 1:
		fmt.Fprintf(&sb, " of arena (%d sessions)", e.Sessions)
	default:
		sb.WriteString(" of arena")
	}
	fmt.Fprintf(&sb, " at %s, but only %s is available", e.Worst, bytesize.Format(e.Available))
	if e.Limit > 0 && e.Limit == e.Available {
		sb.WriteString(" under the limit")
	}
	if short := e.Short(); short > 0 {
		fmt.Fprintf(&sb, " (%s short)", bytesize.Format(short))
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

// Is makes a ReservationError an out-of-memory error.
func (e *ReservationError) Is(target error) bool { return target == alloc.ErrOutOfMemory }

// NewRuntime plans m over the envelope for the backend and checks, before anything is allocated
// or uploaded, that the weights (on a discrete device) and the sessions' arenas fit the device and
// the allocator's limit; then it makes the weights resident. al must allocate from be's device.
func NewRuntime(ctx context.Context, m *graph.Model, be kernels.Backend, al *alloc.Allocator, opts RuntimeOptions) (*Runtime, error) {
	if al.Device() != be.Device() {
		return nil, fmt.Errorf("engine: the allocator's device %s is not the backend's %s", al.Device().Name(), be.Device().Name())
	}
	if opts.Target.Backend == "" {
		opts.Target = be.Target()
	} else if opts.Target.Backend != be.Target().Backend {
		return nil, fmt.Errorf("engine: target %s is not for backend %s (%s)", opts.Target, be.Name(), be.Target().Backend)
	}
	if opts.Registry == nil {
		opts.Registry = be.Registry()
	}
	norm, err := opts.Options.normalized()
	if err != nil {
		return nil, err
	}
	opts.Options = norm
	if opts.Sessions <= 0 {
		opts.Sessions = 1
	}
	if opts.Programs <= 0 {
		opts.Programs = DefaultPrograms
	}
	slots, total, held, err := stateLayout(m, opts.State)
	if err != nil {
		return nil, err
	}
	if len(opts.State) > 0 {
		opts.External = HeldValues(opts.State)
	}
	ep, err := PlanEnvelope(ctx, m, opts.Envelope, opts.Options)
	if err != nil {
		return nil, err
	}
	var tight *TightPlan
	if opts.Tight {
		if tight, err = TightenEnvelope(ctx, m, be, ep, opts.Options); err != nil {
			return nil, err
		}
		ep, opts.Options = tight.Plan, tight.options
	}
	rt := &Runtime{Model: m, Backend: be, Alloc: al, Reserve: ep, opts: opts,
		weights: make([]weight, len(m.Values)), patterns: planner.NewCache[*Planned](planner.DefaultCacheSize),
		sessions: map[*Session]struct{}{}, stateSlots: slots, stateOf: held, stateTotal: total}
	rt.tight.plan = tight
	rt.launcher, _ = be.(kernels.Launcher)
	rt.inputIndex = make(map[*graph.Value]int, len(m.Inputs))
	for i, v := range m.Inputs {
		rt.inputIndex[v] = i
	}
	// Prepared before anything is reserved: what the kernels make on the device (cuDNN's
	// handle) is then outside what checkFits finds free, and a failure leaves nothing behind.
	if err := rt.prepare(ep.Worst); err != nil {
		return nil, err
	}
	var layout []int64
	var layoutSize int64
	if !opts.Target.HostVisible() {
		// Every value a kernel reads must be resident or planned (resident.go): check it before
		// anything is reserved or uploaded.
		var err error
		if layout, layoutSize, err = deviceWeightLayout(m); err != nil {
			return nil, err
		}
		if err := rt.checkDeviceReads(ep.Worst, layout); err != nil {
			return nil, err
		}
	}
	if err := rt.checkFits(ctx); err != nil {
		return nil, err
	}
	for _, v := range loadTimeValues(m) {
		b, err := loadTimeBytes(m, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", loadTimeName(v), err)
		}
		rt.weights[v.ID].host = b
	}
	if !opts.Target.HostVisible() {
		if err := rt.upload(layout, layoutSize); err != nil {
			return nil, err
		}
	}
	// The envelope's worst plan is a pattern too.
	rt.patterns.Put(signature(Binding(ep.Worst.Binding.Dims)), ep.Worst)
	return rt, nil
}

// Preparer is implemented by kernel instances that make something on the device ahead of their
// first Run (libs/kernels/cuda's Conv: cuDNN's handle, descriptors and its algorithms ranked by
// measurement), which a first Run inside a stream capture could not make. The runtime prepares
// every plan before it runs: the worst at load, so that a failure there fails the load, and
// each other pattern when it is first planned, before it is captured.
type Preparer interface {
	Prepare(b kernels.Backend) error
}

// prepare prepares every instance of p that is a Preparer on rt's backend.
func (rt *Runtime) prepare(p *Planned) error {
	for _, st := range p.Steps {
		if pr, ok := st.Instance.(Preparer); ok {
			if err := pr.Prepare(rt.Backend); err != nil {
				return &PlanError{Node: st.Node, Binding: Binding(p.Binding.Dims), Err: err}
			}
		}
	}
	return nil
}

// upload makes the weights and constants that kernels read resident in the device's memory: one
// reservation laid out by deviceWeightLayout (offsets), filled by stream-ordered copies from the
// host bytes (which stay mapped, or in the model, so the copies need no staging of their own).
func (rt *Runtime) upload(offsets []int64, size int64) (err error) {
	if size == 0 {
		return nil
	}
	if alloc.ReservedSize(size) != rt.Reserve.DeviceWeightBytes {
		return fmt.Errorf("engine: weight layout of %d bytes differs from the plan's %d (a bug)", size, rt.Reserve.DeviceWeightBytes)
	}
	ar, err := rt.Alloc.ReserveArena(size)
	if err != nil {
		return fmt.Errorf("weights and constants (%s): %w", bytesize.Format(size), err)
	}
	dev := rt.Backend.Device()
	s, err := dev.NewStream()
	if err != nil {
		return errors.Join(err, ar.Release())
	}
	defer func() {
		err = errors.Join(err, dev.DestroyStream(s))
		if err != nil {
			err = errors.Join(err, ar.Release())
		}
	}()
	for _, v := range loadTimeValues(rt.Model) {
		off := offsets[v.ID]
		if off < 0 {
			continue
		}
		p := ar.Base().Add(off)
		if err := rt.Backend.CopyIn(p, rt.weights[v.ID].host, s); err != nil {
			return fmt.Errorf("%s: %w", loadTimeName(v), err)
		}
		rt.weights[v.ID].ptr = p
	}
	if err := dev.SynchronizeStream(s); err != nil {
		return fmt.Errorf("uploading the weights and constants: %w", err)
	}
	rt.resident = ar
	return nil
}

// Close releases the resident weights. Sessions must be closed first.
func (rt *Runtime) Close() error {
	rt.mu.Lock()
	open := len(rt.sessions)
	rt.mu.Unlock()
	if open > 0 {
		return fmt.Errorf("engine: runtime closed with %d sessions open", open)
	}
	if rt.resident == nil {
		return nil
	}
	ar := rt.resident
	rt.resident = nil
	return ar.Release()
}

// checkFits compares the device weights plus the sessions' arenas with the device's free memory
// and the limit.
func (rt *Runtime) checkFits(ctx context.Context) error {
	ep := rt.Reserve
	perSession, ok := graph.CheckedAdd(alloc.ReservedSize(max(ep.ArenaBytes, 1)), rt.StateBytes())
	arenas, okMul := graph.CheckedMul(perSession, int64(rt.opts.Sessions))
	ok = ok && okMul
	need := arenas + ep.DeviceWeightBytes
	ok = ok && need >= arenas
	free, _, err := rt.Backend.Device().MemInfo()
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
	e := &ReservationError{Needed: need, Weights: ep.DeviceWeightBytes, Arena: alloc.ReservedSize(max(ep.ArenaBytes, 1)), State: rt.StateBytes(), Available: avail, Limit: limit,
		Sessions: rt.opts.Sessions, Worst: Binding(ep.Worst.Binding.Dims), Envelope: ep.Envelope, Dim: ep.DrivingDim, Fits: -1}
	if !ok {
		e.Needed = -1
	}
	if e.Dim != "" && avail > ep.DeviceWeightBytes {
		perSession := (avail-ep.DeviceWeightBytes)/int64(rt.opts.Sessions) - rt.StateBytes()
		e.Fits, _ = LargestFitting(ctx, rt.Model, ep.Envelope, e.Dim, func(p *EnvelopePlan) bool {
			return p.ArenaBytes <= perSession
		}, rt.opts.Options, nil)
	}
	return e
}

// Stats are a runtime's execution counters.
type Stats struct {
	Patterns         planner.CacheStats   `json:"patterns"`                // plans by input-shape pattern, shared by the sessions
	Programs         planner.CacheStats   `json:"programs"`                // patterns bound to a session's arena, summed over sessions
	DynamicWorkspace int64                `json:"dynamic_workspaces"`      // fallback allocations
	DynamicBytes     int64                `json:"dynamic_workspace_bytes"` // their bytes
	Copies           kernels.CopyCounters `json:"copies"`                  // the backend's host-device copies
	ResidentWeights  int64                `json:"resident_weight_bytes"`   // device memory holding weights
	GraphCaptures    int64                `json:"graph_captures"`          // programs captured into graphs
	GraphReplays     int64                `json:"graph_replays"`           // their replays
}

// Stats returns the runtime's counters.
func (rt *Runtime) Stats() Stats {
	st := Stats{Patterns: rt.patterns.Stats(), DynamicWorkspace: rt.dynamicAllocs.Load(), DynamicBytes: rt.dynamicBytes.Load(),
		Copies: rt.Backend.Counters(), ResidentWeights: rt.Reserve.DeviceWeightBytes,
		GraphCaptures: rt.captures.Load(), GraphReplays: rt.replays.Load()}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	st.Programs = rt.closedPrograms
	for s := range rt.sessions {
		addCacheStats(&st.Programs, s.programs.Stats())
	}
	return st
}

func addCacheStats(sum *planner.CacheStats, c planner.CacheStats) {
	sum.Hits += c.Hits
	sum.Misses += c.Misses
	sum.Computes += c.Computes
	sum.Shared += c.Shared
	sum.Evictions += c.Evictions
	sum.Len += c.Len
}

// pattern returns the plan of a binding, planning it on first use.
func (rt *Runtime) pattern(ctx context.Context, dims Binding) (*Planned, error) {
	return rt.patterns.GetOrCompute(ctx, signature(dims), func(ctx context.Context) (*Planned, error) {
		p, err := Plan(ctx, rt.Model, dims, rt.opts.Options)
		if err != nil {
			return nil, err
		}
		if err := rt.prepare(p); err != nil {
			return nil, err
		}
		return p, nil
	})
}

// signature is a binding's pattern key. The model's input shapes are functions of its dims,
// so the dims identify the input-shape pattern.
func signature(dims Binding) planner.Signature {
	return planner.NewSignature(nil, dims)
}
