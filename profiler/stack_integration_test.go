package profiler_test

import (
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// Current-thread snapshots work on every runtime: from ExceptionThrown, the
// stack of the throwing thread, innermost first, with the per-frame Go
// callback (WalkStack, full names through the frame info) and collected in
// C (StackTrace). Snapshots of other threads under SuspendRuntime are
// exercised by sample/cpuprof on .NET Core 3.0 and later.
func TestStackSnapshots(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/sampling/stackprof")
	app := samplingApp(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: "{9D2B4F61-3A7C-4E85-B1D0-5C6E8F2A4B93}",
			Args: []string{"throw", "3"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "throw: caught=3\n")
		res.MustStderrContain(t,
			"stackprof: walk Elt.Thrower.Deep(int32) > Elt.Thrower.Deep(int32) > Elt.Thrower.Deep(int32) > Elt.Thrower.Deep(int32) > Elt.Thrower.Catch() > Elt.Program.Throws(int32) > Elt.Program.Main(string[])\n",
			"stackprof: trace Elt.Thrower.Deep > Elt.Thrower.Deep > Elt.Thrower.Deep > Elt.Thrower.Deep > Elt.Thrower.Catch > Elt.Program.Throws > Elt.Program.Main\n")
	})
}
