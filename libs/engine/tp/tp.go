// Package tp runs a model split over the devices of one host by tensor parallelism: each rank
// is an engine.Runtime on its own backend holding its share of the weights (the graph
// carve.dev/libs/graph/shard makes for it), and a run is every rank's session run together, in
// lockstep, their collectives meeting in one communicator (carve.dev/libs/kernels/collective on
// the CPU and simulated backends).
//
// Invariants:
//  1. Every rank runs the same inputs; every rank's outputs are the whole outputs (the LM
//     head's logits gathered), and Run returns rank 0's.
//  2. A rank whose run fails aborts the communicator, so the other ranks' collectives return
//     instead of waiting for ever; the Model is unusable after that (like a lost device) and
//     every later Run returns the same error.
//  3. After a pattern's first run, runs allocate no Go heap object: each rank runs on a
//     goroutine that lives as long as the session, and the collectives allocate nothing.
package tp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"carve.dev/libs/alloc"
	"carve.dev/libs/engine"
	"carve.dev/libs/graph"
	"carve.dev/libs/graph/shard"
	"carve.dev/libs/kernels"
	"carve.dev/libs/kernels/collective"
)

// Device is one rank's backend and the allocator over its device.
type Device struct {
	Backend kernels.Backend
	Alloc   *alloc.Allocator
}

// Model is a model loaded as a tensor-parallel split over len(Ranks) devices.
type Model struct {
	Ranks []*engine.Runtime // rank r's runtime, on the r'th device
	Info  []*shard.Rank     // what each rank holds
	group *collective.Group
}

var groups atomic.Int64

// Load splits the fused model m over the devices (one rank each) and loads every rank's graph
// as a runtime with opts. The communicator is registered under a name of its own, closed with
// the Model.
func Load(ctx context.Context, m *graph.Model, devices []Device, opts engine.RuntimeOptions) (*Model, error) {
	n := len(devices)
	if n < 1 {
		return nil, fmt.Errorf("tp: no devices")
	}
	g, err := collective.New(fmt.Sprintf("tp.%d", groups.Add(1)), n)
	if err != nil {
		return nil, err
	}
	tm := &Model{group: g}
	for r, d := range devices {
		sm, info, err := shard.Split(m, r, n, shard.Options{Group: g.Name()})
		if err != nil {
			return nil, errors.Join(err, tm.Close())
		}
		rt, err := engine.NewRuntime(ctx, sm, d.Backend, d.Alloc, opts)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("tp: rank %d on %s: %w", r, d.Backend.Name(), err), tm.Close())
		}
		tm.Ranks, tm.Info = append(tm.Ranks, rt), append(tm.Info, info)
	}
	return tm, nil
}

// Close closes every rank's runtime and the communicator.
func (m *Model) Close() error {
	var err error
	for _, rt := range m.Ranks {
		err = errors.Join(err, rt.Close())
	}
	return errors.Join(err, m.group.Close())
}

// Session runs the ranks' sessions together. Runs of one Session are serialized.
type Session struct {
	m        *Model
	sessions []*engine.Session
	mu       sync.Mutex
	work     []chan request
	done     chan result
	err      error // the first failure; sticky (invariant 2)
}

type request struct {
	ctx    context.Context
	inputs map[string]kernels.Tensor
}

type result struct {
	rank int
	out  []kernels.Tensor
	err  error
}

// NewSession opens a session on every rank and the goroutines that run them.
func (m *Model) NewSession() (*Session, error) {
	s := &Session{m: m, done: make(chan result, len(m.Ranks))}
	for r, rt := range m.Ranks {
		es, err := rt.NewSession()
		if err != nil {
			return nil, errors.Join(fmt.Errorf("tp: rank %d: %w", r, err), s.Close())
		}
		s.sessions = append(s.sessions, es)
		w := make(chan request)
		s.work = append(s.work, w)
		go s.serve(r, es, w)
	}
	return s, nil
}

func (s *Session) serve(rank int, es *engine.Session, w chan request) {
	for req := range w {
		out, err := es.Run(req.ctx, req.inputs)
		if err != nil {
			s.m.group.Abort(&abortError{fmt.Errorf("tp: rank %d failed: %w", rank, err)})
		}
		s.done <- result{rank: rank, out: out, err: err}
	}
}

// Run runs inputs on every rank and returns rank 0's outputs, which every rank computed whole.
// The outputs alias rank 0's arena, as engine.Session.Run's do, until the next run. A model
// whose graph takes KV state (shard.Rank.StateInputs) needs each rank's own: RunRanks.
func (s *Session) Run(ctx context.Context, inputs map[string]kernels.Tensor) ([]kernels.Tensor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	for _, w := range s.work {
		w <- request{ctx: ctx, inputs: inputs}
	}
	return s.collect(nil)
}

// RunRanks runs inputs[r] on rank r and returns every rank's outputs, in rank order: the whole
// outputs, and each rank's share of the KV state (shard.Rank.StateOutputs) that its next run
// takes back. Each rank's outputs alias its arena until the next run.
func (s *Session) RunRanks(ctx context.Context, inputs []map[string]kernels.Tensor) ([][]kernels.Tensor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(inputs) != len(s.work) {
		return nil, fmt.Errorf("tp: %d ranks' inputs for %d ranks", len(inputs), len(s.work))
	}
	if s.err != nil {
		return nil, s.err
	}
	for r, w := range s.work {
		w <- request{ctx: ctx, inputs: inputs[r]}
	}
	outs := make([][]kernels.Tensor, len(s.work))
	if _, err := s.collect(outs); err != nil {
		return nil, err
	}
	return outs, nil
}

// collect waits for every rank's result and returns rank 0's outputs (every rank's in outs,
// when given) or the failure: a rank's own, not another rank's abort it caused (sticky).
func (s *Session) collect(outs [][]kernels.Tensor) ([]kernels.Tensor, error) {
	var out []kernels.Tensor
	var first error
	for range s.work {
		res := <-s.done
		if res.err != nil && (first == nil || isAbort(first) && !isAbort(res.err)) {
			first = fmt.Errorf("tp: rank %d: %w", res.rank, res.err)
		}
		if res.rank == 0 {
			out = res.out
		}
		if outs != nil {
			outs[res.rank] = res.out
		}
	}
	if first != nil {
		s.err = first
		return nil, first
	}
	return out, nil
}

// abortError is what a failed rank aborts the communicator with: the other ranks' collectives
// return it.
type abortError struct{ err error }

func (e *abortError) Error() string { return e.err.Error() }
func (e *abortError) Unwrap() error { return e.err }

// isAbort reports an error that a rank got because another rank failed.
func isAbort(err error) bool {
	var ae *abortError
	return errors.As(err, &ae)
}

// Sessions are the ranks' sessions, rank 0 first (for their stats and state).
func (s *Session) Sessions() []*engine.Session { return s.sessions }

// Close stops the ranks' goroutines and closes their sessions.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for i, w := range s.work {
		close(w)
		err = errors.Join(err, s.sessions[i].Close())
	}
	s.work, s.sessions = nil, nil
	return err
}
