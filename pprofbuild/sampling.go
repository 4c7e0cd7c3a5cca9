package pprofbuild

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/internal/procstat"
	"github.com/clrprof/clrprof/profiler"
)

// ThreadCPU reads how much CPU time, in nanoseconds, a thread of this
// process has used; false if it cannot. It reads the thread's CPU-time
// clock (clock_gettime with the clock id pthread_getcpuclockid would
// give: one system call, no allocation), and where the kernel refuses,
// /proc/self/task/TID/schedstat (the same count).
func ThreadCPU(tid uint32) (int64, bool) {
	if ns, ok := threadClock(tid); ok {
		return ns, true
	}
	return threadSchedstat(tid)
}

// threadClock reads a thread's CPU-time clock.
func threadClock(tid uint32) (int64, bool) {
	if tid == 0 {
		return 0, false
	}
	return procstat.ClockNanos(procstat.ThreadClock(tid))
}

func threadSchedstat(tid uint32) (int64, bool) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.FormatUint(uint64(tid), 10) + "/schedstat")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	return n, err == nil
}

// FailureCause names why a sampling tick (Info.SnapshotAllThreads)
// failed: "suspension-in-progress" (a garbage collection held the runtime
// suspended for longer than SnapshotAllThreads retries),
// "unsupported-call-sequence", "runtime-uninitialized", or the error's
// text.
func FailureCause(err error) string {
	switch {
	case errors.Is(err, profiler.CORPROF_E_SUSPENSION_IN_PROGRESS):
		return "suspension-in-progress"
	case errors.Is(err, profiler.CORPROF_E_UNSUPPORTED_CALL_SEQUENCE):
		return "unsupported-call-sequence"
	case errors.Is(err, profiler.CORPROF_E_RUNTIME_UNINITIALIZED):
		return "runtime-uninitialized"
	default:
		return err.Error()
	}
}

// Ticks counts a sampler's ticks and, by cause, the ticks that took no
// sample, for a sampler's log and its profiles' comments. Safe for
// concurrent use.
type Ticks struct {
	mu      sync.Mutex
	ticks   int
	causes  map[string]int
	skipped int
	// the threads of successful snapshots that gave no sample: walks that
	// failed, by cause, and threads without a managed frame
	threadCauses map[string]int
	noFrames     int
}

// Thread counts one thread of a snapshot that gave no sample: its walk
// failed (err, counted by cause), or it had no managed frame to show
// (err nil: a thread that has not run managed code yet, or runs only
// native code, such as the finalizer waiting).
func (t *Ticks) Thread(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil {
		t.noFrames++
		return
	}
	if t.threadCauses == nil {
		t.threadCauses = map[string]int{}
	}
	t.threadCauses[FailureCause(err)]++
}

// Skip counts one tick the sampler skipped on purpose (to keep within an
// overhead budget): it took no sample, and is reported apart from the
// failures.
func (t *Ticks) Skip() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ticks++
	t.skipped++
}

// Tick counts one tick; a non-nil err counts it as failed, by cause.
func (t *Ticks) Tick(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ticks++
	if err != nil {
		if t.causes == nil {
			t.causes = map[string]int{}
		}
		t.causes[FailureCause(err)]++
	}
}

// Report is "ticks=N failures=M", with " (cause:n, ...)" when M > 0,
// " skipped=K (overhead budget)" when K > 0, " thread_failures=F (cause:n,
// ...)" when F > 0 and " threads_without_frames=E" when E > 0; with reset
// the counts start over.
func (t *Ticks) Report(reset bool) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	total := 0
	causes := make([]string, 0, len(t.causes))
	for c, n := range t.causes {
		total += n
		causes = append(causes, fmt.Sprintf("%s:%d", c, n))
	}
	sort.Strings(causes)
	s := fmt.Sprintf("ticks=%d failures=%d", t.ticks, total)
	if total > 0 {
		s += " (" + strings.Join(causes, ", ") + ")"
	}
	if t.skipped > 0 {
		s += fmt.Sprintf(" skipped=%d (overhead budget)", t.skipped)
	}
	if len(t.threadCauses) > 0 {
		n := 0
		causes := make([]string, 0, len(t.threadCauses))
		for c, k := range t.threadCauses {
			n += k
			causes = append(causes, fmt.Sprintf("%s:%d", c, k))
		}
		sort.Strings(causes)
		s += fmt.Sprintf(" thread_failures=%d (%s)", n, strings.Join(causes, ", "))
	}
	if t.noFrames > 0 {
		s += fmt.Sprintf(" threads_without_frames=%d", t.noFrames)
	}
	if reset {
		t.ticks, t.causes, t.skipped = 0, nil, 0
		t.threadCauses, t.noFrames = nil, 0
	}
	return s
}

// Functions returns the function IDs of a stack's frames.
func Functions(frames []profiler.StackFrame) []profiler.FunctionID {
	out := make([]profiler.FunctionID, len(frames))
	for i, f := range frames {
		out[i] = f.Function
	}
	return out
}
