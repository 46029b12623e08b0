//go:build unix

package alloc

import "syscall"

// mapMemory obtains n bytes of zeroed host memory outside the Go heap, so that its address is
// stable, invisible to the garbage collector and can travel as an integer Ptr. (The race
// detector does not instrument such memory either, which is what lets tests provoke and detect
// stream-ordering corruption on purpose.)
func mapMemory(n int64) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmapMemory returns memory obtained by mapMemory to the operating system.
func unmapMemory(b []byte) error { return syscall.Munmap(b) }
