package engine

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"carve.dev/libs/alloc"
	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"carve.dev/libs/planner"
)

// Session runs a runtime's model on one stream with its own arena. Runs of one session are
// serialized; run sessions concurrently for parallelism. A Session is safe for concurrent use
// (Run takes its lock).
type Session struct {
	rt     *Runtime
	stream alloc.Stream
	arena  *alloc.Arena

	mu       sync.Mutex
	programs *planner.Cache[*program] // by pattern, least recently used out first
	last     *program                 // the program of the last run, reused while input shapes repeat
	resident *program                 // the program whose host values are in the arena (discrete devices)
	captured map[*program]bool        // programs holding a graph (RuntimeOptions.Graphs)
	err      error                    // the first kernel error of the run in progress, set on the stream
	closed   bool
}

// NewSession creates a stream and reserves the session's arena.
func (rt *Runtime) NewSession() (*Session, error) {
	dev := rt.Backend.Device()
	s, err := dev.NewStream()
	if err != nil {
		return nil, err
	}
	ar, err := rt.Alloc.ReserveArena(max(rt.Reserve.ArenaBytes, 1))
	if err != nil {
		dev.DestroyStream(s)
		return nil, err
	}
	sess := &Session{rt: rt, stream: s, arena: ar, programs: planner.NewCache[*program](rt.opts.Programs),
		captured: map[*program]bool{}}
	rt.mu.Lock()
	rt.sessions[sess] = struct{}{}
	rt.mu.Unlock()
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
	rt := s.rt
	rt.mu.Lock()
	delete(rt.sessions, s)
	st := s.programs.Stats()
	st.Len = 0 // a closed session holds no programs
	addCacheStats(&rt.closedPrograms, st)
	rt.mu.Unlock()
	// The allocator's DestroyStream waits for the stream's work and destroys it on the device.
	err := rt.Alloc.DestroyStream(s.stream)
	for prog := range s.captured {
		err = errors.Join(err, s.dropGraph(prog))
	}
	return errors.Join(err, s.arena.Release())
}

// InputError reports inputs that do not match the model or the envelope.
type InputError struct {
	Input   string // the input concerned, "" for the set as a whole
	Problem string
}

func (e *InputError) Error() string {
	if e.Input == "" {
		return "bad inputs: " + e.Problem
	}
	return fmt.Sprintf("bad input %q: %s", e.Input, e.Problem)
}

// Bind derives the binding of the model's dims from input shapes and checks the inputs:
// every input present with its dtype and rank, fixed dims matching, named dims consistent and
// inside the envelope.
func (rt *Runtime) Bind(inputs map[string]kernels.Tensor) (Binding, error) {
	m := rt.Model
	dims := Binding{}
	for name := range inputs {
		if m.Value(name) == nil || m.Value(name).Kind != graph.KindInput {
			return nil, &InputError{name, fmt.Sprintf("the model has no such input (its inputs are %s)", inputNames(m))}
		}
	}
	for _, v := range m.Inputs {
		t, ok := inputs[v.Name]
		if !ok {
			return nil, &InputError{v.Name, fmt.Sprintf("missing (want %s)", v)}
		}
		if t.DType != v.DType {
			return nil, &InputError{v.Name, fmt.Sprintf("dtype %s, want %s", t.DType, v.DType)}
		}
		if len(t.Shape) != len(v.Shape) {
			return nil, &InputError{v.Name, fmt.Sprintf("rank %d (shape %v), want rank %d %s", len(t.Shape), t.Shape, len(v.Shape), v.Shape)}
		}
		n, err := graph.ByteSize(t.DType, t.Shape)
		if err != nil {
			return nil, &InputError{v.Name, err.Error()}
		}
		if int64(len(t.Data)) != n {
			return nil, &InputError{v.Name, fmt.Sprintf("holds %d bytes, shape %v needs %d", len(t.Data), t.Shape, n)}
		}
		for i, d := range v.Shape {
			if c, ok := d.Value(); ok {
				if t.Shape[i] != c {
					return nil, &InputError{v.Name, fmt.Sprintf("dim %d is %d, the model fixes it at %d", i, t.Shape[i], c)}
				}
				continue
			}
			syms := d.Syms(nil)
			if len(syms) != 1 || d.String() != syms[0] {
				continue // an expression of dims: checked after Bind
			}
			name := syms[0]
			if old, seen := dims[name]; seen && old != t.Shape[i] {
				return nil, &InputError{v.Name, fmt.Sprintf("dim %d (%s) is %d, but another input gives %s=%d", i, name, t.Shape[i], name, old)}
			}
			dims[name] = t.Shape[i]
		}
	}
	for _, name := range m.DimNames {
		v, ok := dims[name]
		if !ok {
			return nil, &InputError{"", fmt.Sprintf("no input shape gives dim %q", name)}
		}
		r := rt.opts.Envelope[name]
		if v < r.Lo || v > r.Hi {
			return nil, &InputError{"", fmt.Sprintf("%s=%d is outside the declared envelope %s=%s: reload with a wider --dim %s", name, v, name, r, name)}
		}
	}
	return dims, nil
}

func inputNames(m *graph.Model) string {
	ns := make([]string, len(m.Inputs))
	for i, v := range m.Inputs {
		ns[i] = v.Name
	}
	sort.Strings(ns)
	return strings.Join(ns, ", ")
}
