package profiler_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const heapprofCLSID = "{6B0E3F7A-2C41-4D9B-8E15-A37C9D0F5B21}"

// TestHeapAPI loads testdata/heapprof into every runtime with an app of
// known object shapes (testdata/heap/heap.cs) and checks what the heap
// API answered:
//
//   - GetClassLayout: HeapProbe's three fields, FieldDef tokens, distinct
//     offsets inside the class size;
//   - GetArrayObjectInfo: int[2,3] with lower bounds 1 and -1, long[5],
//     the data inside the object; a non-array is E_INVALIDARG;
//   - EnumerateObjectReferences (ICorProfilerInfo10, 3.0+): the same
//     non-null references as the GC's ObjectReferences callback, for every
//     HeapNode; ErrNotAvailable before;
//   - EnumerateGCHeapObjects (ICorProfilerInfo15, .NET 9 and later) called
//     inside the Shutdown callback, without SuspendRuntime: the runtime
//     suspends itself and the walk visits objects on 10.0.15 and 11.0.0
//     (from a thread it does not know it fails instead: see
//     TestEnumerateGCHeapObjects); ErrNotAvailable before;
//   - SetEventMask2 refuses, with ErrNotAvailable, high flags newer than
//     the runtime (HighBasicGC before 3.0, HighEventPipe before 5,
//     HighPinnedObjectAllocated before 6) and sets them otherwise.
func TestHeapAPI(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/heapprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := harness.CompileCS(t, []string{"testdata/heap/heap.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: heapprofCLSID})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "app done")
		line := func(re string) []string {
			t.Helper()
			m := regexp.MustCompile(`(?m)^heapprof: ` + re + `$`).FindStringSubmatch(res.Stderr)
			if m == nil {
				t.Fatalf("no line matching %q:\n%s", re, res.Describe())
			}
			return m
		}
		m := line(`layout fields=(\d+) tokens=(\d+) offsets=\[(\d+) (\d+) (\d+)\] size=(\d+) err=(.*)`)
		if m[1] != "3" || m[2] != "3" || m[7] != "<nil>" {
			t.Errorf("GetClassLayout(HeapProbe): %s", m[0])
		}
		// 64-bit: the method table pointer at 0, then the three fields in
		// 8-byte slots whatever their order; 8 (header) + 8 + 20, aligned.
		if m[3] != "8" || m[4] != "16" || m[5] != "24" || m[6] != "40" {
			t.Errorf("GetClassLayout(HeapProbe): offsets or size not those of a 64-bit HeapProbe: %s", m[0])
		}
		line(`notarray err=.* invalidarg=true`)
		line(`array class=int\[,\] lengths=\[2 3\] lower=\[1 -1\] inobject=true len=6 err=<nil>`)
		line(`array class=long\[\] lengths=\[5\] lower=\[0\] inobject=true len=5 err=<nil>`)
		if rt.Major >= 3 {
			m = line(`refs same=(\d+) differ=(\d+) nonnull=(\d+) err=(.*) notavailable=(\w+)`)
			// root (2 nodes + string), left (root), right (none): at least
			// three HeapNode objects and four references.
			if atoi(t, m[1]) < 3 || m[2] != "0" || atoi(t, m[3]) < 4 || m[4] != "<nil>" {
				t.Errorf("EnumerateObjectReferences against ObjectReferences: %s", m[0])
			}
		} else {
			line(`refs same=0 differ=0 nonnull=0 err=.* notavailable=true`)
		}
		if rt.Major >= 9 {
			m = line(`heapwalk err=<nil> notavailable=false objects=(\d+)`)
			if atoi(t, m[1]) < 10 {
				t.Errorf("EnumerateGCHeapObjects in Shutdown: %s (want the app's objects)", m[0])
			}
		} else {
			line(`heapwalk err=.* notavailable=true objects=0`)
		}

		// SetEventMask2 refuses the high flags the runtime does not know
		// (which it would accept and ignore).
		for _, f := range []struct {
			name  string
			since int
		}{{"HighBasicGC", 3}, {"HighEventPipe", 5}, {"HighPinnedObjectAllocated", 6}} {
			if rt.Major >= f.since {
				line(`mask ` + f.name + ` err=<nil> notavailable=false`)
				line(`check ` + f.name + ` err=<nil>`)
			} else {
				line(`mask ` + f.name + ` err=clrprof: SetEventMask2: ` + f.name + ` not available on this runtime \(needs .*\) notavailable=true`)
				// CheckHighEvents asks the same question without setting.
				line(`check ` + f.name + ` err=clrprof: SetEventMask2: ` + f.name + ` not available on this runtime \(needs .*\)`)
			}
		}
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}
