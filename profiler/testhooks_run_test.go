//go:build !clrprof_testhooks

package profiler

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// hookedTestFiles are the unit tests that drive the C side through the
// test hooks, which only builds with the tag clrprof_testhooks have.
var hookedTestFiles = []string{"elt_test.go", "ring_test.go", "shim_test.go"}

// TestWithTestHooks runs the unit tests of hookedTestFiles in a build with
// the test hooks (go test -tags clrprof_testhooks), so that a plain `go
// test ./...` runs them too, and checks that every one of them ran.
func TestWithTestHooks(t *testing.T) {
	testRe := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	var names []string
	for _, f := range hookedTestFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testRe.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
	}
	if len(names) < 10 {
		t.Fatalf("only %d tests found in %v", len(names), hookedTestFiles)
	}
	cmd := exec.Command("go", "test", "-count=1", "-v", "-tags", "clrprof_testhooks", "-run", "^("+strings.Join(names, "|")+")$", ".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -tags clrprof_testhooks: %v\n%s", err, out)
	}
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^--- (PASS|SKIP): ` + n + ` `).Match(out) {
			t.Errorf("%s did not run or did not pass:\n%s", n, out)
		}
	}
	t.Logf("%d tests with the test hooks passed", len(names))
}
