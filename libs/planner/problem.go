package planner

import (
	"errors"
	"fmt"
)

// DefaultAlign is the alignment of every device buffer unless a buffer asks for more.
// 256 bytes is what cuBLAS and cuDNN require, and a multiple of every CPU alignment we use.
const DefaultAlign int64 = 256

// Kind says what a buffer holds. The planner treats all kinds alike; kinds only label plans.
type Kind uint8

const (
	Activation Kind = iota // an intermediate value produced by one step and read by later ones
	Workspace              // a kernel's scratch; lives for its node's step only
	Output                 // a graph output; lives to the end of the run
	Input                  // a graph input copied into the arena
)

func (k Kind) String() string {
	switch k {
	case Activation:
		return "activation"
	case Workspace:
		return "workspace"
	case Output:
		return "output"
	case Input:
		return "input"
	}
	return "unknown"
}

// Buffer is one request for arena bytes over a half-open lifetime [Start, End) in steps.
// It is a plain value.
type Buffer struct {
	ID    string // unique within a Problem; MiniMalloc's id column, or a value or node name
	Size  int64  // bytes; 0 is allowed and takes no space
	Align int64  // 0 means DefaultAlign; otherwise a power of two
	Start int    // first step that needs the bytes
	End   int    // first step that no longer needs them; End > Start
	Kind  Kind
	Node  string // for workspaces: the node that owns it
	// InPlace is the ID of the buffer whose bytes this one takes, or "": a node's output written
	// over its input's bytes, which the kernel allows (its in-place contract). The two are one
	// placement: the same offset, size and alignment. The buffer taken must start before this
	// one and end at this one's Start+1, so that they are live together at that step alone, the
	// step of the node that reads the one and writes the other; a buffer is taken by one at most.
	InPlace string
}

// Problem is an offline dynamic storage allocation instance. It is a plain value: solvers only
// read it, so one Problem may be solved and verified concurrently while nobody modifies it.
type Problem struct {
	Buffers  []Buffer
	Capacity int64 // 0: unbounded; otherwise every buffer must end at or below Capacity
}

// MaxTotalBytes caps the sum of all buffer sizes (rounded up to their alignment) in a Problem.
// Keeping every sum below 2^62 means no offset, peak or bound computed by this package overflows.
const MaxTotalBytes int64 = 1 << 62

// ErrInvalidProblem is wrapped by every error that Problem.Validate returns.
var ErrInvalidProblem = errors.New("planner: invalid problem")

// ProblemError says which buffer makes a Problem invalid and why.
type ProblemError struct {
	Index int    // position in Problem.Buffers; -1 when the problem as a whole is at fault
	ID    string // the buffer's ID, if any
	Msg   string
}

func (e *ProblemError) Error() string {
	if e.Index < 0 {
		return "planner: invalid problem: " + e.Msg
	}
	return fmt.Sprintf("planner: invalid problem: buffer %d (%q): %s", e.Index, e.ID, e.Msg)
}

// Unwrap lets errors.Is(err, ErrInvalidProblem) match.
func (e *ProblemError) Unwrap() error { return ErrInvalidProblem }

// Alignment returns the buffer's effective alignment: Align, or DefaultAlign when Align is 0.
func (b Buffer) Alignment() int64 {
	if b.Align == 0 {
		return DefaultAlign
	}
	return b.Align
}

// Overlaps reports whether the lifetimes of a and b share a step.
func (b Buffer) Overlaps(o Buffer) bool { return b.Start < o.End && o.Start < b.End }

// Validate checks what every solver relies on: unique non-empty IDs, sizes >= 0, alignments that
// are powers of two, lifetimes with End > Start within ±2^62 steps, a capacity >= 0, sizes
// that sum below MaxTotalBytes, and in-place buffers as Buffer.InPlace says. Its errors are
// *ProblemError.
func (p Problem) Validate() error {
	if p.Capacity < 0 {
		return &ProblemError{Index: -1, Msg: fmt.Sprintf("capacity %d is negative", p.Capacity)}
	}
	seen := make(map[string]int, len(p.Buffers))
	var total int64
	for i, b := range p.Buffers {
		bad := func(format string, args ...any) error {
			return &ProblemError{Index: i, ID: b.ID, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case b.ID == "":
			return bad("empty ID")
		case b.Size < 0:
			return bad("negative size %d", b.Size)
		case b.Align < 0 || b.Align&(b.Align-1) != 0:
			return bad("alignment %d is not a power of two", b.Align)
		case b.End <= b.Start:
			return bad("empty lifetime [%d, %d)", b.Start, b.End)
		case int64(b.Start) < -maxStep || int64(b.End) > maxStep:
			return bad("lifetime [%d, %d) past ±%d steps", b.Start, b.End, maxStep)
		}
		if j, dup := seen[b.ID]; dup {
			return bad("ID also used by buffer %d", j)
		}
		seen[b.ID] = i
		a := b.Alignment()
		if b.Size > MaxTotalBytes-a || total > MaxTotalBytes-(b.Size+a) {
			return bad("sizes sum past %d bytes", MaxTotalBytes)
		}
		total += b.Size + a
	}
	return p.validateInPlace(seen)
}

// validateInPlace checks every Buffer.InPlace against the buffer it names (seen: index by ID).
func (p Problem) validateInPlace(seen map[string]int) error {
	taken := map[int]int{}
	for i, b := range p.Buffers {
		if b.InPlace == "" {
			continue
		}
		bad := func(format string, args ...any) error {
			return &ProblemError{Index: i, ID: b.ID, Msg: fmt.Sprintf("takes the bytes of %q in place, but ", b.InPlace) + fmt.Sprintf(format, args...)}
		}
		j, ok := seen[b.InPlace]
		if !ok {
			return bad("the problem has no such buffer")
		}
		t := p.Buffers[j]
		switch {
		case t.Size != b.Size || t.Alignment() != b.Alignment():
			return bad("it has %d bytes aligned to %d, not %d aligned to %d", t.Size, t.Alignment(), b.Size, b.Alignment())
		case t.Start >= b.Start || t.End != b.Start+1:
			return bad("it lives over [%d, %d), not from before step %d to its end", t.Start, t.End, b.Start)
		}
		if k, dup := taken[j]; dup {
			return bad("so does buffer %d", k)
		}
		taken[j] = i
	}
	return nil
}

// maxStep bounds lifetimes, so that End - Start never overflows.
const maxStep = 1 << 62

// alignUp rounds v up to a multiple of a, a power of two. Callers keep v + a below 2^63.
func alignUp(v, a int64) int64 { return (v + a - 1) &^ (a - 1) }
