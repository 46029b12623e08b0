package kernels

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// UnsupportedOpError says that a backend has no kernel for an op. Supported lists what the
// backend does have, so the CLI can print it.
type UnsupportedOpError struct {
	Backend   string
	Op        OpKey
	Node      string // the node's name, when known
	Supported []OpKey
}

func (e *UnsupportedOpError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "backend %q has no kernel for op %s", e.Backend, e.Op)
	if e.Op.Domain != DomainONNX {
		fmt.Fprintf(&b, " (domain %q)", e.Op.Domain)
	}
	if e.Node != "" {
		fmt.Fprintf(&b, " at node %q", e.Node)
	}
	if len(e.Supported) > 0 {
		names := make([]string, len(e.Supported))
		for i, k := range e.Supported {
			names[i] = k.String()
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "; supported: %s", strings.Join(names, ", "))
	}
	return b.String()
}

// UnknownBackendError says that no kernels are registered for a backend.
type UnknownBackendError struct {
	Backend string
	Known   []string
}

func (e *UnknownBackendError) Error() string {
	return fmt.Sprintf("unknown kernel backend %q (known: %s)", e.Backend, strings.Join(e.Known, ", "))
}

// NodeError is an invalid node for a kernel: wrong arity, dtypes, shapes or attributes.
type NodeError struct {
	Node string
	Op   OpKey
	Err  error
}

func (e *NodeError) Error() string {
	if e.Node != "" {
		return fmt.Sprintf("node %q (%s): %v", e.Node, e.Op, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Op, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// NodeErr returns err as a *NodeError of node (its name) and op; an err that already is one is
// returned as it is, so that an error is attributed to one node once.
func NodeErr(node string, op OpKey, err error) error {
	var ne *NodeError
	if errors.As(err, &ne) {
		return err
	}
	return &NodeError{Node: node, Op: op, Err: err}
}

// WorkspaceError is a run given less workspace than its Recipe asks for. It is returned before
// any output is written.
type WorkspaceError struct {
	Kernel string
	Part   string
	Need   int64
	Have   int64
}

func (e *WorkspaceError) Error() string {
	return fmt.Sprintf("kernel %s: workspace part %q needs %d bytes, has %d", e.Kernel, e.Part, e.Need, e.Have)
}

// RunError is a kernel failing at run time (bad inputs: shapes that differ from the selected
// ones, out-of-range indices).
type RunError struct {
	Kernel string
	Err    error
}

func (e *RunError) Error() string { return fmt.Sprintf("kernel %s: %v", e.Kernel, e.Err) }

func (e *RunError) Unwrap() error { return e.Err }
