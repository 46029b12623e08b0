package planner

import (
	"errors"
	"fmt"
)

// A kernel's workspace has three sizes:
//
//   - W, the admission bound: the most the kernel declares it can ever ask for;
//   - C, the capacity of its slot in the cached plan: the largest need over the bindings and
//     routes the plan covers, not W by default, so that a decode step does not reserve the
//     prefill worst case;
//   - R, what this invocation needs.
//
// R <= C <= W should hold. R <= C: the invocation uses its planned region. R > C: the policy
// decides. R > W: always an error, for the kernel's declaration is wrong.
//
// A kernel's workspace is never split: it is either wholly the planned region or wholly one
// dynamic allocation of R bytes, never a planned part plus a dynamic remainder. Kernels take one
// workspace pointer, and a split would also make the planned bytes a lie about what was used.

// Policy says what happens when an invocation needs more workspace than its slot holds.
type Policy uint8

const (
	// Strict fails the invocation, before anything is allocated, with a *CapacityError.
	Strict Policy = iota
	// Fallback serves the invocation with one dynamic allocation of all R bytes, which the caller
	// counts (libs/engine reports them in its Stats).
	Fallback
)

func (p Policy) String() string {
	switch p {
	case Strict:
		return "strict"
	case Fallback:
		return "fallback"
	}
	return fmt.Sprintf("Policy(%d)", uint8(p))
}

// Source says where an invocation's workspace comes from.
type Source uint8

const (
	FromPlan    Source = iota // the slot's region in the planned arena
	FromDynamic               // one allocation of Decision.Bytes, made for this invocation alone
)

func (s Source) String() string {
	if s == FromPlan {
		return "planned"
	}
	return "dynamic"
}

// Decision is where one invocation's whole workspace lives: Bytes (= R) from one Source. It is
// a plain value.
type Decision struct {
	Source Source
	Bytes  int64
}

// ErrWorkspaceOverCapacity is matched by a CapacityError whose need exceeds the slot (R > C)
// but not the declared bound.
var ErrWorkspaceOverCapacity = errors.New("planner: workspace need exceeds its planned slot")

// ErrWorkspaceOverBound is matched by a CapacityError whose need exceeds the kernel's declared
// bound (R > W): the kernel's declaration is wrong.
var ErrWorkspaceOverBound = errors.New("planner: workspace need exceeds the kernel's declared bound")

// ErrInvalidSlot is wrapped by errors about slot sizes that make no sense (negative, or C > W).
var ErrInvalidSlot = errors.New("planner: invalid workspace slot")

// CapacityError says that a kernel needs more workspace than it may have.
type CapacityError struct {
	Node    string
	R, C, W int64 // need, slot capacity, declared bound
	Policy  Policy
}

// OverBound reports whether the need exceeds the declared bound (the kernel is at fault), not
// just the slot (the plan's envelope is too small).
func (e *CapacityError) OverBound() bool { return e.R > e.W }

func (e *CapacityError) Error() string {
	if e.OverBound() {
		return fmt.Sprintf("planner: node %q asked for %d bytes of workspace, more than the %d its kernel declares "+
			"(slot holds %d): the kernel's workspace bound is wrong; fix its declaration", e.Node, e.R, e.W, e.C)
	}
	return fmt.Sprintf("planner: node %q needs %d bytes of workspace but its planned slot holds %d (declared bound %d): "+
		"plan with an envelope (dims, routes) that covers this run, or use the fallback policy", e.Node, e.R, e.C, e.W)
}

// Is matches ErrWorkspaceOverBound or ErrWorkspaceOverCapacity.
func (e *CapacityError) Is(target error) bool {
	return (target == ErrWorkspaceOverBound && e.OverBound()) || (target == ErrWorkspaceOverCapacity && !e.OverBound())
}

// Decide applies the policy to one invocation of node's kernel: need r, slot capacity c,
// declared bound w. It never returns a split: the decision covers all r bytes.
func (p Policy) Decide(node string, r, c, w int64) (Decision, error) {
	switch {
	case r < 0 || c < 0 || w < 0:
		return Decision{}, fmt.Errorf("%w: node %q: negative size (R %d, C %d, W %d)", ErrInvalidSlot, node, r, c, w)
	case c > w:
		return Decision{}, fmt.Errorf("%w: node %q: slot capacity %d exceeds the declared bound %d", ErrInvalidSlot, node, c, w)
	case r > w:
		return Decision{}, &CapacityError{Node: node, R: r, C: c, W: w, Policy: p}
	case r <= c:
		return Decision{Source: FromPlan, Bytes: r}, nil
	case p == Fallback:
		return Decision{Source: FromDynamic, Bytes: r}, nil
	}
	return Decision{}, &CapacityError{Node: node, R: r, C: c, W: w, Policy: p}
}
