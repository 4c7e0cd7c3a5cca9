//go:build linux

package procstat

import (
	"syscall"
	"unsafe"
)

// ClockThreadCPUTime is CLOCK_THREAD_CPUTIME_ID: the calling thread's
// CPU-time clock.
const ClockThreadCPUTime = 3

// ThreadClock is the CPU-time clock of thread tid of this process (the
// id pthread_getcpuclockid would give: the bitwise not of the thread id
// shifted left by 3, with CPUCLOCK_PERTHREAD (4) and CPUCLOCK_SCHED (2),
// the kernel's count of the time the thread ran).
func ThreadClock(tid uint32) int64 { return int64(^uint64(tid)<<3 | 6) }

// ClockNanos reads a clock (clock_gettime(2): one system call, no
// allocation), in nanoseconds; false where the kernel refuses.
func ClockNanos(clock int64) (int64, bool) {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
