package alloc

import (
	"fmt"
	"math"
	"sync"
)

// CapacityError reports an arena that cannot be reserved: it needs more bytes than the device
// has free or than the byte limit leaves, even after the allocator returned its cached memory.
// errors.Is(err, ErrOutOfMemory) holds.
type CapacityError struct {
	Needed     int64 // bytes the arena needs
	Available  int64 // bytes that could be reserved: the smaller of DeviceFree and what the limit leaves
	Limit      int64 // the allocator's byte limit; 0 means none
	DeviceFree int64 // free device memory
	Reserved   int64 // bytes the allocator held from the device at the check
}

func (e *CapacityError) Error() string {
	s := fmt.Sprintf("alloc: cannot reserve an arena of %d bytes (%s): %d bytes (%s) available; the device has %s free",
		e.Needed, formatBytes(e.Needed), e.Available, formatBytes(e.Available), formatBytes(e.DeviceFree))
	if e.Limit > 0 {
		s += fmt.Sprintf(", the limit of %s leaves %s", formatBytes(e.Limit), formatBytes(max(0, e.Limit-e.Reserved)))
	}
	return s + "; plan for a smaller binding, free memory held elsewhere, or raise the limit"
}

// Is makes errors.Is(err, ErrOutOfMemory) true.
func (e *CapacityError) Is(target error) bool { return target == ErrOutOfMemory }

// Arena is one device reservation that holds a memory plan: a planner's offsets and sizes are
// bound to addresses inside it with Bind, which checks bounds. The arena's memory counts in the
// allocator's statistics (num_reserves, reserved_bytes) and against its byte limit. Arena is
// safe for concurrent use.
type Arena struct {
	al       *Allocator
	base     Ptr
	size     int64 // bytes asked for
	reserved int64 // bytes reserved: size rounded up to minBlockSize

	mu       sync.Mutex
	released bool
}

// ReservedSize is the device memory ReserveArena(size) takes: size rounded up to the allocator's
// block granularity (512 bytes). Level-2 checks count it, so that what they promise is what the
// reservations take.
func ReservedSize(size int64) int64 { return roundSize(size) }

// ReserveArena reserves size bytes in one device allocation. It first checks that the device's
// free memory and the byte limit leave room, returning cached memory to the device if that helps,
// and fails with a *CapacityError otherwise.
func (al *Allocator) ReserveArena(size int64) (*Arena, error) {
	if size <= 0 || size > math.MaxInt64-minBlockSize {
		return nil, fmt.Errorf("alloc: arena of %d bytes is out of range", size)
	}
	n := roundSize(size)
	check := func() (*CapacityError, error) {
		free, _, err := al.dev.MemInfo()
		if err != nil {
			return nil, fmt.Errorf("alloc: reserve arena: %w", err)
		}
		reserved := al.st.reserved.Load()
		avail := free
		if al.limit > 0 {
			avail = min(avail, al.limit-reserved)
		}
		if n <= avail {
			return nil, nil
		}
		return &CapacityError{Needed: n, Available: max(avail, 0), Limit: al.limit, DeviceFree: free, Reserved: reserved}, nil
	}
	ce, err := check()
	if err != nil {
		return nil, err
	}
	if ce != nil && al.captures.Load() == 0 {
		if err := al.releaseCached(); err != nil {
			return nil, err
		}
		if ce, err = check(); err != nil {
			return nil, err
		}
	}
	if ce != nil {
		return nil, ce
	}
	if !al.reserve(n) {
		ce, _ = check()
		if ce == nil { // lost a race with another reservation that has since gone
			ce = &CapacityError{Needed: n, Limit: al.limit, Reserved: al.st.reserved.Load()}
		}
		return nil, ce
	}
	p, err := al.dev.Malloc(n)
	al.st.deviceMallocs.Add(1)
	if err != nil {
		al.unreserve(n)
		if ce, cerr := check(); cerr == nil && ce != nil {
			return nil, ce
		}
		return nil, fmt.Errorf("alloc: reserve arena of %d bytes: %w", n, err)
	}
	al.st.arenaAdded(n, size)
	return &Arena{al: al, base: p, size: size, reserved: n}, nil
}

// Base returns the arena's address.
func (a *Arena) Base() Ptr { return a.base }

// Size returns the arena's size in bytes.
func (a *Arena) Size() int64 { return a.size }

// Bind returns the address of the planned buffer at offset with size bytes, or an error wrapping
// ErrOutOfBounds if it leaves the arena (or ErrInvalidHandle after Release).
func (a *Arena) Bind(offset, size int64) (Ptr, error) {
	r, err := a.Region(offset, size)
	return r.Ptr, err
}

// Region is Bind returning a Region.
func (a *Arena) Region(offset, size int64) (Region, error) {
	a.mu.Lock()
	released := a.released
	a.mu.Unlock()
	if released {
		return Region{}, fmt.Errorf("alloc: bind in a released arena: %w", ErrInvalidHandle)
	}
	r, err := Region{Ptr: a.base, Size: a.size}.Sub(offset, size)
	if err != nil {
		return Region{}, fmt.Errorf("alloc: bind [%d, +%d) in an arena of %d bytes: %w", offset, size, a.size, ErrOutOfBounds)
	}
	return r, nil
}

// Carve carves recipe r from the arena at offset, in a region of r.Size() bytes.
func (a *Arena) Carve(offset int64, r Recipe) (*Workspace, error) {
	n, err := r.Size()
	if err != nil {
		return nil, err
	}
	reg, err := a.Region(offset, n)
	if err != nil {
		return nil, err
	}
	return Carve(reg, r)
}

// Release returns the arena to the device once the work queued on every stream has run (the
// device's free waits for it).
func (a *Arena) Release() error {
	a.mu.Lock()
	if a.released {
		a.mu.Unlock()
		return fmt.Errorf("alloc: arena released twice: %w", ErrInvalidHandle)
	}
	a.released = true
	a.mu.Unlock()
	al := a.al
	al.freeGate.RLock()
	defer al.freeGate.RUnlock()
	if al.captures.Load() > 0 {
		a.mu.Lock()
		a.released = false
		a.mu.Unlock()
		return fmt.Errorf("alloc: release arena: %w", ErrCaptureUnsupported)
	}
	err := al.dev.Free(a.base)
	al.st.deviceFrees.Add(1)
	if err != nil {
		return fmt.Errorf("alloc: release arena: %w", err)
	}
	al.unreserve(a.reserved)
	al.st.arenaRemoved(a.reserved, a.size)
	return nil
}
