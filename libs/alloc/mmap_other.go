//go:build !unix

package alloc

// mapMemory falls back to Go memory where mmap is unavailable. The CPUDevice keeps the slice
// referenced until Free, and Go's collector does not move objects, so the address stays valid.
func mapMemory(n int64) ([]byte, error) { return make([]byte, n), nil }

func unmapMemory(b []byte) error { return nil }
