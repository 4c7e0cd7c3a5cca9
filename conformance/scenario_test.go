package conformance

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// A scenario is one upstream profiler test re-expressed with the SDK. Each
// lives in its own <name>_test.go, which registers it from init.
type scenario struct {
	// Name is the scenario's directory under conformance/.
	Name string
	// Upstream names what it mirrors in dotnet/runtime's src/tests/profiler/
	// (the C# test and the native profiler).
	Upstream string
	// UpstreamLines is the size, in lines, of the upstream C++ profiler
	// (.cpp and .h) it mirrors, for docs/conformance.md.
	UpstreamLines int
	// App lists the C# sources, relative to the scenario's directory
	// (default: app.cs); CSOptions are passed to harness.CompileCS.
	App       []string
	CSOptions []harness.CSOption
	// Profiler is the Go package of the profiler, relative to the
	// scenario's directory (default: profiler).
	Profiler string
	// CLSID is what the profiler registers.
	CLSID string
	// Args and Env are given to the app's run.
	Args []string
	Env  []string
	// NotApplicable says why the scenario cannot run on rt ("" when it
	// can): the runtime lacks an interface, documents other behaviour, or
	// has a known bug (with its upstream number).
	NotApplicable func(rt harness.Runtime) string
	// Run replaces the default run (the app with the profiler loaded at
	// start-up), for scenarios that attach or load several profilers.
	Run func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result
	// Check adds checks on the result to the default ones (exit code 100,
	// the verdict line, no "FAIL:").
	Check func(t *testing.T, rt harness.Runtime, res harness.Result)
}

var scenarios = map[string]*scenario{}

func register(sc *scenario) {
	if _, dup := scenarios[sc.Name]; dup {
		panic("conformance: scenario registered twice: " + sc.Name)
	}
	if sc.CLSID == "" || sc.Upstream == "" {
		panic("conformance: scenario " + sc.Name + " needs a CLSID and its upstream")
	}
	scenarios[sc.Name] = sc
}

func sortedScenarios() []*scenario {
	out := make([]*scenario, 0, len(scenarios))
	for _, sc := range scenarios {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (sc *scenario) notApplicable(rt harness.Runtime) string {
	if sc.NotApplicable == nil {
		return ""
	}
	return sc.NotApplicable(rt)
}

func (sc *scenario) appSources() []string {
	srcs := sc.App
	if len(srcs) == 0 {
		srcs = []string{"app.cs"}
	}
	out := make([]string, len(srcs))
	for i, s := range srcs {
		out[i] = filepath.Join(sc.Name, s)
	}
	return out
}

func (sc *scenario) profilerPkg() string {
	p := sc.Profiler
	if p == "" {
		p = "profiler"
	}
	return "./" + filepath.ToSlash(filepath.Join("conformance", sc.Name, p))
}

// profilerDir is the profiler's directory relative to this package.
func (sc *scenario) profilerDir() string {
	p := sc.Profiler
	if p == "" {
		p = "profiler"
	}
	return filepath.Join(sc.Name, p)
}

// TestConformance runs every scenario on every installed runtime.
func TestConformance(t *testing.T) {
	for _, sc := range sortedScenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			lib := harness.BuildProfiler(t, sc.profilerPkg())
			harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
				if why := sc.notApplicable(rt); why != "" {
					t.Skipf("NOT APPLICABLE: %s", why)
				}
				// Roslyn against the runtime's own reference assemblies on
				// .NET 10 and later, mcs before.
				app := harness.CompileCS(t, sc.appSources(), "", append(sc.CSOptions[:len(sc.CSOptions):len(sc.CSOptions)], harness.For(rt))...)
				var res harness.Result
				if sc.Run != nil {
					res = sc.Run(t, rt, app, lib, sc)
				} else {
					res = harness.Run(t, rt, app, harness.RunOptions{
						ProfilerPath:  lib,
						ProfilerCLSID: sc.CLSID,
						Args:          sc.Args,
						Env:           sc.Env,
					})
				}
				mustPass(t, res)
				if sc.Check != nil {
					sc.Check(t, rt, res)
				}
			})
		})
	}
}

// mustPass is upstream's verdict: the app exits with 100, the profiler
// printed the pass line and no failure.
func mustPass(t *testing.T, res harness.Result) {
	t.Helper()
	res.MustExit(t, 100)
	res.MustStdoutContain(t, "PROFILER TEST PASSES")
	for _, l := range res.StdoutLines() {
		if strings.Contains(l, "FAIL") {
			t.Errorf("failure reported: %s\n%s", l, res.Describe())
		}
	}
}

// The runtimes the matrix in docs/conformance.md is written for: the ones
// scripts/setup.sh installs.
var matrixRuntimes = []harness.Runtime{
	{Name: "netcore2.0.0", Version: "2.0.0", Major: 2, Minor: 0, Patch: 0},
	{Name: "netcore2.1.30", Version: "2.1.30", Major: 2, Minor: 1, Patch: 30},
	{Name: "netcore3.1.23", Version: "3.1.23", Major: 3, Minor: 1, Patch: 23},
	{Name: "net8.0.4", Version: "8.0.4", Major: 8, Minor: 0, Patch: 4},
	{Name: "net10.0.15", Version: "10.0.15", Major: 10, Minor: 0, Patch: 15},
	{Name: "net11.0.0", Version: "11.0.0", Major: 11, Minor: 0, Patch: 0},
}

var update = flag.Bool("update", false, "rewrite the generated matrix in docs/conformance.md")

const (
	matrixBegin = "<!-- matrix: generated by TestConformanceMatrix (go test ./conformance -run Matrix -update); do not edit -->"
	matrixEnd   = "<!-- end of matrix -->"
)

// TestConformanceMatrix fails when the matrix in docs/conformance.md is not
// the one the registered scenarios give: every scenario, PASS or NOT
// APPLICABLE with its reason on each runtime, and the size of its Go profiler
// next to the upstream C++ one.
func TestConformanceMatrix(t *testing.T) {
	var b strings.Builder
	b.WriteString("| scenario | upstream | ")
	for _, rt := range matrixRuntimes {
		b.WriteString(rt.Name + " | ")
	}
	b.WriteString("Go profiler (lines) | upstream C++ (lines) |\n|---|---|")
	for range matrixRuntimes {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	var notes []string
	for _, sc := range sortedScenarios() {
		fmt.Fprintf(&b, "| %s | %s | ", sc.Name, sc.Upstream)
		for _, rt := range matrixRuntimes {
			if why := sc.notApplicable(rt); why != "" {
				notes = append(notes, fmt.Sprintf("%s on %s: %s", sc.Name, rt.Name, why))
				fmt.Fprintf(&b, "n/a [%d] | ", len(notes))
			} else {
				b.WriteString("PASS | ")
			}
		}
		n, err := goLines(sc.profilerDir())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%d | %d |\n", n, sc.UpstreamLines)
	}
	if len(notes) > 0 {
		b.WriteString("\nNot applicable:\n\n")
		for i, n := range notes {
			fmt.Fprintf(&b, "%d. %s\n", i+1, n)
		}
	}
	want := matrixBegin + "\n\n" + b.String() + "\n" + matrixEnd

	path := filepath.Join("..", "docs", "conformance.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, matrixBegin), strings.Index(s, matrixEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no matrix markers", path)
	}
	got := s[i : j+len(matrixEnd)]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i]+want+s[j+len(matrixEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/conformance.md's matrix is stale; run go test ./conformance -run Matrix -update\nwant:\n%s", want)
}

// goLines counts the lines of the .go files of dir and its subdirectories.
func goLines(dir string) (int, error) {
	n := 0
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			n++
		}
		return sc.Err()
	})
	return n, err
}

// TestNoUnsafeInProfilers is the rule of the suite: the profilers use the
// SDK's Go API only.
func TestNoUnsafeInProfilers(t *testing.T) {
	for _, sc := range sortedScenarios() {
		filepath.Walk(sc.profilerDir(), func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() || !strings.HasSuffix(p, ".go") {
				return err
			}
			src, err := os.ReadFile(p)
			if err != nil {
				t.Error(err)
				return nil
			}
			for _, bad := range []string{`"unsafe"`, `"C"`, "dlsym", `"syscall"`} {
				if strings.Contains(string(src), bad) {
					t.Errorf("%s uses %s", p, bad)
				}
			}
			return nil
		})
	}
}
