// Package hooktest runs a package's unit tests that drive its C through
// the test hooks (the _test.go files built only with the tag
// clrprof_testhooks) from a plain `go test`, so that `go test ./...` runs
// them too.
package hooktest

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Run runs the tests of files (in the calling test's package directory)
// in a build with the test hooks (go test -tags clrprof_testhooks) and
// checks that every one of them ran and passed; fewer than min tests
// found fails (a file renamed away must not make the check vacuous).
func Run(t *testing.T, min int, files ...string) {
	t.Helper()
	testRe := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	var names []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range testRe.FindAllStringSubmatch(string(src), -1) {
			names = append(names, m[1])
		}
	}
	if len(names) < min {
		t.Fatalf("only %d tests found in %v, want at least %d", len(names), files, min)
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
