package pprofbuild

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestNamesSurvivePprof writes a profile whose frames have the names .NET
// gives compiler-generated and generic code and reads it with `go tool
// pprof -top`, as a user would: every name must come out as written. (With
// SystemName equal to Name, pprof took them for demangled C++ and cut out
// what is between angle brackets: Ops+<Stream>d__9.MoveNext became
// Ops+d__9.MoveNext.)
func TestNamesSurvivePprof(t *testing.T) {
	harness.Integration(t)
	names := []string{
		"AsyncApp.Ops+<Stream>d__9.MoveNext",
		"AsyncApp.Program+<Run>d__2.MoveNext",
		"System.Collections.Generic.List<int>.Add",
		"Demo.MyClass<System.__Canon>.Foo<Demo.Point>",
		"Demo.Program.<Main>m__0",
		"int[].Clone",
	}
	b := NewBuilder([]SampleType{{Type: "samples", Unit: "count"}}, "", 100)
	for i, n := range names {
		b.AddNamed([]string{n, "root"}, nil, int64(i+1))
	}
	p := b.Build(nil, Meta{}, false)
	for _, f := range p.Function {
		if f.SystemName != "" {
			t.Errorf("%q has the system name %q", f.Name, f.SystemName)
		}
	}
	path := filepath.Join(t.TempDir(), "names.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, p); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=100", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	for _, n := range names {
		if !strings.Contains(string(out), " "+n+"\n") {
			t.Errorf("pprof -top lost %q:\n%s", n, out)
		}
	}
}
