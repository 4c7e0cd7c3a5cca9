//go:build !clrprof_testhooks

package comobj

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestWithTestHooks runs the unit tests of object_hook_test.go, which drive the C
// through the test hooks, in a build with them (go test -tags
// clrprof_testhooks), so that a plain `go test ./...` runs them too, and
// checks that every one of them ran (as profiler's TestWithTestHooks does).
func TestWithTestHooks(t *testing.T) {
	src, err := os.ReadFile("object_hook_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`).FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatal("no tests found in object_hook_test.go")
	}
	out, err := exec.Command("go", "test", "-count=1", "-v", "-tags", "clrprof_testhooks", "-run", "^("+strings.Join(names, "|")+")$", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go test -tags clrprof_testhooks: %v\n%s", err, out)
	}
	for _, n := range names {
		if !regexp.MustCompile(`(?m)^--- PASS: ` + n + ` `).Match(out) {
			t.Errorf("%s did not run or did not pass:\n%s", n, out)
		}
	}
}
