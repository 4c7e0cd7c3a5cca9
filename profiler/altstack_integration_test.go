package profiler_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestAltStackClobberMechanism shows, without CoreCLR and without this
// SDK, the mechanism behind the storm's "stack smashing detected" (issue 13,
// docs/reliability.md): a SIGSEGV handler on the alternate signal stack that
// keeps a live frame there while it works on another stack (as CoreCLR's
// does during the exception dispatch) loses that frame to any other
// SA_ONSTACK signal arriving meanwhile (as the Go runtime's SIGURG does);
// moving the handler's work to a stack of its own (as the SDK's SIGSEGV
// router does) keeps it. testdata/altstack/altstack.c, built with gcc.
func TestAltStackClobberMechanism(t *testing.T) {
	harness.Integration(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found (scripts/setup.sh installs it)")
	}
	exe := filepath.Join(t.TempDir(), "altstack")
	if out, err := exec.Command(gcc, "-O2", "-Wall", "-o", exe, "testdata/altstack/altstack.c").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, c := range []struct{ arg, want string }{{"", "clobbered"}, {"private", "intact"}} {
		out, err := exec.Command(exe, c.arg).CombinedOutput()
		got := strings.TrimSpace(string(out))
		if err != nil || got != c.want {
			t.Fatalf("altstack %s: %q (%v), want %q", c.arg, got, err, c.want)
		}
		t.Logf("altstack %s: %s", c.arg, got)
	}
}
