package graph_test

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"carve.dev/libs/graph"
)

// externalModel is mlp with one more weight, "e" (2 float32), in the side file data.bin.
func externalModel(t *testing.T) []byte {
	return mlp().initExternal("e", f32, []int64{2}, "location", "data.bin").bytes(t)
}

// dataBin is the 8 bytes of "e": 1.5, -2.
func dataBin() []byte {
	b := binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5))
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(-2))
}

func weightE(t *testing.T, m *graph.Model) ([]byte, error) {
	t.Helper()
	v := m.Value("e")
	require.NotNil(t, v)
	return v.Init.Bytes()
}

// TestExternalDataSymlinks follows onnxruntime's rule (its PR 27374) for external data reached
// through symbolic links: the resolved file must lie under the model's folder as given, or under
// the folder of the model file's real path. Escapes are refused at load; the Hugging Face cache
// layout (snapshots/REV/model.onnx and its data both links into ../../blobs/) loads.
func TestExternalDataSymlinks(t *testing.T) {
	model := externalModel(t)
	write := func(p string, b []byte) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	link := func(target, p string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.Symlink(target, p))
	}

	t.Run("hugging face cache", func(t *testing.T) {
		root := t.TempDir()
		write(filepath.Join(root, "blobs", "1a2b"), model)
		write(filepath.Join(root, "blobs", "3c4d"), dataBin())
		snap := filepath.Join(root, "snapshots", "rev1")
		link("../../blobs/1a2b", filepath.Join(snap, "model.onnx"))
		link("../../blobs/3c4d", filepath.Join(snap, "data.bin"))
		m, err := graph.Load(filepath.Join(snap, "model.onnx"))
		require.NoError(t, err)
		defer m.Close()
		b, err := weightE(t, m)
		require.NoError(t, err)
		require.Equal(t, dataBin(), b)
	})

	t.Run("link inside the model's folder", func(t *testing.T) {
		dir := t.TempDir()
		write(filepath.Join(dir, "model.onnx"), model)
		write(filepath.Join(dir, "weights", "v1.bin"), dataBin())
		link("weights/v1.bin", filepath.Join(dir, "data.bin"))
		m, err := graph.Load(filepath.Join(dir, "model.onnx"))
		require.NoError(t, err)
		defer m.Close()
		b, err := weightE(t, m)
		require.NoError(t, err)
		require.Equal(t, dataBin(), b)
	})

	t.Run("model folder reached through a link", func(t *testing.T) {
		real := t.TempDir()
		write(filepath.Join(real, "model.onnx"), model)
		write(filepath.Join(real, "data.bin"), dataBin())
		via := filepath.Join(t.TempDir(), "models")
		link(real, via)
		m, err := graph.Load(filepath.Join(via, "model.onnx"))
		require.NoError(t, err)
		defer m.Close()
		_, err = weightE(t, m)
		require.NoError(t, err)
	})

	for _, tc := range []struct {
		name  string
		setup func(dir, outside string) // outside holds a secret the model must not read
	}{
		{"data file links out", func(dir, outside string) {
			link(filepath.Join(outside, "secret"), filepath.Join(dir, "data.bin"))
		}},
		{"relative link climbs out", func(dir, outside string) {
			rel, err := filepath.Rel(dir, filepath.Join(outside, "secret"))
			require.NoError(t, err)
			link(rel, filepath.Join(dir, "data.bin"))
		}},
		{"data file in a linked folder outside", func(dir, outside string) {
			link(outside, filepath.Join(dir, "link"))
			require.NoError(t, os.Rename(filepath.Join(outside, "secret"), filepath.Join(outside, "data.bin")))
		}},
	} {
		t.Run("escape: "+tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			write(filepath.Join(outside, "secret"), dataBin())
			mb := model
			if tc.name == "data file in a linked folder outside" {
				mb = mlp().initExternal("e", f32, []int64{2}, "location", "link/data.bin").bytes(t)
			}
			write(filepath.Join(dir, "model.onnx"), mb)
			tc.setup(dir, outside)
			_, err := graph.Load(filepath.Join(dir, "model.onnx"))
			require.ErrorIs(t, err, graph.ErrLocationEscapes)
			var me *graph.ModelError
			require.ErrorAs(t, err, &me)
			require.Equal(t, "e", me.Tensor)
		})
	}

	t.Run("escape: a linked model does not widen its folder", func(t *testing.T) {
		// The model file links into blobs/ (its real folder); the data links elsewhere.
		root, outside := t.TempDir(), t.TempDir()
		write(filepath.Join(root, "blobs", "m"), model)
		write(filepath.Join(outside, "secret"), dataBin())
		snap := filepath.Join(root, "snapshots", "rev1")
		link("../../blobs/m", filepath.Join(snap, "model.onnx"))
		link(filepath.Join(outside, "secret"), filepath.Join(snap, "data.bin"))
		_, err := graph.Load(filepath.Join(snap, "model.onnx"))
		require.ErrorIs(t, err, graph.ErrLocationEscapes)
	})
}

// TestLoadNotARegularFile: a directory, a FIFO or a device is refused before it is opened (a
// FIFO would block the open, /dev/zero would never end) with an *fs.PathError.
func TestLoadNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.onnx")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, p := range []string{dir, fifo, "/dev/zero"} {
		_, err := graph.Load(p)
		require.ErrorIs(t, err, graph.ErrNotRegularFile, p)
		var pe *os.PathError
		require.ErrorAs(t, err, &pe, p)
		require.Equal(t, p, pe.Path)
	}
	_, err := graph.Load(dir)
	require.ErrorContains(t, err, "is a directory")

	// The same for an external data file that is a directory.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "model.onnx"), externalModel(t), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "data.bin"), 0o755))
	m, err := graph.Load(filepath.Join(dir, "model.onnx"))
	require.NoError(t, err)
	defer m.Close()
	_, err = weightE(t, m)
	require.ErrorIs(t, err, graph.ErrNotRegularFile)
}
