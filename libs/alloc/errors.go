package alloc

import (
	"fmt"
	"strings"
)

// OutOfMemoryError reports an allocation that failed after the allocator returned its cached
// memory to the device and retried. It carries what was asked, what the device and the limit
// allowed, and a statistics snapshot taken at the failure. errors.Is(err, ErrOutOfMemory) holds.
type OutOfMemoryError struct {
	Device      string
	Stream      Stream
	Requested   int64 // bytes asked for
	Block       int64 // the block size after rounding
	Segment     int64 // the device allocation that was refused
	Limit       int64 // the allocator's byte limit; 0 means none
	DeviceFree  int64 // free device memory at the failure, or -1 if unknown
	DeviceTotal int64
	Capturing   bool  // a capture was underway, so the cache could not be released
	Stats       Stats // at the failure
	Err         error // the device's error; nil when the byte limit refused
}

func (e *OutOfMemoryError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "alloc: out of memory on %s stream %d: tried to allocate %s (a %s block needing a new %s segment)",
		e.Device, e.Stream, formatBytes(e.Requested), formatBytes(e.Block), formatBytes(e.Segment))
	if e.Err == nil {
		fmt.Fprintf(&b, "; the byte limit of %s is reached", formatBytes(e.Limit))
	} else if e.DeviceFree >= 0 {
		fmt.Fprintf(&b, "; the device has %s free of %s", formatBytes(e.DeviceFree), formatBytes(e.DeviceTotal))
	}
	s := e.Stats
	fmt.Fprintf(&b, "; the allocator holds %s of device memory: %s allocated, %s cached free, %s held for other streams or graphs",
		formatBytes(s.TotalAllocatedBytes), formatBytes(s.AllocatedBytes.Current), formatBytes(s.CachedBytes), formatBytes(s.HeldBytes))
	if s.ReservedBytes > 0 {
		fmt.Fprintf(&b, ", %s in arenas", formatBytes(s.ReservedBytes))
	}
	if e.Limit > 0 && e.Err != nil {
		fmt.Fprintf(&b, "; limit %s", formatBytes(e.Limit))
	}
	b.WriteString(". ")
	switch {
	case e.Capturing:
		b.WriteString("A capture was underway, so cached memory could not be returned to the device: allocate before capturing or capture a smaller region. ")
	case s.CachedBytes > 0:
		b.WriteString("Cached memory is fragmented or belongs to other streams: allocate on fewer streams or call EmptyCache between phases. ")
	}
	if s.HeldBytes > 0 {
		b.WriteString("Synchronize streams named in RecordStream, or release graphs, to return held memory. ")
	}
	b.WriteString("Free allocations that are no longer needed, reduce the batch or sequence size")
	if e.Limit > 0 {
		b.WriteString(", or raise the byte limit")
	}
	b.WriteString(".")
	if e.Err != nil {
		fmt.Fprintf(&b, " (device: %v)", e.Err)
	}
	return b.String()
}

// Is makes errors.Is(err, ErrOutOfMemory) true.
func (e *OutOfMemoryError) Is(target error) bool { return target == ErrOutOfMemory }

// Unwrap returns the device's error, if any.
func (e *OutOfMemoryError) Unwrap() error { return e.Err }

// outOfMemory builds the error for a failed allocation.
func (al *Allocator) outOfMemory(s Stream, n, size int64, cause error) error {
	al.st.ooms.Add(1)
	e := &OutOfMemoryError{
		Device:     al.dev.Name(),
		Stream:     s,
		Requested:  n,
		Block:      size,
		Segment:    segmentSize(size),
		Limit:      al.limit,
		DeviceFree: -1,
		Capturing:  al.captures.Load() > 0,
		Stats:      al.Stats(),
	}
	if cause != errLimit {
		e.Err = cause
	}
	if free, total, err := al.dev.MemInfo(); err == nil {
		e.DeviceFree, e.DeviceTotal = free, total
	}
	return e
}

// formatBytes renders n bytes for people: "512 B", "1.5 KiB", "20.0 MiB".
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		f /= unit
		if f < unit && f > -unit || u == "PiB" {
			return fmt.Sprintf("%.1f %s", f, u)
		}
	}
	return fmt.Sprintf("%d B", n)
}
