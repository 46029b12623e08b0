//go:build !unix

package graph

import "os"

// mapFile reads the whole file: this platform has no syscall.Mmap.
func mapFile(path string) ([]byte, error) { return os.ReadFile(path) }

func unmapFile([]byte) error { return nil }
