package kernels

import (
	"fmt"
	"sort"
	"sync"
)

// Registry holds the kernels of every backend. It is safe for concurrent use.
type Registry struct {
	mu       sync.RWMutex
	backends map[string]map[OpKey]Kernel
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{backends: map[string]map[OpKey]Kernel{}}
}

// Register adds a kernel; a second kernel for the same (backend, op) is an error.
func (r *Registry) Register(k Kernel) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ops := r.backends[k.Backend()]
	if ops == nil {
		ops = map[OpKey]Kernel{}
		r.backends[k.Backend()] = ops
	}
	key := Key(k.Op().Domain, k.Op().Op)
	if _, dup := ops[key]; dup {
		return fmt.Errorf("kernels: %s already registered for backend %q", key, k.Backend())
	}
	ops[key] = k
	return nil
}

// Backends lists the registered backends, sorted.
func (r *Registry) Backends() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.backends))
	for b := range r.backends {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the kernel for op on backend. Errors are *UnknownBackendError or
// *UnsupportedOpError.
func (r *Registry) Lookup(backend string, op OpKey) (Kernel, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ops, ok := r.backends[backend]
	if !ok {
		known := make([]string, 0, len(r.backends))
		for b := range r.backends {
			known = append(known, b)
		}
		sort.Strings(known)
		return nil, &UnknownBackendError{Backend: backend, Known: known}
	}
	key := Key(op.Domain, op.Op)
	if k, ok := ops[key]; ok {
		return k, nil
	}
	sup := make([]OpKey, 0, len(ops))
	for k := range ops {
		sup = append(sup, k)
	}
	sortKeys(sup)
	return nil, &UnsupportedOpError{Backend: backend, Op: key, Supported: sup}
}

// Select looks up the node's kernel on d's backend and selects its tactic.
func (r *Registry) Select(n *Node, d Target) (Instance, error) {
	k, err := r.Lookup(d.Backend, n.Key())
	if err != nil {
		if u, ok := err.(*UnsupportedOpError); ok {
			u.Node = n.Name
		}
		return nil, err
	}
	return k.Select(n, d)
}

// Bound looks up the node's kernel on d's backend and bounds its workspace over nr.
func (r *Registry) Bound(nr *NodeRange, d Target) (Bound, error) {
	k, err := r.Lookup(d.Backend, nr.Key())
	if err != nil {
		if u, ok := err.(*UnsupportedOpError); ok {
			u.Node = nr.Name
		}
		return Bound{}, err
	}
	return k.Bound(nr, d)
}

// OpInfo describes one registered kernel for listings.
type OpInfo struct {
	Backend string
	Op      OpKey
	Tactics []TacticInfo
}

// Ops lists the kernels of backend, sorted by domain and op.
func (r *Registry) Ops(backend string) []OpInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ops := r.backends[backend]
	keys := make([]OpKey, 0, len(ops))
	for k := range ops {
		keys = append(keys, k)
	}
	sortKeys(keys)
	out := make([]OpInfo, len(keys))
	for i, k := range keys {
		out[i] = OpInfo{Backend: backend, Op: k, Tactics: ops[k].Tactics()}
	}
	return out
}

func sortKeys(keys []OpKey) {
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Domain != keys[j].Domain {
			return keys[i].Domain < keys[j].Domain
		}
		return keys[i].Op < keys[j].Op
	})
}
