package profiler_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

const stormprofCLSID = "{6E1D8C47-2B9A-4F3E-8D5C-1A7B9E2F4C60}"

var stormRe = regexp.MustCompile(`(?m)^stormprof: signals=(\d+) threads=(\d+) allocations=(\d+) exceptions=(\d+) throttled=(\d+)$`)

// stormSeconds is how long each storm runs: CLRPROF_STORM_SECONDS (the
// reliability suite sets a longer one), default 2.
func stormSeconds(t *testing.T) string {
	if v := os.Getenv("CLRPROF_STORM_SECONDS"); v != "" {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			t.Fatalf("CLRPROF_STORM_SECONDS=%q: %v", v, err)
		}
		return v
	}
	return "2"
}

func runStorm(t *testing.T, rt harness.Runtime, lib, app string, timeout time.Duration, env ...string) harness.Result {
	t.Helper()
	return runStormOpts(t, rt, lib, app, timeout, false, env...)
}

func runStormOpts(t *testing.T, rt harness.Runtime, lib, app string, timeout time.Duration, expectCrash bool, env ...string) harness.Result {
	t.Helper()
	return harness.Run(t, rt, app, harness.RunOptions{
		ExpectCrash:  expectCrash,
		ProfilerPath: lib, ProfilerCLSID: stormprofCLSID,
		Args: []string{"gcstorm", stormSeconds(t)},
		// Both the runtime's activation signal and the Go runtime's
		// preemption signal (SIGURG, which Go's handler takes on the
		// alternate signal stack); info logging for the router's counts.
		Env:     append([]string{"STORMPROF_SIGNALS=rtmin,urg", "CLRPROF_LOG_LEVEL=info"}, env...),
		Timeout: timeout,
	})
}

var routerRe = regexp.MustCompile(`msg="shut down" sigsegvOnPrivateStack=(\d+) sigsegvReturned=(\d+) sigsegvOnAltStack=(\d+) sigsegvReasserted=(\d+)`)

// routerCounts reads the SIGSEGV router's counts from the SDK's shutdown
// log line: faults handed to the runtime on the private stack, returned
// from, on the alternate stack, and re-assertions over a newer handler.
func routerCounts(t *testing.T, res harness.Result) (private, returned, alt, reasserted int) {
	t.Helper()
	m := routerRe.FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("no shutdown line with the router's counts:\n%s", res.Describe())
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return n(m[1]), n(m[2]), n(m[3]), n(m[4])
}

// stormTimeout allows a storm run its duration plus slack.
func stormTimeout(t *testing.T, slack time.Duration) time.Duration {
	s, _ := strconv.ParseFloat(stormSeconds(t), 64)
	return time.Duration(s*float64(time.Second)) + slack
}

// TestSignalStorm is the reproducer of golang/go#78883 and
// dotnet/runtime#127320 on every runtime: 8 threads allocate and throw
// (ObjectAllocated and ExceptionThrown handled synchronously in Go: threads
// in cooperative-mode callbacks running Go code), a ninth calls GC.Collect
// in a loop, and the profiler sends SIGRTMIN, the runtime's GC-suspension
// activation signal, with tgkill to every thread it has seen, every 10µs.
// With the SDK's signal measures the app must complete every time.
func TestSignalStorm(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/stormprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		res := runStorm(t, rt, lib, app, stormTimeout(t, 3*time.Minute))
		res.MustSucceed(t)
		res.MustStdoutContain(t, "gcstorm: rounds=")
		m := stormRe.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("no stormprof report:\n%s", res.Describe())
		}
		signals, _ := strconv.Atoi(m[1])
		allocs, _ := strconv.Atoi(m[3])
		exceptions, _ := strconv.Atoi(m[4])
		private, returned, alt, reasserted := routerCounts(t, res)
		reblocked, lapses := res.GuardCounts(t)
		t.Logf("%s: %s; %s; router: %d faults on the private stack (%d returned), %d on the alternate stack, %d re-assertions; guard: %d first calls re-blocked, %d lapses; crashes: 0",
			rt.Name, strings.TrimSpace(m[0]), strings.TrimSpace(res.StdoutLines()[len(res.StdoutLines())-1]), private, returned, alt, reasserted, reblocked, lapses)
		if lapses != 0 {
			t.Errorf("%s: %d guarded calls into Go ended with SIGRTMIN unblocked", rt.Name, lapses)
		}
		if signals < 1000 || allocs < 1000 {
			t.Errorf("%s: the storm was too weak to prove anything: %d signals, %d allocations", rt.Name, signals, allocs)
		}
		// Every NullReferenceException of the storm threads (each of which
		// called into Go before its first one) went through the private
		// stack: half the exceptions the profiler saw are NREs.
		if private < exceptions/2 || alt != 0 {
			t.Errorf("%s: %d faults on the private stack and %d on the alternate stack for %d exceptions: the storm's NullReferenceExceptions did not all take the private stack", rt.Name, private, alt, exceptions)
		}
	})
}

// TestSignalStormWithoutMeasures runs the same storm with the SDK's signal
// measures turned off (CLRPROF_SIGNAL_GUARD=0: SIGRTMIN is not blocked
// while Go runs in a callback; CLRPROF_SIGNAL_AUDIT=0: the handlers keep
// what the Go runtime did to them; CLRPROF_SEGV_PRIVATE_STACK=0: the
// runtime's SIGSEGV handler keeps its frames on the alternate signal stack,
// where SIGURG lands) and logs what happens on each runtime. It shows that
// the measures are needed: at least one runtime must crash (or hang) in one
// of the settings (each tried at most three times), and without the private stack
// every runtime must.
func TestSignalStormWithoutMeasures(t *testing.T) {
	if testing.Short() {
		t.Skip("crash demonstration; not in -short")
	}
	lib := harness.BuildProfiler(t, "./profiler/testdata/stormprof")
	crashes, privateCrashes, runtimes := 0, 0, 0
	var summary []string
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		runtimes++
		for _, knob := range []string{"CLRPROF_SIGNAL_GUARD=0", "CLRPROF_SIGNAL_AUDIT=0", "CLRPROF_SEGV_PRIVATE_STACK=0"} {
			outcome := "survived 3 runs"
			for attempt := 1; attempt <= 3; attempt++ {
				// A run that hangs (GC suspension never completing) is
				// killed after 30 s of slack and counts as a failure too.
				res := runStormOpts(t, rt, lib, app, stormTimeout(t, 30*time.Second), true, knob)
				if !res.Succeeded() {
					outcome = "crashed (" + res.Status() + ") in run " + strconv.Itoa(attempt)
					crashes++
					if knob == "CLRPROF_SEGV_PRIVATE_STACK=0" {
						privateCrashes++
					}
					break
				}
			}
			summary = append(summary, rt.Name+" with "+knob+": "+outcome)
		}
	})
	t.Logf("without the signal measures:\n  %s", strings.Join(summary, "\n  "))
	if crashes == 0 && len(summary) > 0 {
		t.Errorf("no runtime crashed without the signal measures: this test no longer shows that they are needed")
	}
	if privateCrashes < runtimes {
		t.Errorf("without the private SIGSEGV stack only %d of %d runtimes crashed under the SIGURG storm: this test no longer shows that it is needed", privateCrashes, runtimes)
	}
}

var stormPerfRe = regexp.MustCompile(`(?m)^stormprof: perf samples=(\d+) managed=(\d+) lost=(\d+) threads=(\d+) failed=(\d+) broken=(\d+) short=(\d+) stopped=(\d+)$`)

// TestSignalStormPerf is TestSignalStorm with the kernel's perf events
// sampling every storm thread at 1000 Hz of CPU (package perfevent, the
// mechanism of sample/cpuprof's CPUPROF_MODE=perf: each sample's registers
// and top 32 KiB of stack, unwound by call frame information and frame
// pointers, through the storm's signal frames too) and every sampled
// address mapped with GetFunctionFromIP from a goroutine, during the
// storm of SIGRTMIN and SIGURG, allocations, exceptions and collections.
// The app must complete every time, and the sampler must have sampled
// (managed frames among its samples).
func TestSignalStormPerf(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/stormprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		res := runStorm(t, rt, lib, app, stormTimeout(t, 3*time.Minute), "STORMPROF_PERF=1000")
		res.MustSucceed(t)
		res.MustStdoutContain(t, "gcstorm: rounds=")
		m, pm := stormRe.FindStringSubmatch(res.Stderr), stormPerfRe.FindStringSubmatch(res.Stderr)
		if m == nil || pm == nil {
			t.Fatalf("no stormprof report:\n%s", res.Describe())
		}
		signals, _ := strconv.Atoi(m[1])
		samples, _ := strconv.Atoi(pm[1])
		managed, _ := strconv.Atoi(pm[2])
		t.Logf("%s: %s; %s; crashes: 0", rt.Name, strings.TrimSpace(m[0]), strings.TrimSpace(pm[0]))
		if signals < 1000 || samples < 100 || managed == 0 {
			t.Errorf("%s: the storm or the sampler was too weak to prove anything: %d signals, %d samples (%d with a managed frame)", rt.Name, signals, samples, managed)
		}
	})
}
