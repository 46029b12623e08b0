// Package collective is the in-process communicator of a tensor-parallel split's ranks: the
// all-reduce and all-gather that carve's dev.carve AllReduce and AllGather ops run on the CPU
// and simulated backends, every rank a session of its own (its own device) in one process.
//
// A Group of N ranks is registered under a name, which the ops' attribute group names; a
// backend's collective kernel finds it with Lookup at run time. Each call (Exchange) is a
// rendezvous of the N ranks: every rank posts its input, waits for the others (a barrier, no
// sleeps), computes its own output from all of them, and waits again until every rank has read
// every input, so that no rank reuses its input's memory while another still reads it. The
// arithmetic is the kernels' (carve.dev/libs/kernels/cpu): an all-reduce sums the ranks' values
// in rank order 0..N-1, so its result is deterministic and the same bytes on every rank.
//
// Invariants:
//  1. Every rank's compute of a call sees the inputs all ranks posted for that call, and no
//     rank returns from a call while another still computes over it.
//  2. Calls allocate nothing: Exchange allocates no Go heap object.
//  3. A Group that is aborted (Abort, Close) fails every waiting and later call with the same
//     error, so that a rank whose run failed cannot leave the others waiting for ever.
//  4. Every rank calls the same collectives in the same order (the ranks' graphs are one
//     split's); computes check that the inputs agree in size.
package collective

import (
	"errors"
	"fmt"
	"sync"
)

// Group is the communicator of one split's ranks. It is safe for concurrent use by the ranks.
type Group struct {
	name  string
	ranks int

	mu      sync.Mutex
	cond    sync.Cond
	arrived int
	gen     uint64
	err     error
	posted  [][]byte // each rank's input of the current call
}

// ErrClosed is what calls on a closed group wrap.
var ErrClosed = errors.New("collective: the group is closed")

// NameError reports a group name already registered, or one Lookup does not know.
type NameError struct {
	Name    string
	Problem string
}

func (e *NameError) Error() string { return fmt.Sprintf("collective: group %q: %s", e.Name, e.Problem) }

var (
	groupsMu sync.RWMutex
	groups   = map[string]*Group{}
)

// New registers a group of ranks ranks under name; Close unregisters it.
func New(name string, ranks int) (*Group, error) {
	if ranks < 1 {
		return nil, fmt.Errorf("collective: a group of %d ranks", ranks)
	}
	g := &Group{name: name, ranks: ranks, posted: make([][]byte, ranks)}
	g.cond.L = &g.mu
	groupsMu.Lock()
	defer groupsMu.Unlock()
	if groups[name] != nil {
		return nil, &NameError{Name: name, Problem: "already registered"}
	}
	groups[name] = g
	return g, nil
}

// Lookup returns the group registered under name.
func Lookup(name string) (*Group, error) {
	groupsMu.RLock()
	g := groups[name]
	groupsMu.RUnlock()
	if g == nil {
		return nil, &NameError{Name: name, Problem: "no such group (the ranks' communicator is not open)"}
	}
	return g, nil
}

// Name is the name the group is registered under.
func (g *Group) Name() string { return g.name }

// Ranks is the group's size.
func (g *Group) Ranks() int { return g.ranks }

// Abort fails every call waiting in the group and every later one with err (the first error
// given wins).
func (g *Group) Abort(err error) {
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.cond.Broadcast()
	g.mu.Unlock()
}

// Close unregisters the group and aborts it with ErrClosed.
func (g *Group) Close() error {
	groupsMu.Lock()
	if groups[g.name] == g {
		delete(groups, g.name)
	}
	groupsMu.Unlock()
	g.Abort(ErrClosed)
	return nil
}

// barrier waits until every rank has reached it; the generation count makes it reusable.
func (g *Group) barrier() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	gen := g.gen
	g.arrived++
	if g.arrived == g.ranks {
		g.arrived = 0
		g.gen++
		g.cond.Broadcast()
		return nil
	}
	for gen == g.gen && g.err == nil {
		g.cond.Wait()
	}
	if gen == g.gen {
		return g.err
	}
	return nil
}

// Exchange is one collective call of rank: it posts in, waits until every rank has posted,
// runs compute over the ranks' inputs in rank order (read-only: each rank writes its own
// output), and waits until every rank has computed. compute's error, or the group's, is
// returned. The backends' AllReduce and AllGather kernels are computes over it.
func (g *Group) Exchange(rank int, in []byte, compute func(posted [][]byte) error) error {
	if rank < 0 || rank >= g.ranks {
		return fmt.Errorf("collective: group %q: rank %d of %d", g.name, rank, g.ranks)
	}
	g.mu.Lock()
	g.posted[rank] = in
	g.mu.Unlock()
	if err := g.barrier(); err != nil {
		return err
	}
	g.mu.Lock()
	posted := g.posted // the slice header, read under the lock that the posts were written under
	g.mu.Unlock()
	cerr := compute(posted)
	if err := g.barrier(); err != nil {
		return err
	}
	return cerr
}
