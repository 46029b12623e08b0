// Package npyfile reads and writes NumPy .npy files as carve host tensors.
//
// The header (magic, version, the dict with descr, fortran_order and shape) is parsed by
// codeberg.org/sbinet/npyio. The data is copied here, in one piece, because npyio's Reader
// decodes element by element through reflection, accepts a file that ends on an element
// boundary short of its shape, and can only write one-dimensional arrays from flat slices:
// carve's tensors are flat byte buffers with an N-d shape, so reading the bytes after the
// header and writing a version 1.0 header by hand (NEP 1, a few lines) is both simpler and
// stricter.
package npyfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"carve.dev/libs/graph"
	"carve.dev/libs/kernels"
	"codeberg.org/sbinet/npyio"
)

// MaxHeaderBytes bounds the header dict a file may declare, so a corrupt length field cannot
// make the reader allocate gigabytes. numpy writes headers of a few hundred bytes.
const MaxHeaderBytes = 1 << 16

// FormatError reports a file that is not a well-formed .npy file, or one whose dtype or
// layout carve cannot use.
type FormatError struct {
	File    string // "" when decoding bytes without a name
	Problem string
}

func (e *FormatError) Error() string {
	if e.File == "" {
		return "bad .npy data: " + e.Problem
	}
	return fmt.Sprintf("bad .npy file %s: %s", e.File, e.Problem)
}

// numpy typestrs (without byte order) by dtype, and back.
var (
	typestrs = map[graph.DType]string{
		graph.Bool: "b1", graph.Int8: "i1", graph.Uint8: "u1",
		graph.Int16: "i2", graph.Uint16: "u2", graph.Float16: "f2",
		graph.Int32: "i4", graph.Uint32: "u4", graph.Float32: "f4",
		graph.Int64: "i8", graph.Uint64: "u8", graph.Float64: "f8",
	}
	dtypes = func() map[string]graph.DType {
		m := map[string]graph.DType{}
		for dt, s := range typestrs {
			m[s] = dt
		}
		return m
	}()
)

// ErrNotRegularFile: ReadFile was given a directory, device, FIFO or socket, or WriteFile a
// directory, block device or socket. ReadFile refuses such files before it opens them: /dev/zero
// never ends, and opening a FIFO blocks.
var ErrNotRegularFile = errors.New("not a regular file")

// ReadFile reads a .npy file into a host tensor. path must name a regular file. The header is
// read first (at most MaxHeaderBytes), and the file's size must be exactly the header plus the
// data its dtype and shape imply; only then is the data read, so no file makes the reader
// allocate more than it holds. Errors name the file: *FormatError, or an *fs.PathError
// (wrapping ErrNotRegularFile for a file that is not regular).
func ReadFile(path string) (kernels.Tensor, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return kernels.Tensor{}, err
	}
	if !fi.Mode().IsRegular() {
		return kernels.Tensor{}, &fs.PathError{Op: "read", Path: path, Err: ErrNotRegularFile}
	}
	f, err := os.Open(path)
	if err != nil {
		return kernels.Tensor{}, err
	}
	defer f.Close()
	t, err := read(f)
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.File = path
	}
	return t, err
}

// read reads an open .npy file: the header, then exactly the data it implies.
func read(f *os.File) (kernels.Tensor, error) {
	fi, err := f.Stat()
	if err != nil {
		return kernels.Tensor{}, err
	}
	if !fi.Mode().IsRegular() { // replaced since ReadFile's Stat
		return kernels.Tensor{}, &fs.PathError{Op: "read", Path: f.Name(), Err: ErrNotRegularFile}
	}
	size := fi.Size()
	prefix := make([]byte, min(size, 12+MaxHeaderBytes))
	if _, err := io.ReadFull(f, prefix); err != nil {
		return kernels.Tensor{}, err
	}
	h, err := decodeHeader(prefix)
	if err != nil {
		return kernels.Tensor{}, err
	}
	if data := size - int64(h.dataOff); data != h.bytes {
		return kernels.Tensor{}, h.sizeError(data)
	}
	t := kernels.Tensor{DType: h.dt, Shape: h.shape, Data: make([]byte, h.bytes)}
	if _, err := f.ReadAt(t.Data, int64(h.dataOff)); err != nil && !(errors.Is(err, io.EOF) && h.bytes == 0) {
		return kernels.Tensor{}, err
	}
	h.fix(t.Data)
	return t, nil
}

// Decode parses the bytes of a .npy file into a host tensor whose Data is a fresh copy. Only
// C-order (or one-dimensional) arrays of the numeric and bool dtypes are accepted; big-endian
// data is swapped to the host's little-endian order. The data must be exactly as long as the
// shape says. Errors are *FormatError.
func Decode(b []byte) (kernels.Tensor, error) {
	h, err := decodeHeader(b)
	if err != nil {
		return kernels.Tensor{}, err
	}
	data := b[h.dataOff:]
	if int64(len(data)) != h.bytes {
		return kernels.Tensor{}, h.sizeError(int64(len(data)))
	}
	t := kernels.Tensor{DType: h.dt, Shape: h.shape, Data: make([]byte, h.bytes)}
	copy(t.Data, data)
	h.fix(t.Data)
	return t, nil
}

// npyHeader is what a .npy header says about the data after it.
type npyHeader struct {
	dt      graph.DType
	shape   []int64
	swap    bool  // big-endian data of a multi-byte dtype
	dataOff int   // where the data starts
	bytes   int64 // the data's size
}

func (h npyHeader) sizeError(have int64) error {
	return &FormatError{Problem: fmt.Sprintf("holds %d data bytes, shape %v of %s needs %d (truncated or padded file)", have, h.shape, h.dt, h.bytes)}
}

// fix swaps big-endian data to the host's order.
func (h npyHeader) fix(data []byte) {
	if h.swap {
		swapBytes(data, int(h.dt.Size()))
	}
}

// decodeHeader parses the header at the start of b, which may hold more than the header.
func decodeHeader(b []byte) (npyHeader, error) {
	bad := func(format string, args ...any) (npyHeader, error) {
		return npyHeader{}, &FormatError{Problem: fmt.Sprintf(format, args...)}
	}
	// The fixed prefix is checked here, before npyio sees it, so that a corrupt length never
	// reaches an allocation: magic (6), version (2), header length (2 in version 1, 4 in 2).
	if len(b) < 10 || !bytes.Equal(b[:6], npyio.Magic[:]) {
		return bad("not a .npy file (no \\x93NUMPY magic at the start)")
	}
	var hdrLen, start int
	switch b[6] {
	case 1:
		hdrLen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2:
		if len(b) < 12 {
			return bad("truncated header")
		}
		hdrLen, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return bad("format version %d.%d is not supported (want 1.0 or 2.0)", b[6], b[7])
	}
	if hdrLen > MaxHeaderBytes {
		return bad("header of %d bytes is implausibly large", hdrLen)
	}
	dataOff := start + hdrLen
	if len(b) < dataOff {
		return bad("truncated header (%d bytes, it declares %d)", len(b)-start, hdrLen)
	}
	if hdrLen == 0 || b[dataOff-1] != '\n' {
		return bad("header does not end with a newline")
	}
	hdr, err := parseHeader(b[:dataOff])
	if err != nil {
		return bad("unreadable header: %v", err)
	}

	descr := strings.Trim(hdr.Descr.Type, "'\"") // npyio keeps numpy 2's quotes
	if len(descr) < 3 {
		return bad("unsupported dtype %q", descr)
	}
	order, kind := descr[0], descr[1:]
	dt, ok := dtypes[kind]
	if !ok || !strings.ContainsRune("<>|=", rune(order)) {
		return bad("unsupported dtype %q (carve reads bool, int8-64, uint8-64, float16, float32, float64)", descr)
	}
	shape := make([]int64, len(hdr.Descr.Shape))
	for i, d := range hdr.Descr.Shape {
		if d < 0 {
			return bad("negative dim %d in shape %v", d, hdr.Descr.Shape)
		}
		shape[i] = int64(d)
	}
	if hdr.Descr.Fortran && nonTrivialDims(shape) > 1 {
		return bad("Fortran-order arrays are not supported: save with np.ascontiguousarray")
	}
	n, err := graph.ByteSize(dt, shape)
	if err != nil {
		return bad("shape %v: %v", shape, err)
	}
	return npyHeader{dt: dt, shape: shape, swap: order == '>' && dt.Size() > 1, dataOff: dataOff, bytes: n}, nil
}

// parseHeader runs npyio's header parser, which indexes into the header dict without bounds
// checks and panics on some malformed dicts; the panic is turned into an error.
func parseHeader(prefix []byte) (hdr npyio.Header, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed header dict")
		}
	}()
	r, err := npyio.NewReader(bytes.NewReader(prefix))
	if err != nil {
		return hdr, err
	}
	return r.Header, nil
}

func nonTrivialDims(shape []int64) int {
	n := 0
	for _, d := range shape {
		if d != 1 {
			n++
		}
	}
	return n
}

func swapBytes(b []byte, size int) {
	for i := 0; i+size <= len(b); i += size {
		e := b[i : i+size]
		for l, r := 0, size-1; l < r; l, r = l+1, r-1 {
			e[l], e[r] = e[r], e[l]
		}
	}
}

// Encode writes t as a version 1.0 .npy file (version 2.0 if the header needs it). bfloat16,
// which has no numpy dtype, is widened to float32 (exactly). The host is little-endian.
func Encode(w io.Writer, t kernels.Tensor) error {
	dt, data := t.DType, t.Data
	if dt == graph.BFloat16 {
		dt, data = graph.Float32, bf16ToF32(data)
	}
	kind, ok := typestrs[dt]
	if !ok {
		return fmt.Errorf("npyfile: dtype %s has no .npy equivalent", t.DType)
	}
	n, err := graph.ByteSize(dt, t.Shape)
	if err != nil {
		return fmt.Errorf("npyfile: %w", err)
	}
	if int64(len(data)) != n {
		return fmt.Errorf("npyfile: tensor %s holds %d bytes, its shape needs %d", t, len(data), n)
	}
	order := "<"
	if dt.Size() == 1 {
		order = "|"
	}
	var shape strings.Builder
	shape.WriteByte('(')
	for i, d := range t.Shape {
		if i > 0 {
			shape.WriteString(", ")
		}
		fmt.Fprintf(&shape, "%d", d)
	}
	if len(t.Shape) == 1 {
		shape.WriteByte(',')
	}
	shape.WriteByte(')')
	dict := fmt.Sprintf("{'descr': '%s%s', 'fortran_order': False, 'shape': %s, }", order, kind, shape.String())

	// The magic, version, length field and dict, padded with spaces and a final newline to a
	// multiple of 64 bytes, so the data is aligned (NEP 1).
	major, lenField := byte(1), 2
	if len(dict)+1+10 > math.MaxUint16 {
		major, lenField = 2, 4
	}
	pre := 6 + 2 + lenField
	total := (pre + len(dict) + 1 + 63) / 64 * 64
	hdr := make([]byte, 0, total)
	hdr = append(hdr, npyio.Magic[:]...)
	hdr = append(hdr, major, 0)
	if major == 1 {
		hdr = binary.LittleEndian.AppendUint16(hdr, uint16(total-pre))
	} else {
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(total-pre))
	}
	hdr = append(hdr, dict...)
	for len(hdr) < total-1 {
		hdr = append(hdr, ' ')
	}
	hdr = append(hdr, '\n')
	bw := bufio.NewWriter(w)
	bw.Write(hdr)
	bw.Write(data)
	return bw.Flush()
}

func bf16ToF32(b []byte) []byte {
	out := make([]byte, len(b)*2)
	for i := 0; i+2 <= len(b); i += 2 {
		binary.LittleEndian.PutUint32(out[i*2:], uint32(binary.LittleEndian.Uint16(b[i:]))<<16)
	}
	return out
}

// Streams says whether path names a file that WriteFile writes through rather than replaces: a
// character device (/dev/null, /dev/stdout) or a FIFO. Replacing one would put a regular file in
// its place (as root, even /dev/null's).
func Streams(fi fs.FileInfo) bool {
	return fi.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0
}

// CheckWritable reports, before any work, whether WriteFile can write path. It returns nil for a
// path that does not exist or names a regular file (the caller checks the directory), a
// character device it can open for writing, and a FIFO (opening one for a check would end a
// reader's stream: WriteFile's open tells); an *fs.PathError wrapping ErrNotRegularFile for a
// directory, a block device or a socket, which WriteFile refuses; and the error of opening a
// character device it may not write.
func CheckWritable(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil || fi.Mode().IsRegular() || fi.Mode()&fs.ModeNamedPipe != 0:
		return nil
	case !Streams(fi):
		return &fs.PathError{Op: "write", Path: path, Err: ErrNotRegularFile}
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// WriteFile writes t to path. A regular file (or none) is replaced atomically: t goes into a
// temporary file in the same directory, synced, then renamed over path, so a reader never sees a
// half-written file. A character device or a FIFO (Streams) is written through, opened as it is
// (a FIFO's open waits for a reader, as a shell's redirection does). A directory, block device
// or socket is refused with an *fs.PathError wrapping ErrNotRegularFile.
func WriteFile(path string, t kernels.Tensor) (err error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if !Streams(fi) {
			return &fs.PathError{Op: "write", Path: path, Err: ErrNotRegularFile}
		}
		return writeThrough(path, t)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := Encode(f, t); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeThrough writes t into the character device or FIFO at path, opened for writing as it is.
func writeThrough(path string, t kernels.Tensor) (err error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	if fi, err := f.Stat(); err != nil {
		return err
	} else if !Streams(fi) { // replaced since WriteFile's Stat: never write into a file unannounced
		return &fs.PathError{Op: "write", Path: path, Err: ErrNotRegularFile}
	}
	return Encode(f, t)
}
