package alloc

import "fmt"

// releaseStuck releases the blocks held for good because an event for their uses could not be
// recorded (recordUses): nothing marks when the streams that used them are done, so they are
// never reused while the allocator runs. Close calls it: once the whole device has finished its
// work, no stream can still be using them, and their segments can go back to the device. If the
// device cannot synchronize (a sticky device error), they stay held and the error is returned.
func (al *Allocator) releaseStuck() error {
	al.mu.Lock()
	var hs []*heap
	for h := range al.heaps {
		hs = append(hs, h)
	}
	al.mu.Unlock()
	stuck := false
	for _, h := range hs {
		h.mu.Lock()
		stuck = stuck || len(h.stuck) > 0
		h.mu.Unlock()
	}
	if !stuck {
		return nil
	}
	if err := al.dev.Synchronize(); err != nil {
		return fmt.Errorf("alloc: close: blocks held after failed event records stay held: %w", err)
	}
	al.st.syncs.Add(1)
	var segs []*segment
	for _, h := range hs {
		h.mu.Lock()
		for _, b := range h.stuck {
			if seg := h.unhold(b); seg != nil {
				segs = append(segs, seg)
			}
		}
		h.stuck = nil
		h.mu.Unlock()
	}
	err := al.freeSegments(segs)
	for _, h := range hs {
		al.maybeRetire(h)
	}
	return err
}
