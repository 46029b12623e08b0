package park

import (
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	futexWaitPrivate = 0 | 128 // FUTEX_WAIT | FUTEX_PRIVATE_FLAG
	futexWakePrivate = 1 | 128 // FUTEX_WAKE | FUTEX_PRIVATE_FLAG
)

// wait sleeps the thread while *addr == val, for at most timeout if it is positive. It is a
// blocking system call (syscall.Syscall6, not RawSyscall6): the runtime lets the processor go to
// another thread while it sleeps.
func wait(addr *atomic.Uint32, val uint32, timeout time.Duration) {
	var ts *syscall.Timespec
	var t syscall.Timespec
	if timeout > 0 {
		t = syscall.NsecToTimespec(int64(timeout))
		ts = &t
	}
	syscall.Syscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWaitPrivate, uintptr(val), uintptr(unsafe.Pointer(ts)), 0, 0)
}

// wake wakes up to n threads sleeping on addr. FUTEX_WAKE does not block, so it is a raw
// system call: through syscall.Syscall the runtime could hand the processor to another thread
// (starting, and allocating, one) while the kernel runs it.
func wake(addr *atomic.Uint32, n int) {
	syscall.RawSyscall6(syscall.SYS_FUTEX, uintptr(unsafe.Pointer(addr)), futexWakePrivate, uintptr(n), 0, 0, 0)
}
