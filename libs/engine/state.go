package engine

import (
	"fmt"
	"slices"
	"sort"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
)

// A StateBuffer is device memory that outlives runs: each session reserves it at creation, next to
// its arena and as part of the Level-2 reservation, and keeps it until it closes. The graph values
// it holds (Values) take no arena bytes; they are placed at the buffer's start at every run, so
// whatever a run writes there is what the next run reads. A KV cache is the case in point: in the
// GenAI form a cache's past input and present output are one buffer, written in place; in the
// concat form the past and the present are two.
//
// Invariants, kept by NewRuntime and compile:
//  1. a buffer holds at most one graph input and at most one graph output, so values never share
//     bytes by accident;
//  2. a held value's bytes at a run's binding fit the buffer, or the pattern fails to compile
//     with a StateError before anything runs;
//  3. a buffer starts zeroed when its session is created (padding a cache with stale finite
//     values is harmless to masked attention; uninitialised memory may hold NaNs, which are not).
type StateBuffer struct {
	Name  string
	Bytes int64
	// Values are the graph inputs and outputs the buffer holds, at its start.
	Values []string
}

// StateError reports a state declaration or a run that does not fit it.
type StateError struct {
	Buffer  string
	Problem string
}

func (e *StateError) Error() string {
	if e.Buffer == "" {
		return "engine: state: " + e.Problem
	}
	return fmt.Sprintf("engine: state buffer %q: %s", e.Buffer, e.Problem)
}

// stateAlign is the alignment of each buffer inside a session's state reservation.
const stateAlign = 256

// stateSlot is where one state buffer lies in a session's state reservation.
type stateSlot struct{ offset, size int64 }

// stateLayout checks bufs against m and lays them out in one reservation: slots by buffer,
// the total, and the buffer of each held value (by Value.ID).
func stateLayout(m *graph.Model, bufs []StateBuffer) (slots map[string]stateSlot, total int64, held map[int]int, err error) {
	slots = make(map[string]stateSlot, len(bufs))
	held = map[int]int{}
	for i, b := range bufs {
		if b.Name == "" {
			return nil, 0, nil, &StateError{Problem: fmt.Sprintf("buffer %d has no name", i)}
		}
		if _, dup := slots[b.Name]; dup {
			return nil, 0, nil, &StateError{Buffer: b.Name, Problem: "declared twice"}
		}
		if b.Bytes <= 0 {
			return nil, 0, nil, &StateError{Buffer: b.Name, Problem: fmt.Sprintf("size %d bytes; want at least 1", b.Bytes)}
		}
		var ins, outs int
		for _, name := range b.Values {
			v := m.Value(name)
			switch {
			case v == nil:
				return nil, 0, nil, &StateError{Buffer: b.Name, Problem: fmt.Sprintf("the model has no value %q", name)}
			case v.Kind == graph.KindInput:
				ins++
			case v.Output && v.Kind == graph.KindActivation && !v.Host:
				outs++
			default:
				return nil, 0, nil, &StateError{Buffer: b.Name, Problem: fmt.Sprintf("%q is neither a graph input nor a computed graph output", name)}
			}
			if other, dup := held[v.ID]; dup {
				return nil, 0, nil, &StateError{Buffer: b.Name, Problem: fmt.Sprintf("%q is also held by %q", name, bufs[other].Name)}
			}
			held[v.ID] = i
		}
		if ins > 1 || outs > 1 {
			return nil, 0, nil, &StateError{Buffer: b.Name, Problem: "holds more than one input or more than one output"}
		}
		slots[b.Name] = stateSlot{offset: total, size: b.Bytes}
		size, ok := graph.CheckedAdd(b.Bytes, stateAlign-1)
		if ok {
			total, ok = graph.CheckedAdd(total, size/stateAlign*stateAlign)
		}
		if !ok {
			return nil, 0, nil, &StateError{Buffer: b.Name, Problem: "the state buffers' total size overflows"}
		}
	}
	return slots, total, held, nil
}

// HeldValues are the names of the values bufs hold, sorted: the Options.External a runtime with
// these state buffers plans with (NewRuntime sets it; the estimator sets it the same way).
func HeldValues(bufs []StateBuffer) []string {
	var names []string
	for _, b := range bufs {
		names = append(names, b.Values...)
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// StateBytes is what one session's state buffers take in device memory (alloc.ReservedSize of
// their aligned total); 0 without state.
func (rt *Runtime) StateBytes() int64 {
	if rt.stateTotal == 0 {
		return 0
	}
	return alloc.ReservedSize(rt.stateTotal)
}

// StateReservation is what one session's state buffers bufs take in device memory: what
// Runtime.StateBytes reports for a runtime of m made with them, without making one (the
// estimator's figure). It checks bufs against m as NewRuntime does (*StateError).
func StateReservation(m *graph.Model, bufs []StateBuffer) (int64, error) {
	_, total, _, err := stateLayout(m, bufs)
	if err != nil || total == 0 {
		return 0, err
	}
	return alloc.ReservedSize(total), nil
}

// State returns the device address of the session's state buffer name.
func (s *Session) State(name string) (alloc.Ptr, error) {
	slot, ok := s.rt.stateSlots[name]
	if !ok || s.stateMem == nil {
		return 0, &StateError{Buffer: name, Problem: "no such buffer"}
	}
	return s.stateMem.Base().Add(slot.offset), nil
}

// Rows is a strided region of a state buffer: Count rows of Width bytes, the first Offset bytes
// into the buffer, each Pitch bytes after the one before.
type Rows struct {
	Buffer                      string
	Offset, Pitch, Width, Count int64
}

// CopyRows queues on the session's stream a copy of src's rows to dst's, after the runs queued
// before it and before those queued after. The regions need equal Width and Count, must lie
// inside their buffers and be in different buffers. The backend must copy within its device
// (kernels.RowCopier).
func (s *Session) CopyRows(dst, src Rows) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("engine: session is closed")
	}
	rc, ok := s.rt.Backend.(kernels.RowCopier)
	if !ok {
		return fmt.Errorf("engine: backend %s cannot copy within its device", s.rt.Backend.Name())
	}
	if dst.Width != src.Width || dst.Count != src.Count {
		return &StateError{Buffer: dst.Buffer, Problem: fmt.Sprintf("copy of %dx%d bytes from %dx%d", dst.Count, dst.Width, src.Count, src.Width)}
	}
	if dst.Buffer == src.Buffer {
		return &StateError{Buffer: dst.Buffer, Problem: "copy within one buffer"}
	}
	d, err := s.rows(dst)
	if err != nil {
		return err
	}
	r, err := s.rows(src)
	if err != nil {
		return err
	}
	if err := rc.CopyRows(d, dst.Pitch, r, src.Pitch, src.Width, src.Count, s.stream); err != nil {
		return s.abandon(fmt.Errorf("copying state %q to %q: %w", src.Buffer, dst.Buffer, err))
	}
	return nil
}

// rows checks that r lies inside its buffer and returns its first byte's address.
func (s *Session) rows(r Rows) (alloc.Ptr, error) {
	if r.Count <= 0 || r.Width <= 0 {
		return 0, &StateError{Buffer: r.Buffer, Problem: fmt.Sprintf("%d rows of %d bytes", r.Count, r.Width)}
	}
	base, err := s.State(r.Buffer)
	if err != nil {
		return 0, err
	}
	size := s.rt.stateSlots[r.Buffer].size
	end, ok := graph.CheckedMul(r.Count-1, r.Pitch)
	if ok {
		end, ok = graph.CheckedAdd(end, r.Offset)
	}
	if ok {
		end, ok = graph.CheckedAdd(end, r.Width)
	}
	if !ok || r.Offset < 0 || r.Pitch < r.Width || end > size {
		return 0, &StateError{Buffer: r.Buffer, Problem: fmt.Sprintf("rows %+v reach outside its %d bytes", r, size)}
	}
	return base.Add(r.Offset), nil
}

// CopyOut copies len(dst) bytes of the session's device memory at src, an output left on the device
// (RuntimeOptions.DeviceOutputs) or a state buffer, into dst after the work queued before it, and
// returns once dst holds them. src must lie inside the session's arena or state buffers.
func (s *Session) CopyOut(dst []byte, src alloc.Ptr) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("engine: session is closed")
	}
	if err := s.rt.Lost(); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	inside := func(a *alloc.Arena) bool {
		return a != nil && src >= a.Base() && int64(len(dst)) <= a.Size() && src-a.Base() <= alloc.Ptr(a.Size()-int64(len(dst)))
	}
	if !inside(s.arena) && !inside(s.stateMem) {
		return fmt.Errorf("engine: CopyOut of %d bytes at %#x: not inside the session's arena or state", len(dst), uint64(src))
	}
	if err := s.rt.Backend.CopyOut(dst, src, s.stream); err != nil {
		return s.abandon(err)
	}
	return s.rt.Backend.Device().SynchronizeStream(s.stream)
}

// zeroState queues the zeroing of the session's state buffers on its stream.
func (s *Session) zeroState() error {
	if s.stateMem == nil {
		return nil
	}
	zero := make([]byte, min(s.rt.stateTotal, 1<<20))
	for off := int64(0); off < s.rt.stateTotal; off += int64(len(zero)) {
		n := min(int64(len(zero)), s.rt.stateTotal-off)
		if err := s.rt.Backend.CopyIn(s.stateMem.Base().Add(off), zero[:n], s.stream); err != nil {
			return err
		}
	}
	return s.rt.Backend.Device().SynchronizeStream(s.stream)
}
