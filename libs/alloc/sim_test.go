package alloc_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
)

func newSim(t *testing.T) (*alloc.SimDevice, *alloc.SimMemory) {
	t.Helper()
	d, mem, err := alloc.NewSim(alloc.SimConfig{Memory: 1 << 24})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d, mem
}

func TestSimCopiesRoundTrip(t *testing.T) {
	d, _ := newSim(t)
	s, err := d.NewStream()
	require.NoError(t, err)
	p, err := d.Malloc(1000)
	require.NoError(t, err)
	_, err = d.Malloc(10)
	require.NoError(t, err)

	src := make([]byte, 1000)
	for i := range src {
		src[i] = byte(i * 7)
	}
	require.NoError(t, d.CopyIn(p, src, s))
	dst := make([]byte, 300)
	require.NoError(t, d.CopyOut(dst, p.Add(500), s))
	require.NoError(t, d.SynchronizeStream(s))
	require.Equal(t, src[500:800], dst)
	require.Equal(t, alloc.SimCounters{Uploads: 1, UploadBytes: 1000, Downloads: 1, DownloadBytes: 300}, d.Counters())

	// Out of bounds and foreign addresses are refused when queued.
	require.ErrorIs(t, d.CopyIn(p.Add(900), src[:200], s), alloc.ErrOutOfBounds)
	require.ErrorIs(t, d.CopyIn(alloc.Ptr(0x1000), src[:1], s), alloc.ErrInvalidHandle)
	require.ErrorIs(t, d.Free(p.Add(1)), alloc.ErrInvalidHandle)
	require.NoError(t, d.Free(p))
}

func TestSimAddressesAreNotHostAddresses(t *testing.T) {
	d, _ := newSim(t)
	p, err := d.Malloc(64)
	require.NoError(t, err)
	// No 47- or 48-bit user-space pointer reaches the simulated range.
	require.Greater(t, uint64(p), uint64(1)<<63)
}

func TestSimUninitializedReadIsStickyAndNamed(t *testing.T) {
	d, mem := newSim(t)
	s, err := d.NewStream()
	require.NoError(t, err)
	p, err := d.Malloc(256)
	require.NoError(t, err)
	require.NoError(t, d.CopyIn(p, make([]byte, 128), s)) // only the first half is uploaded

	ran := false
	require.NoError(t, mem.Launch(s, func() error {
		_, err := mem.Read(p, 128, "kernel A")
		return err
	}))
	require.NoError(t, mem.Launch(s, func() error {
		_, err := mem.Read(p.Add(64), 128, "kernel B")
		return err
	}))
	require.NoError(t, mem.Launch(s, func() error { ran = true; return nil }))
	err = d.SynchronizeStream(s)
	var ur *alloc.UninitializedReadError
	require.ErrorAs(t, err, &ur)
	require.Equal(t, "kernel B", ur.Reader)
	require.Equal(t, int64(64), ur.First, "byte 128 of the allocation is the first unwritten one")
	require.False(t, ran, "work after a fault is skipped")
	require.Error(t, d.Synchronize(), "the fault is sticky")
	require.ErrorIs(t, d.Synchronize(), alloc.ErrDeviceLost, "and leaves the device unusable")
	require.ErrorAs(t, d.SynchronizeStream(s), &ur)

	// Writes count: a kernel output read by the next kernel is fine.
	d2, mem2 := newSim(t)
	s2, err := d2.NewStream()
	require.NoError(t, err)
	q, err := d2.Malloc(100)
	require.NoError(t, err)
	require.NoError(t, mem2.Launch(s2, func() error {
		b, err := mem2.Write(q, 100)
		copy(b, "written")
		return err
	}))
	var got []byte
	require.NoError(t, mem2.Launch(s2, func() error {
		b, err := mem2.Read(q, 100, "reader")
		got = append(got, b[:7]...)
		return err
	}))
	require.NoError(t, d2.SynchronizeStream(s2))
	require.Equal(t, "written", string(got))
}

func TestSimOutOfMemory(t *testing.T) {
	d, _ := newSim(t)
	_, err := d.Malloc(1 << 30)
	require.True(t, errors.Is(err, alloc.ErrOutOfMemory), "%v", err)
	require.Contains(t, err.Error(), "sim: malloc")
}

func TestSimAllocatorOnTop(t *testing.T) {
	d, _ := newSim(t)
	al, err := alloc.New(d, alloc.Options{})
	require.NoError(t, err)
	s, err := d.NewStream()
	require.NoError(t, err)
	a, err := al.Alloc(s, 4096)
	require.NoError(t, err)
	require.NoError(t, al.Free(a))
	require.NoError(t, al.Close())
}
