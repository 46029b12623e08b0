package par

import "syscall"

// osYield gives the thread's core to another runnable thread, if any (sched_yield). A spinning
// participant calls it so that one whose thread the kernel descheduled (the process has more
// threads than cores, or shares them) runs sooner: runtime.Gosched yields only the processor,
// to goroutines. It is a raw system call: sched_yield does not block, and through
// syscall.Syscall the runtime could hand the processor to a new thread (allocating one) while
// the kernel runs another.
func osYield() {
	syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
}
