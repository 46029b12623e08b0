package alloc

// Scratch is one kernel invocation's private workspace, from Allocator.Scratch. It is released
// back to the allocator when the invocation's work is done: Release records an event on the
// stream (and on every stream named with UseOn) and the block becomes reusable only after the
// event completes. Two invocations running at the same time, on one stream or two, therefore
// never receive the same bytes.
//
// Scratch is a small value; copies refer to the same workspace, which is released once. Its
// methods are safe for concurrent use.
type Scratch struct {
	al *Allocator
	a  Allocation
}

// Scratch returns n bytes of workspace for an invocation on stream s.
func (al *Allocator) Scratch(s Stream, n int64) (Scratch, error) {
	a, err := al.Alloc(s, n)
	if err != nil {
		return Scratch{}, err
	}
	return Scratch{al: al, a: a}, nil
}

// ScratchFor returns workspace for recipe r on stream s, carved: its size is r.Size(), so the
// carving cannot fail for lack of room.
func (al *Allocator) ScratchFor(s Stream, r Recipe) (Scratch, *Workspace, error) {
	n, err := r.Size()
	if err != nil {
		return Scratch{}, nil, err
	}
	sc, err := al.Scratch(s, n)
	if err != nil {
		return Scratch{}, nil, err
	}
	w, err := sc.Carve(r)
	if err != nil {
		sc.Release()
		return Scratch{}, nil, err
	}
	return sc, w, nil
}

// Ptr returns the workspace's address.
func (sc Scratch) Ptr() Ptr { return sc.a.Ptr() }

// Size returns the bytes asked for.
func (sc Scratch) Size() int64 { return sc.a.Size() }

// Stream returns the stream of the invocation.
func (sc Scratch) Stream() Stream { return sc.a.Stream() }

// Region returns the workspace as a Region.
func (sc Scratch) Region() Region { return sc.a.Region() }

// Carve lays recipe r out in the workspace.
func (sc Scratch) Carve(r Recipe) (*Workspace, error) { return Carve(sc.Region(), r) }

// UseOn declares that the invocation also uses the workspace on stream s.
func (sc Scratch) UseOn(s Stream) error {
	if sc.al == nil {
		return nil
	}
	return sc.al.RecordStream(sc.a, s)
}

// Release returns the workspace once the invocation's work, queued before this call on its
// stream and on the streams named with UseOn, has run. During a capture the capture's stream
// order stands in for the event (see Allocator.BeginCapture).
func (sc Scratch) Release() error {
	if sc.al == nil {
		return nil
	}
	return sc.al.free(sc.a, true)
}
