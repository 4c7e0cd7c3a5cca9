package harness

import (
	"os/exec"
	"testing"
	"time"
)

// Command prepares `dotnet exec` of app on rt exactly as [Run] would
// (runtime config, environment, working directory, own process group) but
// does not start it, for callers that need the process itself, such as the
// benchmarks, which read the child's resource usage
// (cmd.ProcessState.SysUsage()) after Wait. Standard streams are left to the
// caller; the returned duration is the run's timeout, which the caller
// enforces (kill the process group, -cmd.Process.Pid).
func Command(t testing.TB, rt Runtime, app string, opts RunOptions) (*exec.Cmd, time.Duration) {
	t.Helper()
	return command(t, "harness.Command", rt, app, opts)
}
