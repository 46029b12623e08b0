//go:build cuda

package cuda

import (
	"bytes"
	"errors"
	"testing"

	"carve.dev/libs/alloc"
)

// Handles are unique across devices, so a stream names its device; another device's stream is
// an invalid handle here.
func TestStreamsNameTheirDevice(t *testing.T) {
	d1, d2 := open(t), open(t)
	s1, err := d1.NewStream()
	must(t, err)
	s2, err := d2.NewStream()
	must(t, err)
	if s1 == s2 {
		t.Fatalf("two devices handed out stream %d", s1)
	}
	for _, c := range []struct {
		s    alloc.Stream
		want *Device
	}{{s1, d1}, {s2, d2}} {
		got, err := StreamDevice(c.s)
		must(t, err)
		if got != c.want {
			t.Fatalf("StreamDevice(%d) is the wrong device", c.s)
		}
	}
	if err := d1.SynchronizeStream(s2); !errors.Is(err, alloc.ErrInvalidHandle) {
		t.Fatalf("d1 given d2's stream: %v, want ErrInvalidHandle", err)
	}
	must(t, d2.DestroyStream(s2))
	if _, err := StreamDevice(s2); !errors.Is(err, alloc.ErrInvalidHandle) {
		t.Fatalf("destroyed stream: %v, want ErrInvalidHandle", err)
	}
	must(t, d1.DestroyStream(s1))
}

// Pinned memory round-trips through the device with asynchronous copies, and every driver
// allocation is counted.
func TestPinnedCopiesAndStats(t *testing.T) {
	d := open(t)
	before, calls := d.Stats(), d.Calls()
	const n = 1 << 20
	h, err := d.HostAlloc(n)
	must(t, err)
	back, err := d.HostAlloc(n)
	must(t, err)
	for i := range h {
		h[i] = byte(i * 7)
	}
	p, err := d.Malloc(2 * n)
	must(t, err)
	s, err := d.NewStream()
	must(t, err)
	must(t, d.CopyToDeviceAsync(p, h, s))
	must(t, d.CopyAsync(p.Add(n), p, n, s))
	must(t, d.MemsetBytes(p, 0, n, s))
	must(t, d.CopyToHostAsync(back, p.Add(n), s))
	must(t, d.SynchronizeStream(s))
	if !bytes.Equal(h, back) {
		t.Fatal("bytes changed on the way through the device")
	}
	must(t, d.DestroyStream(s))
	must(t, d.Free(p))
	must(t, d.HostFree(h))
	must(t, d.HostFree(back))
	got := d.Stats()
	want := Stats{Mallocs: before.Mallocs + 1, Frees: before.Frees + 1, HostAllocs: before.HostAllocs + 2, HostFrees: before.HostFrees + 2}
	if got != want {
		t.Fatalf("stats %+v, want %+v", got, want)
	}
	c := d.Calls()
	if c.Malloc != calls.Malloc+1 || c.Free != calls.Free+1 || c.NewStream != calls.NewStream+1 || c.SynchronizeStream != calls.SynchronizeStream+1 {
		t.Fatalf("calls %+v after %+v: want one more Malloc, Free, NewStream and SynchronizeStream", c, calls)
	}
}

func TestProperties(t *testing.T) {
	d := open(t)
	p, err := d.Properties()
	must(t, err)
	if p.Major < 5 || p.SMs < 1 || p.SharedOptin < 48<<10 || p.TotalMemory < 1<<30 || p.Name == "" {
		t.Fatalf("implausible properties %+v", p)
	}
	t.Logf("%+v", p)
}
