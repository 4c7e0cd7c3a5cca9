package profiler_test

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

var (
	rtEventRe = regexp.MustCompile(`(?m)^rtevents: event (\w+)/(\d+)/v(\d+) count=(\d+) stacks=(\d+)$`)
	rtGCsRe   = regexp.MustCompile(`(?m)^rtevents: gcs (.*)$`)
	rtContRe  = regexp.MustCompile(`(?m)^rtevents: contention ns \[(.*)\]$`)
)

// The runtime's own events, read in process through EventPipe on .NET 5
// and later: GCStart, GCEnd, GCHeapStats, the suspension events,
// GCAllocationTick, ExceptionThrown and contention events all arrive and
// decode whole (one byte less does not: every field of the runtime's version
// is read), with the values the app caused: the three induced collections
// of generations 0, 1 and 2 in order, five InvalidOperationExceptions, five
// contended waits of about the 50 ms the holder sleeps, sbyte[100]
// allocation ticks of 128 bytes (aligned). (The runtime's metadata for its own events
// lists no fields, and 8.0.4 delivers no stack frames to in-process
// sessions: both are logged.) An EventSource the app creates late, added
// to the running session with EventPipeAddProviderToSession and filter
// arguments, delivers its event and saw the arguments. Before .NET 5 the
// session call answers ErrNotAvailable.
func TestRuntimeEvents(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/rtevents")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/rtevents/app.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{5B1E7C3A-9D24-4F6B-8A0E-2C7D4B9F1E63}"})
		res.MustExit(t, 100)
		res.MustStdoutContain(t, "app done")
		if rt.Major < 5 {
			res.MustStderrContain(t, "(ErrNotAvailable: true)")
			return
		}
		res.MustStderrContain(t, "rtevents: done mismatches=0 errors=0\n", "rtevents: exception System.InvalidOperationException 5\n",
			"rtevents: late source event [{n 42} {mode test}] <nil>\n")
		seen := map[string]bool{}
		for _, m := range rtEventRe.FindAllStringSubmatch(res.Stderr, -1) {
			seen[m[1]] = true
		}
		gcs := rtGCsRe.FindStringSubmatch(res.Stderr)
		if gcs == nil || !strings.Contains(gcs[1], "/gen0/reason1 end#") || !regexp.MustCompile(`start#(\d+)/gen0/reason1 end#\d+/gen0 start#\d+/gen1/reason1 end#\d+/gen1 start#\d+/gen2/reason1 end#\d+/gen2`).MatchString(gcs[1]) {
			t.Errorf("the induced collections (reason 1) of gen 0, 1, 2 are not in the GC events: %v", gcs)
		}
		cont := rtContRe.FindStringSubmatch(res.Stderr)
		if cont == nil {
			t.Fatalf("no contention durations")
		}
		n := 0
		for _, f := range strings.Fields(cont[1]) {
			ns, err := strconv.ParseFloat(f, 64)
			if err != nil || ns < 1e6 || ns > 10e9 {
				t.Errorf("contention duration %q ns: want 1 ms..10 s (the holder sleeps 50 ms)", f)
			}
			n++
		}
		if n < 5 {
			t.Errorf("%d contended waits, want at least 5", n)
		}
		if !regexp.MustCompile(`(?m)^rtevents: sbyte\[\] ticks [1-9]`).MatchString(res.Stderr) {
			t.Errorf("no allocation tick of System.SByte[]")
		}
		for _, want := range []string{"GCStart", "GCEnd", "GCHeapStats", "GCSuspendEEBegin", "GCPhase", "GCTriggered", "GCAllocationTick", "ExceptionThrown", "ContentionStart", "ContentionStop"} {
			if !seen[want] {
				t.Errorf("no %s event decoded", want)
			}
		}
		var lines []string
		for _, l := range res.StderrLines() {
			if strings.HasPrefix(l, "rtevents: event") {
				lines = append(lines, l)
			}
		}
		t.Logf("%s:\n%s", rt.Name, strings.Join(lines, "\n"))
	})
}

var rtSampledRe = regexp.MustCompile(`(?m)^rtevents: sampled keep=(\S+) delivered=(\d+) seen=(\d+) kept=(\d+) short=(\d+)$`)

var rtTickRe = regexp.MustCompile(`(?m)^rtevents: tick sampler mean=(\d+) delivered=(\d+) keptbytes=(\d+) seen=(\d+) kept=(\d+) short=(\d+) bytes=(\d+)$`)

// alloc.NewTickSampler decides in C which allocation ticks reach Go:
// with a mean of 1 byte every tick is kept and stands for exactly its own
// bytes; with a mean of 256 KiB only the kept ones are delivered (as many as
// the C sampler counted, fewer than it saw), each standing for at least its
// own bytes, and together for all the bytes the ticks reported but those
// since the last kept one (less than a few means); the number kept is
// about the bytes over the mean. The runtime's other events still arrive
// and decode as in TestRuntimeEvents. On .NET 10+, run again with the
// AllocationSampling keyword on, the runtime's AllocationSampled events
// are thinned the same way: all delivered with a mean of 1 byte; with 256
// KiB each kept with probability 102400/262144 (0.39), as many delivered as
// kept, the number kept within 5 standard deviations of the binomial's
// mean; every one decodes whole, names its type and has its sampled byte
// inside the object; and no allocation tick comes (10.0.15 and 11.0.0
// send GCAllocationTick only while that keyword is off).
func TestAllocationTickSampler(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/rtevents")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/rtevents/app.cs"}, "", harness.For(rt))
		if rt.Major < 5 {
			t.Skip("EventPipe in process needs .NET 5+ (TestRuntimeEvents checks the error before)")
		}
		for _, mean := range []int{1, 256 << 10} {
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{5B1E7C3A-9D24-4F6B-8A0E-2C7D4B9F1E63}",
				Env: []string{"RTEVENTS_TICK_MEAN=" + strconv.Itoa(mean)}})
			res.MustExit(t, 100)
			res.MustStderrContain(t, "rtevents: done mismatches=0 errors=0\n", "rtevents: exception System.InvalidOperationException 5\n")
			m := rtTickRe.FindStringSubmatch(res.Stderr)
			if m == nil {
				t.Fatalf("mean %d: no tick sampler line:\n%s", mean, res.Stderr)
			}
			v := make([]int64, len(m))
			for i := 1; i < len(m); i++ {
				v[i], _ = strconv.ParseInt(m[i], 10, 64)
			}
			delivered, keptBytes, seen, kept, short, bytes := v[2], v[3], v[4], v[5], v[6], v[7]
			t.Logf("%s mean %d: %s", rt.Name, mean, m[0])
			if short != 0 || seen == 0 || bytes == 0 {
				t.Errorf("mean %d: %d ticks seen (%d bytes), %d unreadable", mean, seen, bytes, short)
			}
			if delivered != kept {
				t.Errorf("mean %d: %d ticks delivered to Go, the sampler kept %d", mean, delivered, kept)
			}
			if rt.Major >= 10 {
				checkSampled(t, rt, lib, app, mean)
			}
			if mean == 1 {
				if kept != seen || keptBytes != bytes {
					t.Errorf("mean 1: kept %d of %d ticks, %d of %d bytes: want all", kept, seen, keptBytes, bytes)
				}
				continue
			}
			if kept >= seen || keptBytes > bytes || bytes-keptBytes > 8*int64(mean) {
				t.Errorf("mean %d: kept %d of %d ticks, standing for %d of %d bytes", mean, kept, seen, keptBytes, bytes)
			}
			if want := bytes / int64(mean); want >= 10 && (kept < want/3 || kept > want*3) {
				t.Errorf("mean %d: kept %d ticks for %d bytes: want about %d", mean, kept, bytes, want)
			}
		}
	})
}

func checkSampled(t *testing.T, rt harness.Runtime, lib, app string, mean int) {
	t.Helper()
	res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{5B1E7C3A-9D24-4F6B-8A0E-2C7D4B9F1E63}",
		Env: []string{"RTEVENTS_TICK_MEAN=" + strconv.Itoa(mean), "RTEVENTS_SAMPLING=1"}})
	res.MustExit(t, 100)
	res.MustStderrContain(t, "rtevents: done mismatches=0 errors=0\n", "rtevents: event AllocationSampled/303/v0 count=")
	if strings.Contains(res.Stderr, "rtevents: event GCAllocationTick") {
		t.Errorf("mean %d: allocation ticks with the AllocationSampling keyword on", mean)
	}
	m := rtSampledRe.FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("mean %d: no AllocationSampled sampler line:\n%s", mean, res.Stderr)
	}
	keep, _ := strconv.ParseFloat(m[1], 64)
	var v [6]int64
	for i := 2; i < len(m); i++ {
		v[i], _ = strconv.ParseInt(m[i], 10, 64)
	}
	delivered, seen, kept, short := v[2], v[3], v[4], v[5]
	t.Logf("%s mean %d: %s", rt.Name, mean, m[0])
	if want := min(1, 102400/float64(mean)); keep != want {
		t.Errorf("mean %d: keep %g, want %g", mean, keep, want)
	}
	if seen == 0 || short != 0 || delivered != kept {
		t.Errorf("mean %d: %d AllocationSampled seen, %d short, %d kept, %d delivered", mean, seen, short, kept, delivered)
	}
	if mean == 1 && kept != seen {
		t.Errorf("mean 1: %d of %d AllocationSampled kept, want all", kept, seen)
	}
	if mean > 1 {
		mu, sd := float64(seen)*keep, math.Sqrt(float64(seen)*keep*(1-keep))
		if math.Abs(float64(kept)-mu) > 5*sd {
			t.Errorf("mean %d: kept %d of %d AllocationSampled, want %.0f ± %.0f (5 sd)", mean, kept, seen, mu, 5*sd)
		}
	}
}
