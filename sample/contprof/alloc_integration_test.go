package main_test

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/google/pprof/profile"
)

var allocsRe = regexp.MustCompile(`(?m)^allocs: (\w+) count=(\d+) bytes=(\d+)$`)

type counted struct{ count, bytes int64 }

// allocsBy sums value i of the samples that have frame (any frame when
// empty) and the label object=typ (any type when empty).
func allocsBy(ps []*profile.Profile, i int, frame, typ string) int64 {
	var n int64
	for _, p := range ps {
		for _, s := range p.Sample {
			if frame != "" && !hasFrame(s, frame) {
				continue
			}
			if typ != "" && strings.Join(s.Label["object"], ",") != typ {
				continue
			}
			n += s.Value[i]
		}
	}
	return n
}

// within checks est against the true value with the bound k·√v and logs
// by how many standard deviations it is off.
func within(t *testing.T, what string, est, truth, v, k float64) {
	t.Helper()
	sd := math.Sqrt(v)
	t.Logf("%s: estimate %.0f, counted %.0f: %+.2f sd (sd %.0f, %.2f%%)", what, est, truth, (est-truth)/sd, sd, 100*sd/truth)
	if math.Abs(est-truth) > k*sd {
		t.Errorf("%s: estimate %.0f, counted %.0f: off by %.0f, more than %g sd (%.0f)", what, est, truth, est-truth, k, k*sd)
	}
}

// contprof's allocation profile against what the app counted itself
// (testdata/allocs.cs: GC.GetAllocatedBytesForCurrentThread around each
// allocating method, about 240 MB on its main thread).
//
// On .NET 10+ the samples are the runtime's AllocationSampled events, each
// kept with probability k = 102400/CONTPROF_HEAP_RATE (1 at 102400, 0.195
// at the default 512 KiB): the estimate of each method's bytes, of their
// total, and of the bytes and objects of the dominant type (Item) must lie
// within 5 standard deviations of the counts, the variance computed from
// the estimator's (clrevents.AllocationVariance: Σ s²(1-π)/π over the
// objects the app allocated, π = k·(1-(1-1/102400)^s)); a 5-sigma miss
// has a probability under 1e-6 per check. The profile's comments give the
// estimator and the period's standard error. The live heap at exit: the
// retained Items within 5 standard deviations of their bytes, the dropped
// ones (Allocs.Items) gone.
//
// On .NET 5 to 9 the samples are the allocation ticks, each kept one
// standing for the bytes since the previous kept one: each method's bytes
// are right to within the ticks at its edges (1 MB and 1% allowed). Before
// .NET 5 the test is skipped (the heap and alloc profiles need
// ObjectAllocated there, which TestContprof covers).
func TestContprofAllocations(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 5 {
			t.Skip("the allocation ticks and AllocationSampled need EventPipe in process (.NET 5+)")
		}
		app := harness.CompileCS(t, []string{"testdata/allocs.cs"}, "", harness.For(rt))
		rates := []int{102400}
		if rt.Major >= 10 {
			rates = append(rates, 524288)
		}
		for _, rate := range rates {
			dir, res := runAllocs(t, rt, lib, app, rate)
			got := map[string]counted{}
			for _, m := range allocsRe.FindAllStringSubmatch(res.Stdout, -1) {
				c, _ := strconv.ParseInt(m[2], 10, 64)
				b, _ := strconv.ParseInt(m[3], 10, 64)
				got[m[1]] = counted{c, b}
			}
			if len(got) != 4 {
				t.Fatalf("the app's counts: %v\n%s", got, res.Stdout)
			}
			profs := load(t, dir)
			allocs := profs["alloc"]
			if len(allocs) == 0 {
				t.Fatalf("rate %d: no alloc profile:\n%s", rate, res.Stderr)
			}
			c := strings.Join(allocs[len(allocs)-1].Comments, "\n")
			if rt.Major < 10 {
				if !strings.Contains(c, "from the runtime's allocation ticks") {
					t.Errorf("alloc comments do not name the ticks:\n%s", c)
				}
				for _, m := range []string{"Items", "Arrays", "Large", "Retain"} {
					est := allocsBy(allocs, 1, "Allocs."+m, "")
					truth := got[m].bytes
					t.Logf("%s ticks: Allocs.%s estimate %d, counted %d (%+.2f%%)", rt.Name, m, est, truth, 100*float64(est-truth)/float64(truth))
					if d := est - truth; d > 1<<20+truth/100 || -d > 1<<20+truth/100 {
						t.Errorf("Allocs.%s: estimate %d, counted %d", m, est, truth)
					}
				}
				continue
			}
			keep := min(1, 102400/float64(rate))
			for _, want := range []string{"from the runtime's allocation sampling (AllocationSampled", "π = k·(1-(1-p)^s)", "V = Σ s²(1-π)/π",
				"standard error √V ≈ ", "one kept every " + strconv.Itoa(rate) + " bytes on average"} {
				if !strings.Contains(c, want) {
					t.Errorf("alloc comments do not say %q:\n%s", want, c)
				}
			}
			var totalEst, totalTrue, totalVar float64
			for _, m := range []string{"Items", "Arrays", "Large", "Retain"} {
				g := got[m]
				size := g.bytes / g.count
				v := clrevents.AllocationVariance(uint64(size), uint64(g.count), keep)
				if m == "Retain" {
					// the Items and the list's one array
					size = 48
					v = clrevents.AllocationVariance(48, uint64(g.count), keep) + clrevents.AllocationVariance(uint64(g.bytes-48*g.count), 1, keep)
				} else if g.bytes != size*g.count {
					t.Fatalf("Allocs.%s: %d bytes for %d objects: not all of one size", m, g.bytes, g.count)
				}
				est := float64(allocsBy(allocs, 1, "Allocs."+m, ""))
				within(t, rt.Name+" k="+strconv.FormatFloat(keep, 'g', 4, 64)+" Allocs."+m+" bytes", est, float64(g.bytes), v, 5)
				totalEst += est
				totalTrue += float64(g.bytes)
				totalVar += v
			}
			within(t, rt.Name+" total bytes", totalEst, totalTrue, totalVar, 5)
			items := got["Items"].count + got["Retain"].count
			v := clrevents.AllocationVariance(48, uint64(items), keep)
			within(t, rt.Name+" Item bytes", float64(allocsBy(allocs, 1, "", "Item")), float64(48*items), v, 5)
			within(t, rt.Name+" Item objects", float64(allocsBy(allocs, 0, "", "Item")), float64(items), v/48/48, 5)

			heaps := profs["heap"]
			if len(heaps) == 0 {
				t.Fatalf("no heap profile")
			}
			last := heaps[len(heaps)-1:]
			r := got["Retain"].count
			within(t, rt.Name+" live Item bytes retained", float64(allocsBy(last, 1, "Allocs.Retain", "Item")), float64(48*r), clrevents.AllocationVariance(48, uint64(r), keep), 5)
			if dropped := allocsBy(last, 1, "Allocs.Items", ""); dropped > 1<<20 {
				t.Errorf("live heap at exit: %d bytes of Allocs.Items, which the app dropped", dropped)
			}
		}
	})
}

func runAllocs(t *testing.T, rt harness.Runtime, lib, app string, rate int) (string, harness.Result) {
	t.Helper()
	dir := t.TempDir()
	res := harness.Run(t, rt, app, harness.RunOptions{
		ProfilerPath: lib, ProfilerCLSID: clsid,
		Env: []string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1", "CONTPROF_HEAP=1", "CONTPROF_HEAP_RATE=" + strconv.Itoa(rate)},
	})
	res.MustSucceed(t)
	res.MustStdoutContain(t, "allocs: done retained=")
	checkEventFrames(t, rt, res.Stderr)
	return dir, res
}

var eventFramesRe = regexp.MustCompile(`contprof: Shutdown .* event_stacks=(\d+) event_frames=(\d+) `)

// checkEventFrames checks what docs/cost.md says of the runtime's events
// in a profiler's in-process EventPipe session: they come with no stack
// (stackFrames empty: the session is synchronous, and the runtime walks
// the stack only for a buffered session's events), so contprof walks
// each kept sample's stack itself. A runtime that starts delivering
// frames fails this: contprof should then take them instead of walking
// again.
func checkEventFrames(t *testing.T, rt harness.Runtime, stderr string) {
	t.Helper()
	m := eventFramesRe.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("%s: no event_stacks/event_frames on the Shutdown line:\n%s", rt.Name, stderr)
	}
	t.Logf("%s: %s events whose stack contprof walked, %s of them delivered with frames", rt.Name, m[1], m[2])
	if m[1] == "0" {
		t.Errorf("%s: no allocation sample reached contprof (event_stacks=0)", rt.Name)
	}
	if m[2] != "0" {
		t.Errorf("%s: the runtime delivered frames with %s of %s events: contprof walks the stack again instead of using them", rt.Name, m[2], m[1])
	}
}
