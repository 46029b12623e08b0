package npyfile

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"github.com/stretchr/testify/require"
)

// TestReadFileRefusesEndlessFiles: a device, a FIFO or a directory is refused before it is
// opened (opening a FIFO with no writer would block; /dev/zero never ends).
func TestReadFileRefusesEndlessFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.npy")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, p := range []string{"/dev/zero", fifo, dir} {
		_, err := ReadFile(p)
		require.ErrorIs(t, err, ErrNotRegularFile, p)
		var pe *os.PathError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, p, pe.Path)
	}
	// Through a symbolic link too.
	link := filepath.Join(dir, "zero.npy")
	require.NoError(t, os.Symlink("/dev/zero", link))
	_, err := ReadFile(link)
	require.ErrorIs(t, err, ErrNotRegularFile)
}

// TestReadFileReadsWhatTheHeaderImplies: the file's size must match its header before any data
// is read, so a small file whose header declares a huge array allocates nothing of that size,
// and a padded file is refused as well as a truncated one.
func TestReadFileReadsWhatTheHeaderImplies(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	huge := write("huge.npy", append(header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }"), 1, 2, 3, 4))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadFile(huge)
	runtime.ReadMemStats(&after)
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, huge, fe.File)
	require.Contains(t, err.Error(), "holds 4 data bytes, shape [1000000 1000000] of float32 needs 4000000000000")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "no allocation of the declared size")

	good := kernels.MustTensor(graph.Int64, 2, 3)
	for i := range good.Int64s() {
		good.Int64s()[i] = int64(i * 7)
	}
	p := filepath.Join(dir, "good.npy")
	require.NoError(t, WriteFile(p, good))
	got, err := ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, good, got)

	b, err := os.ReadFile(p)
	require.NoError(t, err)
	_, err = ReadFile(write("padded.npy", append(b, 0)))
	require.ErrorContains(t, err, "holds 49 data bytes")
	_, err = ReadFile(write("short.npy", b[:len(b)-1]))
	require.ErrorContains(t, err, "holds 47 data bytes")
	_, err = ReadFile(write("tiny.npy", b[:5]))
	require.ErrorAs(t, err, &fe)
	_, err = ReadFile(write("empty.npy", nil))
	require.ErrorAs(t, err, &fe)
	_, err = ReadFile(write("headeronly.npy", b[:len(b)-48]))
	require.ErrorContains(t, err, "holds 0 data bytes")
	empty := kernels.MustTensor(graph.Float32, 0, 2)
	require.NoError(t, WriteFile(filepath.Join(dir, "zero.npy"), empty))
	got, err = ReadFile(filepath.Join(dir, "zero.npy"))
	require.NoError(t, err)
	require.Equal(t, []int64{0, 2}, got.Shape)
}
