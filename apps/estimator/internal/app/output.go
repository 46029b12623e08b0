package app

import (
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/google/renameio/v2"
)

// Output files (--svg, solve -o) are replaced whole or not at all, through a temporary file
// renamed over them, except a character device (/dev/null, /dev/stdout) or a FIFO, which is
// written through: renaming over one would put a regular file in its place (as root, even
// /dev/null's). A directory, a block device or a socket is refused before any work.

var (
	// errIsDirectory: an output path names a directory.
	errIsDirectory = errors.New("is a directory: give a file name")
	// errNotWritable: an output path names a block device or a socket.
	errNotWritable = errors.New("a block device or a socket: give a file, a character device (e.g. /dev/null) or a FIFO")
	// errReplaced: a character device or FIFO was replaced by another file while being opened.
	errReplaced = errors.New("replaced by another file while it was opened")
)

// streams says whether fi is a file that outputs are written through: a character device or a
// FIFO.
func streams(fi fs.FileInfo) bool { return fi.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0 }

// checkOutput refuses, before any work, an output path that writeOutput could not write: a
// directory, a block device or a socket, as an *fs.PathError of Op "write" (explain words it).
func checkOutput(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil || fi.Mode().IsRegular() || streams(fi):
		return nil // a missing directory or one without room fails at the write, naming the file
	case fi.IsDir():
		return &fs.PathError{Op: "write", Path: path, Err: errIsDirectory}
	}
	return &fs.PathError{Op: "write", Path: path, Err: errNotWritable}
}

// writeOutput writes what write produces to path: through it if it is a character device or a
// FIFO (a FIFO's open waits for a reader, as a shell's redirection does), else atomically.
// Errors name path.
func writeOutput(path string, write func(io.Writer) error) error {
	if err := checkOutput(path); err != nil {
		return err
	}
	if fi, err := os.Stat(path); err == nil && streams(fi) {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return atPath(path, err)
		}
		if fi, err := f.Stat(); err == nil && !streams(fi) { // never write into a regular file unannounced
			f.Close()
			return &fs.PathError{Op: "write", Path: path, Err: errReplaced}
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return atPath(path, err)
		}
		return nil
	}
	f, err := renameio.NewPendingFile(path, renameio.WithPermissions(0o644))
	if err != nil {
		return atPath(path, err)
	}
	defer f.Cleanup()
	if err := write(f); err != nil {
		return atPath(path, err)
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return atPath(path, err)
	}
	return nil
}
