package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
	"github.com/google/pprof/profile"
)

const clsid = "{3B9E4C2A-7D15-4E68-9A0F-5C2B8D1E6F47}"

var leakedRe = regexp.MustCompile(`leaked count=(\d+) bytes=(\d+)`)

// TestLeak loads sample/heapsnap into an app that leaks 64 KB Leaked
// objects into a static List (Work.Leak) and asks for a snapshot with
// SIGUSR2 after 50 and after 150 of them; a third is taken at exit. Each
// must name the list as retaining at least what the app leaked, along the
// path list → array → Leaked → byte[], and the second's diff must name
// the growth.
func TestLeak(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a profiler into a .NET runtime")
	}
	lib := harness.BuildProfiler(t, "./sample/heapsnap")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/leak.cs"}, "", harness.For(rt))
		dir := t.TempDir()
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"HEAPSNAP_DIR=" + dir}, Timeout: 5 * time.Minute})
		res.MustSucceed(t)
		leaked := leakedRe.FindAllStringSubmatch(res.Stdout, -1)
		if len(leaked) != 2 || !strings.Contains(res.Stdout, "snapshot 1 written") || !strings.Contains(res.Stdout, "snapshot 2 written") {
			t.Fatalf("the app did not see its snapshots:\n%s", res.Describe())
		}
		t.Logf("stderr:\n%s", res.Stderr)
		for n, want := range map[int]int{1: 50, 2: 150, 3: 150} {
			checkSnapshot(t, dir, n, want)
		}
		// the walk was recorded in C (heapwalk.Recorder), not by a
		// Go callback per object
		if rep1, _ := os.ReadFile(filepath.Join(dir, "heap-1.txt")); !strings.Contains(string(rep1), "heap walk: recorded in C") {
			t.Errorf("heap-1.txt does not say the walk was recorded in C:\n%s", rep1)
		}
		rep2, _ := os.ReadFile(filepath.Join(dir, "heap-2.txt"))
		since := string(rep2[strings.Index(string(rep2), "Since snapshot 1"):])
		t.Logf("heap-2.txt diff:\n%s", since)
		// the growth: 100 byte[] of 64 KB, held through the list
		if !regexp.MustCompile(`\+\d+\s+[+-]\d+\s+\+10\d\s+\d+\s+byte\[\]`).MatchString(since) {
			t.Errorf("the diff does not name ~100 more System.Byte[]")
		}
		if !strings.Contains(since, "[static] → Shop.Work.Leak → System.Collections.Generic.List<Shop.Leaked> → Shop.Leaked[] → Shop.Leaked → byte[]") {
			t.Errorf("the diff does not name the path holding the growth")
		}
	})
}

var leakApp = []string{"[static]", "Shop.Work.Leak", "System.Collections.Generic.List<Shop.Leaked>", "Shop.Leaked[]", "Shop.Leaked", "byte[]"}

func checkSnapshot(t *testing.T, dir string, n, leaked int) {
	t.Helper()
	checkPath(t, dir, n, leaked, leakApp)
}

// checkPath checks that snapshot n has exactly leaked objects of 64 KB or
// more along the retention path want (root kind to the byte[]s), and that
// the report's largest retainer is the object the path's third frame names.
func checkPath(t *testing.T, dir string, n, leaked int, want []string) {
	t.Helper()
	name := filepath.Join(dir, "heap-"+string(rune('0'+n)))
	rep, err := os.ReadFile(name + ".txt")
	if err != nil {
		t.Fatalf("snapshot %d: %v", n, err)
	}
	f, err := os.Open(name + ".pb.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s.pb.gz: %v", name, err)
	}
	if len(p.SampleType) != 3 || p.SampleType[0].Type != "objects" || p.SampleType[1].Type != "shallow" || p.SampleType[2].Type != "retained" {
		t.Fatalf("sample types %v", p.SampleType)
	}
	// the leaked byte[]s along list → array → Leaked → byte[]
	var count, shallow int64
	var path string
	for _, s := range p.Sample {
		var fr []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			fr = append(fr, s.Location[i].Line[0].Function.Name)
		}
		if slices.Equal(fr, want) {
			count += s.Value[0]
			shallow += s.Value[1]
			path = strings.Join(fr, " → ")
		}
	}
	min := int64(leaked) * 64 * 1024
	if count != int64(leaked) || shallow < min {
		t.Errorf("snapshot %d: %d byte[] (%d bytes) along %s, the app leaked %d (%d bytes)\n%s", n, count, shallow, strings.Join(want, " → "), leaked, min, rep)
	}
	t.Logf("snapshot %d: path %s: %d objects, %d bytes", n, path, count, shallow)
	// the report's largest retainer is the list, retaining at least that
	txt := string(rep)
	i := strings.Index(txt, "Largest retainers")
	if i < 0 {
		t.Fatalf("snapshot %d report:\n%s", n, txt)
	}
	first := strings.SplitN(txt[i:], "\n", 4)
	if len(first) < 3 || !strings.Contains(first[1], want[2]) || !strings.Contains(first[2], strings.Join(want[:3], " → ")) {
		t.Errorf("snapshot %d: largest retainer is not the list:\n%s", n, txt)
	}
}

// TestSpill is TestLeak with snapshots of more than 100 objects spilled to
// disk during the walk (HEAPSNAP_SPILL_AFTER=100): the same snapshots, the
// reports say they spilled, and no spill file is left.
func TestSpill(t *testing.T) {
	harness.Integration(t)
	lib := harness.BuildProfiler(t, "./sample/heapsnap")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/leak.cs"}, "", harness.For(rt))
		dir := t.TempDir()
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"HEAPSNAP_DIR=" + dir, "HEAPSNAP_SPILL_AFTER=100"}, Timeout: 5 * time.Minute})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "snapshot 1 written", "snapshot 2 written", "done")
		for n, want := range map[int]int{1: 50, 2: 150, 3: 150} {
			checkSnapshot(t, dir, n, want)
			rep, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("heap-%d.txt", n)))
			if err != nil || !regexp.MustCompile(`spill: \d+ object reports and \d+ references written to disk during the walk \(more than 100 objects\)`).Match(rep) {
				t.Errorf("heap-%d.txt does not say it spilled (%v)", n, err)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "heapsnap-spill-*")); len(left) != 0 {
			t.Errorf("spill files left: %v", left)
		}
	})
}
