package npyfile

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"carve.dev/libs/graph"
	"carve.dev/libs/graph/testmodels"
	"carve.dev/libs/kernels"
	"codeberg.org/sbinet/npyio"
	"github.com/stretchr/testify/require"
)

func TestDecodeNumpyFiles(t *testing.T) {
	for _, tc := range []struct {
		file, fixture string
		dtype         graph.DType
		shape         []int64
	}{
		{"numpy_f4_2x7x64.npy", "contrib_norm.b1.in.x.npy", graph.Float32, []int64{2, 7, 64}},
		{"numpy_i8_2x7.npy", "bert.b1.in.input_ids.npy", graph.Int64, []int64{2, 7}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := ReadFile(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			require.Equal(t, tc.dtype, got.DType)
			require.Equal(t, tc.shape, got.Shape)
			want, err := testmodels.ReadArray(tc.fixture)
			require.NoError(t, err)
			require.Equal(t, want.Shape, got.Shape)
			if tc.dtype == graph.Float32 {
				require.Equal(t, want.Float32, got.Float32s())
			} else {
				require.Equal(t, want.Int64, got.Int64s())
			}
		})
	}
}

// randomTensor fills a tensor of dt with seeded random bytes (bools 0 or 1).
func randomTensor(rng *rand.Rand, dt graph.DType, shape ...int64) kernels.Tensor {
	t := kernels.MustTensor(dt, shape...)
	for i := range t.Data {
		t.Data[i] = byte(rng.UintN(256))
		if dt == graph.Bool {
			t.Data[i] &= 1
		}
	}
	return t
}

func TestRoundTrip(t *testing.T) {
	seed := uint64(20251130)
	rng := rand.New(rand.NewPCG(seed, 1))
	shapes := [][]int64{{}, {0}, {5}, {2, 3}, {1, 4, 1, 3}, {2, 0, 3}}
	for dt := range typestrs {
		for _, shape := range shapes {
			in := randomTensor(rng, dt, shape...)
			var buf bytes.Buffer
			require.NoError(t, Encode(&buf, in))
			require.Zero(t, bytes.IndexByte(buf.Bytes(), 0x93), "magic first")
			hdrEnd := 10 + int(binary.LittleEndian.Uint16(buf.Bytes()[8:10]))
			require.Zero(t, hdrEnd%64, "data aligned to 64 bytes (seed %d)", seed)
			out, err := Decode(buf.Bytes())
			require.NoError(t, err, "%s %v (seed %d)", dt, shape, seed)
			require.Equal(t, dt, out.DType)
			require.Equal(t, shape, out.Shape)
			require.Equal(t, in.Data, out.Data, "%s %v (seed %d)", dt, shape, seed)

			// npyio reads what Encode writes.
			r, err := npyio.NewReader(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			want := make([]int, len(shape))
			for i, d := range shape {
				want[i] = int(d)
			}
			if len(shape) == 0 {
				want = nil
			}
			require.Equal(t, want, r.Header.Descr.Shape)
		}
	}
}

func TestEncodeReadableByNpyio(t *testing.T) {
	in := kernels.MustTensor(graph.Float32, 2, 3)
	copy(in.Float32s(), []float32{1, -2, 3.5, 4, 5, float32(math.Inf(1))})
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, in))
	var got []float32
	require.NoError(t, npyio.Read(bytes.NewReader(buf.Bytes()), &got))
	require.Equal(t, in.Float32s(), got)
}

func TestBFloat16WidensToFloat32(t *testing.T) {
	in := kernels.MustTensor(graph.BFloat16, 3)
	for i, f := range []float32{1, -2.5, 3e10} {
		in.Uint16s()[i] = uint16(math.Float32bits(f) >> 16)
	}
	var buf bytes.Buffer
	require.NoError(t, Encode(&buf, in))
	out, err := Decode(buf.Bytes())
	require.NoError(t, err)
	require.Equal(t, graph.Float32, out.DType)
	for i := range 3 {
		require.Equal(t, math.Float32bits(out.Float32s()[i]), uint32(in.Uint16s()[i])<<16)
	}
}

// header builds a version 1.0 .npy prefix with the given dict, padded like numpy.
func header(dict string) []byte {
	total := (10 + len(dict) + 1 + 63) / 64 * 64
	b := append([]byte("\x93NUMPY\x01\x00"), 0, 0)
	binary.LittleEndian.PutUint16(b[8:], uint16(total-10))
	b = append(b, dict...)
	for len(b) < total-1 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

func TestDecodeVariants(t *testing.T) {
	be := header("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }")
	be = append(be, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe)
	got, err := Decode(be)
	require.NoError(t, err)
	require.Equal(t, []int32{1, -2}, got.Int32s())

	f16 := header("{'descr': '<f2', 'fortran_order': True, 'shape': (1, 2), }")
	f16 = append(f16, 0x00, 0x3c, 0x00, 0xc0) // 1.0, -2.0
	got, err = Decode(f16)
	require.NoError(t, err, "Fortran order with one non-trivial dim is C order too")
	require.Equal(t, graph.Float16, got.DType)
	require.Equal(t, []uint16{0x3c00, 0xc000}, got.Uint16s())

	b := header("{'descr': '|b1', 'fortran_order': False, 'shape': (), }")
	got, err = Decode(append(b, 1))
	require.NoError(t, err)
	require.Equal(t, graph.Bool, got.DType)
	require.Empty(t, got.Shape)
}

func TestDecodeErrors(t *testing.T) {
	good := header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }")
	data := make([]byte, 16)
	v2 := []byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f")
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "not a .npy file"},
		{"text", []byte("hello, this is not numpy"), "not a .npy file"},
		{"version 3", []byte("\x93NUMPY\x03\x00\x10\x00\x00\x00"), "version 3.0"},
		{"huge header", v2, "implausibly large"},
		{"truncated header", good[:40], "truncated header"},
		{"no newline", append(append([]byte{}, good[:len(good)-1]...), ' '), "newline"},
		{"no data", good, "holds 0 data bytes"},
		{"truncated data", append(append([]byte{}, good...), data[:12]...), "holds 12 data bytes"},
		{"element boundary", append(append([]byte{}, good...), data[:8]...), "truncated or padded"},
		{"trailing bytes", append(append([]byte{}, good...), make([]byte, 17)...), "holds 17 data bytes"},
		{"object dtype", append(header("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"), 0), "unsupported dtype"},
		{"complex", append(header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"), data[:8]...), "unsupported dtype"},
		{"string", append(header("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }"), data[:12]...), "unsupported dtype"},
		{"fortran", append(header("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }"), data...), "Fortran-order"},
		{"negative dim", header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2), }"), "negative dim"},
		{"bad dim", header("{'descr': '<f4', 'fortran_order': False, 'shape': (x, 2), }"), "unreadable header"},
		{"overflow", header("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }"), "overflows"},
		{"bad dict", header("{'shape': (2,), 'descr': '<f4', 'fortran_order': False}"), "unreadable header"},
		{"garbage dict", header("{}"), "unreadable header"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.b)
			require.Error(t, err)
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestReadFileErrorsNameTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npy")
	require.NoError(t, os.WriteFile(p, []byte("junk"), 0o644))
	_, err := ReadFile(p)
	require.ErrorContains(t, err, "bad .npy file "+p+": not a .npy file")
	_, err = ReadFile(filepath.Join(dir, "missing.npy"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.npy")
	in := kernels.MustTensor(graph.Int32, 3)
	copy(in.Int32s(), []int32{7, 8, 9})
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o644))
	require.NoError(t, WriteFile(p, in))
	got, err := ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, in.Data, got.Data)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")

	// A failed encode leaves the old file and no temporary file.
	bad := kernels.Tensor{DType: graph.String, Shape: []int64{1}}
	require.Error(t, WriteFile(p, bad))
	got, err = ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, in.Data, got.Data)
	entries, err = os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)

	// A directory that does not exist is an error, not a panic.
	require.Error(t, WriteFile(filepath.Join(dir, "nope", "x.npy"), in))
}

// TestWriteFileStreams: a FIFO or a character device at the path is written through, never
// replaced by a regular file (as root, --out /dev/null replaced /dev/null); a directory is
// refused and left as it was.
func TestWriteFileStreams(t *testing.T) {
	fi, err := os.Stat("/dev/null") // its mode only: nothing here opens it
	require.NoError(t, err)
	require.True(t, Streams(fi), "/dev/null is written through")

	dir := t.TempDir()
	in := kernels.MustTensor(graph.Int64, 2, 3)
	copy(in.Int64s(), []int64{1, 2, 3, 4, 5, 6})
	want := mustEncode(t, in)

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	require.NoError(t, CheckWritable(fifo), "a FIFO is not opened for the check (that would end a reader's stream)")
	got := make(chan []byte, 1)
	go func() {
		b, err := os.ReadFile(fifo) // waits for the writer, reads to its close
		if err != nil {
			b = []byte(err.Error())
		}
		got <- b
	}()
	require.NoError(t, WriteFile(fifo, in))
	require.Equal(t, want, <-got, "the reader gets the file's bytes")
	fi, err = os.Lstat(fifo)
	require.NoError(t, err)
	require.Equal(t, fs.ModeNamedPipe, fi.Mode().Type(), "still a FIFO")

	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.ErrorIs(t, CheckWritable(sub), ErrNotRegularFile)
	require.ErrorIs(t, WriteFile(sub, in), ErrNotRegularFile)
	fi, err = os.Lstat(sub)
	require.NoError(t, err)
	require.True(t, fi.IsDir(), "still a directory")

	// A null device of our own (root only): written through, still a character device.
	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("no character device of our own (%v): the FIFO stands for it", err)
	} else if err := CheckWritable(null); err != nil {
		t.Logf("the null device cannot be opened here (%v, a nodev mount?): the FIFO stands for it", err)
	} else {
		require.NoError(t, WriteFile(null, in))
		fi, err = os.Lstat(null)
		require.NoError(t, err)
		require.Equal(t, fs.ModeDevice|fs.ModeCharDevice, fi.Mode().Type(), "still a character device")
	}
	files := 2 // fifo, sub
	if _, err := os.Lstat(null); err == nil {
		files++
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, files, "no temporary file beside them")
}

func mustEncode(t *testing.T, tn kernels.Tensor) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Encode(&b, tn))
	return b.Bytes()
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"numpy_f4_2x7x64.npy", "numpy_i8_2x7.npy"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add(append(header("{'descr': '>i2', 'fortran_order': False, 'shape': (3,), }"), 1, 2, 3, 4, 5, 6))
	f.Add(header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 2), }"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := Decode(b)
		if err != nil {
			var fe *FormatError
			require.ErrorAs(t, err, &fe)
			return
		}
		n, err := graph.ByteSize(got.DType, got.Shape)
		require.NoError(t, err)
		require.EqualValues(t, n, len(got.Data))
		// What decodes re-encodes and decodes to the same tensor.
		var buf bytes.Buffer
		require.NoError(t, Encode(&buf, got))
		again, err := Decode(buf.Bytes())
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}
