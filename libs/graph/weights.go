package graph

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// weightStore owns the memory behind a model's weights: the mapped model file, if any, and
// the external data files, each mapped at most once, on first use.
type weightStore struct {
	dir string // the model's directory as given; external locations are relative to it
	// realDir is the directory of the model file's real path (symbolic links resolved), ""
	// when the model came from a caller's buffer.
	realDir string
	model   []byte // the mapped model file; nil when the model came from a caller's buffer
	unmap   func([]byte) error

	mu    sync.Mutex
	files map[string]*extFile
}

// extFile is one external data file. Its size is read at load (to validate offsets); its
// bytes are mapped read-only on first use.
type extFile struct {
	location string
	path     string
	size     int64 // -1 when the file was missing or unreadable at load
	statErr  error

	once sync.Once
	data []byte
	err  error
	st   *weightStore
}

// file returns the extFile for a location, validating the location and reading the file's
// size the first time.
func (s *weightStore) file(location string) (*extFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[location]; ok {
		return f, nil
	}
	if err := checkLocation(location); err != nil {
		return nil, err
	}
	f := &extFile{location: location, path: filepath.Join(s.dir, filepath.FromSlash(location)), size: -1, st: s}
	if s.dir == "" {
		f.statErr = errors.New("the model was not loaded from a file, so external data cannot be found")
	} else if real, err := s.resolve(location, f.path); err != nil {
		if errors.Is(err, ErrLocationEscapes) {
			return nil, err
		}
		f.statErr = err // missing: reported when the bytes are asked for
	} else if fi, err := os.Stat(real); err != nil {
		f.statErr = err
	} else if !fi.Mode().IsRegular() {
		f.statErr = notRegular(f.path, fi)
	} else {
		f.path, f.size = real, fi.Size()
	}
	if s.files == nil {
		s.files = make(map[string]*extFile)
	}
	s.files[location] = f
	return f, nil
}

// ErrLocationEscapes: an external data location whose file, symbolic links resolved, lies
// outside the model's folder.
var ErrLocationEscapes = errors.New("external data escapes the model's folder")

// ErrNotRegularFile: a model or external data path that names a directory, device, FIFO or
// socket. Such files are refused before they are read: a FIFO or /dev/zero never ends.
var ErrNotRegularFile = errors.New("not a regular file")

// notRegular describes a path that is not a regular file, as an *fs.PathError.
func notRegular(path string, fi fs.FileInfo) error {
	if fi.IsDir() {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("is a directory, %w", ErrNotRegularFile)}
	}
	return &fs.PathError{Op: "open", Path: path, Err: ErrNotRegularFile}
}

// resolve returns the real path of the external data file at path (location joined to the
// model's folder), symbolic links resolved, and accepts it only where onnxruntime does (its PR
// 27374): under the model's folder as given (itself resolved), or under the folder of the
// model file's real path. The first keeps links inside a model's folder working; the second
// keeps the Hugging Face cache working, where snapshots/REV/model.onnx and its data are both
// links into ../../blobs/. A link that leads anywhere else is an error wrapping
// ErrLocationEscapes; a missing file is the error of filepath.EvalSymlinks.
func (s *weightStore) resolve(location, path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", err
	}
	dir := s.dir
	if d, err := filepath.EvalSymlinks(s.dir); err == nil {
		dir = d
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if within(real, dir) || (s.realDir != "" && within(real, s.realDir)) {
		return real, nil
	}
	return "", fmt.Errorf("location %q resolves to %s: %w (%s)", location, real, ErrLocationEscapes, s.dir)
}

// within reports whether path lies inside dir; both are absolute and clean.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsLocal(rel)
}

// checkLocation rejects external data locations that could reach outside the model's
// directory: absolute paths, parent references, and empty names.
func checkLocation(loc string) error {
	if loc == "" {
		return errors.New("empty location")
	}
	if strings.ContainsRune(loc, 0) || strings.Contains(loc, "\\") {
		return fmt.Errorf("location %q has a NUL or backslash", loc)
	}
	if filepath.IsAbs(loc) || strings.HasPrefix(loc, "/") || !filepath.IsLocal(filepath.FromSlash(loc)) {
		return fmt.Errorf("location %q is not a relative path inside the model's directory", loc)
	}
	return nil
}

// mapped returns the file's bytes, mapping it on first use.
func (f *extFile) mapped() ([]byte, error) {
	f.once.Do(func() {
		if f.statErr != nil {
			f.err = f.statErr
			return
		}
		f.data, f.err = mapFile(f.path)
		if f.err == nil && int64(len(f.data)) != f.size {
			f.err = fmt.Errorf("%s changed size after load: %d bytes, was %d", f.path, len(f.data), f.size)
		}
	})
	return f.data, f.err
}

func (s *weightStore) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, f := range s.files {
		if f.data != nil {
			errs = append(errs, unmapFile(f.data))
			f.data = nil
			f.err = errors.New("the model is closed")
		}
	}
	if s.model != nil && s.unmap != nil {
		errs = append(errs, s.unmap(s.model))
		s.model = nil
	}
	return errors.Join(errs...)
}
