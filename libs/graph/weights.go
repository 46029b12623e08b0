package graph

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// weightStore owns the memory behind a model's weights: the mapped model file, if any, and
// the external data files, each mapped at most once, on first use.
type weightStore struct {
	dir   string // the model's directory; external locations are relative to it
	model []byte // the mapped model file; nil when the model came from a caller's buffer
	unmap func([]byte) error

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
	} else if fi, err := os.Stat(f.path); err != nil {
		f.statErr = err
	} else if !fi.Mode().IsRegular() {
		f.statErr = fmt.Errorf("%s is not a regular file", f.path)
	} else {
		f.size = fi.Size()
	}
	if s.files == nil {
		s.files = make(map[string]*extFile)
	}
	s.files[location] = f
	return f, nil
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
