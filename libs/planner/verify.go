package planner

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrInvalidPlan is wrapped by every error Verify returns for a plan at fault.
var ErrInvalidPlan = errors.New("planner: invalid plan")

// OverlapError says that two buffers live at the same step share bytes.
type OverlapError struct {
	A, B       int    // indices into Problem.Buffers, A < B
	IDA, IDB   string // their IDs
	Step       int    // a step at which both are live
	Start, End int64  // the shared bytes [Start, End)
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("planner: invalid plan: buffers %q and %q are both live at step %d and share bytes [%d, %d)",
		e.IDA, e.IDB, e.Step, e.Start, e.End)
}

func (e *OverlapError) Unwrap() error { return ErrInvalidPlan }

// PlacementError says that one buffer's offset is wrong on its own: negative, misaligned, or
// ending past the capacity.
type PlacementError struct {
	Index  int
	ID     string
	Offset int64
	Msg    string
}

func (e *PlacementError) Error() string {
	return fmt.Sprintf("planner: invalid plan: buffer %q at offset %d: %s", e.ID, e.Offset, e.Msg)
}

func (e *PlacementError) Unwrap() error { return ErrInvalidPlan }

// PeakError says that the plan reports a peak other than the one its offsets give.
type PeakError struct{ Reported, Actual int64 }

func (e *PeakError) Error() string {
	return fmt.Sprintf("planner: invalid plan: reports peak %d, but its offsets reach %d", e.Reported, e.Actual)
}

func (e *PeakError) Unwrap() error { return ErrInvalidPlan }

// Verify checks a plan against its problem, sharing no code with the solvers: the problem is
// valid (sizes >= 0, unique IDs, ... as Problem.Validate says), there is one offset per buffer,
// every offset is >= 0 and a multiple of its buffer's alignment, every buffer ends within the
// capacity (when there is one), a buffer that takes another's bytes in place (Buffer.InPlace) is
// at its offset, no two buffers whose lifetimes overlap share a byte unless one takes the
// other's in place, and the reported peak is the true one: the largest offset + size.
// Zero-size buffers take no bytes.
//
// The in-place exception is exact: Validate has checked that the two have one size and share
// one step only, so at the same offset they share their bytes at that step and no other
// buffer's; any other overlap is still an *OverlapError, as is a taker placed elsewhere over
// bytes live at its first step.
//
// Errors are *ProblemError, *PlacementError, *OverlapError or *PeakError, naming the buffers.
func Verify(p Problem, plan Plan) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if len(plan.Offsets) != len(p.Buffers) {
		return fmt.Errorf("%w: %d offsets for %d buffers", ErrInvalidPlan, len(plan.Offsets), len(p.Buffers))
	}
	index := make(map[string]int, len(p.Buffers))
	for i, b := range p.Buffers {
		index[b.ID] = i
	}
	takes := func(i, j int) bool { b := p.Buffers[i]; return b.InPlace != "" && index[b.InPlace] == j }
	var peak int64
	for i, b := range p.Buffers {
		off := plan.Offsets[i]
		bad := func(format string, args ...any) error {
			return &PlacementError{Index: i, ID: b.ID, Offset: off, Msg: fmt.Sprintf(format, args...)}
		}
		switch {
		case off < 0:
			return bad("negative offset")
		case off%b.Alignment() != 0:
			return bad("not a multiple of its alignment %d", b.Alignment())
		case off > MaxTotalBytes:
			return bad("offset past %d", MaxTotalBytes)
		case p.Capacity > 0 && off+b.Size > p.Capacity:
			return bad("ends at %d, past the capacity %d", off+b.Size, p.Capacity)
		case b.InPlace != "" && off != plan.Offsets[index[b.InPlace]]:
			return bad("takes the bytes of %q in place, at offset %d", b.InPlace, plan.Offsets[index[b.InPlace]])
		}
		if b.Size > 0 {
			peak = max(peak, off+b.Size)
		}
	}
	// Sweep the steps in order, keeping the buffers live at the current step; each new buffer is
	// checked against every buffer live when it starts, which covers every overlapping pair.
	order := make([]int, 0, len(p.Buffers))
	for i, b := range p.Buffers {
		if b.Size > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(p.Buffers[a].Start, p.Buffers[b].Start), cmp.Compare(a, b))
	})
	var live []int
	for _, i := range order {
		b := p.Buffers[i]
		lo, hi := plan.Offsets[i], plan.Offsets[i]+b.Size
		kept := live[:0]
		for _, j := range live {
			if p.Buffers[j].End > b.Start {
				kept = append(kept, j)
			}
		}
		live = kept
		for _, j := range live {
			jlo, jhi := plan.Offsets[j], plan.Offsets[j]+p.Buffers[j].Size
			if lo < jhi && jlo < hi && !takes(i, j) && !takes(j, i) {
				a, c := min(i, j), max(i, j)
				return &OverlapError{A: a, B: c, IDA: p.Buffers[a].ID, IDB: p.Buffers[c].ID,
					Step: b.Start, Start: max(lo, jlo), End: min(hi, jhi)}
			}
		}
		live = append(live, i)
	}
	if plan.Peak != peak {
		return &PeakError{Reported: plan.Peak, Actual: peak}
	}
	return nil
}
