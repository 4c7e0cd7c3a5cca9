package main_test

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestJitlogRuntimeAsync runs jitlog on the async test app
// (internal/testapps/async) built as runtime async, on .NET 11 and on .NET
// 10 with DOTNET_RuntimeAsync=1. The runtime compiles an awaited async
// method as its async variant (the IL's body, returning the unwrapped
// result: Program.Run int32 (int32)) and, where something calls it for its
// task (Main's GetAwaiter().GetResult()), also as the Task-returning entry:
// two compilations of one method, same name, distinct FunctionIDs; without
// the marker both would print "jit: AsyncApp.Program.Run". jitlog
// tells them apart by the signature the runtime's MethodJittingStarted
// event gives for that FunctionID: the variant's line ends with "[async
// variant: <signature>]" (.NET 11 writes the unwrapped return, 10 the task
// as a required modifier of it), the entry's is the plain name. The classic
// build of the same source has no async variant among the app's methods.
func TestJitlogRuntimeAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/jitlog")
	src := []string{"../../internal/testapps/async/async.cs"}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if !rt.AtLeast(10, 0) {
			t.Skip("runtime async needs .NET 10 or later")
		}
		appLines := func(stderr string) []string {
			var out []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "jit: AsyncApp.") {
					out = append(out, l)
				}
			}
			return out
		}
		classic := harness.CompileCS(t, src, "", harness.For(rt))
		res := harness.Run(t, rt, classic, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "done\n")
		for _, l := range appLines(res.Stderr) {
			if strings.Contains(l, "[async variant") {
				t.Errorf("classic build: %q", l)
			}
		}

		ra := harness.CompileCS(t, src, "", harness.For(rt), harness.RuntimeAsync())
		res = harness.Run(t, rt, ra, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, Env: harness.RuntimeAsyncEnv(rt)})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "done\n")
		lines := appLines(res.Stderr)
		t.Logf("%s runtime async:\n%s", rt.Name, strings.Join(lines, "\n"))
		has := map[string]int{}
		for _, l := range lines {
			has[l]++
		}
		variantSig := "int32  (int32)]"
		if rt.Major == 10 {
			variantSig = "required_modifier System.Threading.Tasks.Task`1 int32  (int32)]"
		}
		for _, w := range []string{
			"jit: AsyncApp.Program.Run",
			"jit: AsyncApp.Program.Run [async variant: " + variantSig,
			"jit: AsyncApp.Ops.DelayThenValue [async variant: " + variantSig,
		} {
			if has[w] == 0 {
				t.Errorf("no line %q", w)
			}
		}
		// (A line may repeat: tiered compilation compiles the same code
		// again at a higher tier, the same FunctionID and signature.)
	})
}
