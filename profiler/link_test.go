package profiler_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Register looks at the user's callbacks with reflect's MethodByName. Asked
// for a name the linker cannot see, MethodByName makes it keep every
// exported method of every type converted to an interface: in a profiler's
// library, every method of Info and of the metadata readers, called or not
// (2.9 of contprof's 17.4 MB). Register asks by constant names
// (methodByName, generated), so a profiler that calls no method of Info
// links none it does not call.
func TestLinkerKeepsUnusedMethods(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a profiler")
	}
	lib := filepath.Join(t.TempDir(), "liblinkprof.so")
	if out, err := exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, "./testdata/linkprof").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", lib).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	syms := string(out)
	if !strings.Contains(syms, "profiler.register") {
		t.Fatalf("no profiler.register in the library's symbols:\n%.2000s", syms)
	}
	// Methods of Info the SDK itself never calls: nothing but a
	// profiler's code would keep them.
	for _, m := range []string{"BeginInprocDebugging", "EnumJITedFunctions", "ApplyMetaData"} {
		if strings.Contains(syms, "profiler.(*Info)."+m+"\n") {
			t.Errorf("the library keeps (*Info).%s, which nothing calls: a call of MethodByName (or Method) with a name the linker cannot see keeps every exported method", m)
		}
	}
}
