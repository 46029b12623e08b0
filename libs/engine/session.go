package engine

import (
	"errors"
	"fmt"
	"sync"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine/bytesize"
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
	// stateMem holds the runtime's state buffers (RuntimeOptions.State); nil without.
	stateMem *alloc.Arena

	mu       sync.Mutex
	programs *planner.Cache[*program] // by pattern, least recently used out first
	last     *program                 // the program of the last run, reused while input shapes repeat
	// known are the programs in programs, found by their input shapes (program.matches) without
	// binding the inputs, which allocates: a generator switches patterns every bucket.
	known    []*program
	resident *program          // the program whose host values are in the arena (discrete devices)
	captured map[*program]bool // programs holding a graph (RuntimeOptions.Graphs)
	err      error             // the first kernel error of the run in progress, set on the stream
	prof     *profiler         // set while runs are profiled (Session.Profile); nil otherwise
	closed   bool
}

// NewSession creates a stream and reserves the session's arena.
func (rt *Runtime) NewSession() (*Session, error) {
	if err := rt.Lost(); err != nil {
		return nil, err
	}
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
	if rt.stateTotal > 0 {
		if sess.stateMem, err = rt.Alloc.ReserveArena(rt.stateTotal); err == nil {
			err = sess.zeroState()
		}
		if err != nil {
			err = fmt.Errorf("state buffers (%s): %w", bytesize.Format(rt.stateTotal), err)
			err = errors.Join(err, rt.Alloc.DestroyStream(s), ar.Release())
			if sess.stateMem != nil {
				err = errors.Join(err, sess.stateMem.Release())
			}
			return nil, err
		}
	}
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
	err = errors.Join(err, s.stopProfile())
	for prog := range s.captured {
		err = errors.Join(err, s.dropGraph(prog))
	}
	if s.stateMem != nil {
		err = errors.Join(err, s.stateMem.Release())
	}
	return errors.Join(err, s.arena.Release())
}

// Bind derives the binding of the model's dims from input shapes and checks the inputs:
// every input present with its dtype and rank, fixed dims matching, named dims consistent and
// inside the envelope (InputDims, then CheckBinding).
func (rt *Runtime) Bind(inputs map[string]kernels.Tensor) (Binding, error) {
	dims, err := inputDims(rt.Model, inputs, rt.stateOf)
	if err != nil {
		return nil, err
	}
	if err := CheckBinding(rt.Model, rt.opts.Envelope, dims); err != nil {
		return nil, err
	}
	return dims, nil
}
