//go:build cuda

package cuda

import (
	"encoding/binary"
	"errors"
	"sync"
	"testing"

	"carve.dev/libs/alloc"
)

// These tests need a GPU: the binary is built here with -tags cuda and run on the GPU machine.

func open(t *testing.T) *Device {
	t.Helper()
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func words(t *testing.T, d *Device, p alloc.Ptr, n int, s alloc.Stream) []uint32 {
	t.Helper()
	b := make([]byte, 4*n)
	must(t, d.CopyToHost(b, p, s))
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w
}

func TestDeviceBasics(t *testing.T) {
	d := open(t)
	free, total, err := d.MemInfo()
	must(t, err)
	if free <= 0 || free > total {
		t.Fatalf("MemInfo free %d total %d", free, total)
	}
	p, err := d.Malloc(1 << 20)
	must(t, err)
	if p%256 != 0 {
		t.Fatalf("Malloc returned %#x, not 256-byte aligned", p)
	}
	s, err := d.NewStream()
	must(t, err)
	must(t, d.Memset(p, 0xdeadbeef, 1<<18, s))
	for i, w := range words(t, d, p, 1<<18, s) {
		if w != 0xdeadbeef {
			t.Fatalf("word %d = %#x", i, w)
		}
	}
	must(t, d.DestroyStream(s))
	must(t, d.Free(p))
	if _, err := d.Malloc(1 << 50); !errors.Is(err, alloc.ErrOutOfMemory) {
		t.Fatalf("1 PiB malloc: %v, want ErrOutOfMemory", err)
	}
	if err := d.SynchronizeStream(s); !errors.Is(err, alloc.ErrInvalidHandle) {
		t.Fatalf("destroyed stream: %v, want ErrInvalidHandle", err)
	}
}

// An ordinal the host does not have is a *NoDeviceError with the host's count.
func TestOpenNoSuchDevice(t *testing.T) {
	n, err := DeviceCount()
	if err != nil {
		t.Fatal(err)
	}
	for _, ord := range []int{n, n + 7, -1} {
		_, err := Open(ord)
		var nd *NoDeviceError
		if !errors.As(err, &nd) || nd.Ordinal != ord || nd.Count != n {
			t.Fatalf("Open(%d) on a host with %d devices: %v, want a *NoDeviceError", ord, n, err)
		}
	}
}

// An event orders work across streams: s2 writes after s1's write, whatever the timing.
func TestEventsOrderStreams(t *testing.T) {
	d := open(t)
	p, err := d.Malloc(64 << 20)
	must(t, err)
	defer d.Free(p)
	s1, _ := d.NewStream()
	s2, _ := d.NewStream()
	defer d.DestroyStream(s1)
	defer d.DestroyStream(s2)
	e, err := d.NewEvent()
	must(t, err)
	defer d.DestroyEvent(e)
	for i := 0; i < 20; i++ {
		must(t, d.Memset(p, 1, 16<<20, s1)) // 64 MiB: long enough to race if unordered
		must(t, d.RecordEvent(e, s1))
		must(t, d.WaitEvent(s2, e))
		must(t, d.Memset(p, 2, 16, s2))
		w := words(t, d, p, 32, s2)
		if w[0] != 2 || w[15] != 2 || w[16] != 1 {
			t.Fatalf("round %d: %v", i, w[:17])
		}
	}
	done, err := d.QueryEvent(e)
	must(t, err)
	if !done {
		t.Fatal("event not complete after the stream synchronized")
	}
}

// A captured memset replays from the graph; frees are refused while capturing.
func TestCaptureAndReplay(t *testing.T) {
	d := open(t)
	p, err := d.Malloc(4096)
	must(t, err)
	defer d.Free(p)
	s, _ := d.NewStream()
	defer d.DestroyStream(s)
	must(t, d.Memset(p, 0, 1024, s))
	must(t, d.BeginCapture(s))
	if _, on, err := d.CaptureInfo(s); err != nil || !on {
		t.Fatalf("CaptureInfo during capture: %v %v", on, err)
	}
	must(t, d.Memset(p, 7, 1024, s))
	if err := d.Free(p); !errors.Is(err, alloc.ErrCaptureUnsupported) {
		t.Fatalf("Free during capture: %v", err)
	}
	g, err := d.EndCapture(s)
	must(t, err)
	if w := words(t, d, p, 4, s); w[0] != 0 {
		t.Fatalf("captured work ran before replay: %v", w)
	}
	must(t, d.LaunchGraph(g, s))
	if w := words(t, d, p, 4, s); w[0] != 7 {
		t.Fatalf("replay did not run: %v", w)
	}
	must(t, d.DestroyGraph(g))
	if _, err := d.EndCapture(s); !errors.Is(err, alloc.ErrNotCapturing) {
		t.Fatalf("EndCapture without capture: %v", err)
	}
}

// The caching allocator over the GPU: cached reuse makes no device calls, streams get their
// own blocks, and arenas and scratch work on real device memory.
func TestAllocatorOnGPU(t *testing.T) {
	d := open(t)
	al, err := alloc.New(d, alloc.Options{})
	must(t, err)
	defer al.Close()
	s1, _ := d.NewStream()
	s2, _ := d.NewStream()
	a, err := al.Alloc(s1, 1<<20)
	must(t, err)
	must(t, al.Free(a))
	before := al.Stats().DeviceMallocCalls
	for i := 0; i < 100; i++ {
		a, err := al.Alloc(s1, 1<<20)
		must(t, err)
		must(t, al.Free(a))
	}
	if got := al.Stats().DeviceMallocCalls; got != before {
		t.Fatalf("steady state made %d device mallocs", got-before)
	}
	// Concurrent streams with their own scratch never share bytes.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for k, s := range []alloc.Stream{s1, s2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				sc, err := al.Scratch(s, 8<<20)
				if err != nil {
					errs <- err
					return
				}
				v := uint32(k+1)<<16 | uint32(i)
				if err := d.Memset(sc.Ptr(), v, 2<<20, s); err != nil {
					errs <- err
					return
				}
				b := make([]byte, 4*(2<<20))
				if err := d.CopyToHost(b, sc.Ptr(), s); err != nil {
					errs <- err
					return
				}
				for j := 0; j < len(b); j += 4096 {
					if got := binary.LittleEndian.Uint32(b[j:]); got != v {
						errs <- errors.New("scratch bytes shared across streams")
						return
					}
				}
				if err := sc.Release(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ar, err := al.ReserveArena(256 << 20)
	must(t, err)
	r, err := ar.Region(128<<20, 4096)
	must(t, err)
	must(t, d.Memset(r.Ptr, 9, 1024, s1))
	if w := words(t, d, r.Ptr, 2, s1); w[1] != 9 {
		t.Fatalf("arena region: %v", w)
	}
	must(t, ar.Release())
	must(t, al.DestroyStream(s1))
	must(t, al.DestroyStream(s2))
	st := al.Stats()
	t.Logf("stats: allocs %d, device mallocs %d, frees %d, peak in use %d", st.NumAllocs, st.DeviceMallocCalls, st.DeviceFreeCalls, st.MaxBytesInUse)
	if st.BytesInUse != 0 {
		t.Fatalf("bytes in use after release: %d", st.BytesInUse)
	}
}
