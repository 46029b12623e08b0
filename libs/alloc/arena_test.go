package alloc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestArenaBind(t *testing.T) {
	d := newCPU(t, 16<<20)
	al := newAllocator(t, d, Options{})
	ar, err := al.ReserveArena(1 << 20)
	require.NoError(t, err)
	require.Equal(t, int64(1<<20), ar.Size())
	require.Zero(t, uintptr(ar.Base())%uintptr(DefaultPartAlign))

	tests := []struct {
		name      string
		off, size int64
		ok        bool
	}{
		{"start", 0, 256, true},
		{"whole", 0, 1 << 20, true},
		{"end", 1<<20 - 256, 256, true},
		{"empty at end", 1 << 20, 0, true},
		{"past end", 1<<20 - 255, 256, false},
		{"negative offset", -256, 256, false},
		{"negative size", 0, -1, false},
		{"offset past end", 1<<20 + 1, 0, false},
		{"overflow", 256, 1<<63 - 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ar.Bind(tc.off, tc.size)
			if !tc.ok {
				require.ErrorIs(t, err, ErrOutOfBounds)
				return
			}
			require.NoError(t, err)
			require.Equal(t, ar.Base().Add(tc.off), p)
			b, err := d.Bytes(p, tc.size)
			require.NoError(t, err, "bound memory must be device memory")
			fill(b, 9)
		})
	}
	ws, err := ar.Carve(4096, Recipe{Kernel: "k", Parts: []Part{{Name: "a", Size: 100}, {Name: "b", Size: 10}}})
	require.NoError(t, err)
	require.Equal(t, ar.Base().Add(4096), ws.Ptr("a"))
	require.Equal(t, ar.Base().Add(4096+256), ws.Ptr("b"))

	st := al.Stats()
	require.Equal(t, int64(1), st.NumReserves)
	require.Equal(t, int64(1<<20), st.ReservedBytes)
	require.Equal(t, int64(1<<20), st.BytesInUse)
	require.Equal(t, int64(1<<20), st.TotalAllocatedBytes)
	require.Equal(t, int64(1<<20), st.MaxBytesInUse)
	require.Equal(t, int64(1<<20), st.MaxAllocSize)

	require.NoError(t, ar.Release())
	_, err = ar.Bind(0, 1)
	require.ErrorIs(t, err, ErrInvalidHandle)
	require.ErrorIs(t, ar.Release(), ErrInvalidHandle)
	st = al.Stats()
	require.Zero(t, st.ReservedBytes)
	require.Zero(t, st.BytesInUse)
	require.Equal(t, int64(1<<20), st.MaxBytesInUse)
	free, total, err := d.MemInfo()
	require.NoError(t, err)
	require.Equal(t, total, free)
}

func TestArenaCapacity(t *testing.T) {
	const MiB = 1 << 20
	d := newCPU(t, 32*MiB)
	al := newAllocator(t, d, Options{Limit: 24 * MiB})
	s := newStream(t, d)

	// The device has room, the limit does not.
	_, err := al.ReserveArena(25 * MiB)
	var ce *CapacityError
	require.ErrorAs(t, err, &ce)
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.Equal(t, int64(25*MiB), ce.Needed)
	require.Equal(t, int64(24*MiB), ce.Available)
	require.Equal(t, int64(24*MiB), ce.Limit)
	require.Contains(t, err.Error(), "the limit of 24.0 MiB leaves 24.0 MiB")

	// Cached memory is returned to make room.
	x := mustAlloc(t, al, s, 12*MiB)
	require.NoError(t, al.Free(x))
	ar, err := al.ReserveArena(20 * MiB)
	require.NoError(t, err, "the arena must fit once the cache is released")
	require.Zero(t, al.Stats().Segments.Current)

	// The device has no room left.
	d2 := newCPU(t, 8*MiB)
	al2 := newAllocator(t, d2, Options{})
	_, err = al2.ReserveArena(9 * MiB)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, int64(8*MiB), ce.DeviceFree)
	require.Equal(t, int64(8*MiB), ce.Available)
	require.Zero(t, ce.Limit)

	// Allocations count against the limit together with the arena.
	_, err = al.Alloc(s, 6*MiB) // a 20 MiB segment: 40 MiB > 24 MiB
	require.ErrorIs(t, err, ErrOutOfMemory)
	require.NoError(t, ar.Release())
	y := mustAlloc(t, al, s, 6*MiB)
	require.NoError(t, al.Free(y))
	_, err = al.ReserveArena(0)
	require.Error(t, err)
}
