package cpu

import (
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// TestCopyRows: a strided copy lands where its pitches say, allocates nothing once warm (a
// generator's cache copies run every step), and one captured into a graph copies again at every
// replay, also after later copies reused the recycled ones.
func TestCopyRows(t *testing.T) {
	be, err := Open(kernels.OpenOptions{Memory: 1 << 20, Workers: 1})
	require.NoError(t, err)
	defer be.Close()
	dev := be.Device()
	s, err := dev.NewStream()
	require.NoError(t, err)
	defer dev.DestroyStream(s)
	src, err := dev.Malloc(64)
	require.NoError(t, err)
	dst, err := dev.Malloc(64)
	require.NoError(t, err)
	sb, db := alloc.HostBytes(src, 64), alloc.HostBytes(dst, 64)
	for i := range sb {
		sb[i] = byte(i)
	}
	copyRows := func() {
		// 3 rows of 4 bytes: from every 8 bytes of src at 2, to every 16 bytes of dst at 1.
		require.NoError(t, be.CopyRows(dst.Add(1), 16, src.Add(2), 8, 4, 3, s))
		require.NoError(t, dev.SynchronizeStream(s))
	}
	copyRows()
	want := make([]byte, 64)
	for r := 0; r < 3; r++ {
		copy(want[1+16*r:1+16*r+4], sb[2+8*r:2+8*r+4])
	}
	require.Equal(t, want, db)

	if !raceEnabled {
		require.Zero(t, testing.AllocsPerRun(20, copyRows), "allocations per copy")
	}

	require.NoError(t, dev.BeginCapture(s))
	require.NoError(t, be.CopyRows(dst, 16, src, 16, 16, 4, s))
	g, err := dev.EndCapture(s)
	require.NoError(t, err)
	defer dev.DestroyGraph(g)
	for range 3 {
		clear(db)
		copyRows() // reuses the recycled copies
		require.NoError(t, dev.LaunchGraph(g, s))
		require.NoError(t, dev.SynchronizeStream(s))
		require.Equal(t, sb, db, "the captured copy runs at every replay")
	}
}
