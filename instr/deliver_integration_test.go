package instr

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const deliverCLSID = "{7A0C3D52-9B1E-4F6A-8C2D-5E4B3A291F07}"

// TestDelivery runs an app that references Lib 1.0 under deliverprof,
// which delivers a helper referencing Lib 2.0 (delivered too) and the
// loader, and makes Program::Probe call the helper: on every runtime the
// helper runs from bytes (no file beside the app), sees Lib 2.0, reaches
// the profiler library's symbols through the loader, and the app still sees
// Lib 1.0 and prints what it prints without the profiler. Then the same
// with delivery turned off, and with a corrupt helper (the loader fails in
// the app: the app must not notice).
func TestDelivery(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/deliverprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		tmp := t.TempDir()
		appDir, helperDir := filepath.Join(tmp, "app"), filepath.Join(tmp, "helper")
		lib1 := harness.CompileCS(t, []string{"testdata/deliver/lib1.cs"}, appDir, harness.Library(), harness.OutName("Lib.dll"), harness.For(rt))
		app := harness.CompileCS(t, []string{"testdata/deliver/app.cs"}, appDir, harness.Reference(lib1), harness.For(rt))
		lib2 := harness.CompileCS(t, []string{"testdata/deliver/lib2.cs"}, helperDir, harness.Library(), harness.OutName("Lib.dll"), harness.For(rt))
		loader, err := filepath.Abs("loader/Clrprof.Instr.Loader.dll")
		if err != nil {
			t.Fatal(err)
		}
		helper := harness.CompileCS(t, []string{"testdata/deliver/helper.cs"}, helperDir, harness.Library(),
			harness.OutName("DeliverHelper.dll"), harness.Reference(lib2, loader), harness.For(rt))
		helpers := "DELIVER_HELPERS=" + helper + ":" + lib2
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		if !strings.Contains(base.Stdout, "app: sees Lib 1\n") {
			t.Fatalf("the app without a profiler:\n%s", base.Stdout)
		}
		opts := harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: deliverCLSID, Env: []string{helpers}}

		res := harness.Run(t, rt, app, opts)
		res.MustSucceed(t)
		var appLines []string
		hits := 0
		for _, l := range res.StdoutLines() {
			if strings.HasPrefix(l, "helper: ") {
				hits++
				want := "; sees Lib 2 (two); location=\"\"; loader symbol found; unknown symbol absent"
				if !strings.HasSuffix(l, want) {
					t.Errorf("helper line %q, want it to end with %q", l, want)
				}
				continue
			}
			appLines = append(appLines, l)
		}
		if got, want := strings.Join(appLines, "\n"), strings.Join(base.StdoutLines(), "\n"); got != want {
			t.Errorf("the app's own output changed:\n%s\n--- without the profiler:\n%s", got, want)
		}
		if hits != 3 {
			t.Errorf("%d helper calls, want 3:\n%s", hits, res.Stdout)
		}
		res.MustStderrContain(t, "deliverprof: loader injected into Program::Main\n",
			"deliverprof: OnLoaded ran\n",
			"deliverprof: integration error id 42 count=3 type=System.InvalidOperationException\n",
			// Begin and End both throw, at each of Thrower's two calls.
			"deliverprof: integration error app!Program::Thrower count=4 type=System.InvalidOperationException\n",
			// Main hosts the loader: left alone at its first JIT, then ReJITted (it is not called again).
			"deliverprof: instrumented=[app!Program::Thrower] pending=[app!Program::Main] failed=[]\n",
			"loaded=true probed=true early=false err=<nil>\n")

		// A relative CORECLR_PROFILER_PATH: the P/Invoke's ModuleRef holds
		// the library's absolute path all the same (dladdr, realpath).
		rel := opts
		rel.Dir = filepath.Dir(lib)
		rel.Env = append([]string{"CORECLR_PROFILER_PATH=./" + filepath.Base(lib), "DOTNET_PROFILER_PATH=./" + filepath.Base(lib)}, opts.Env...)
		res = harness.Run(t, rt, app, rel)
		res.MustSucceed(t)
		res.MustStderrContain(t, "loaded=true probed=true early=false err=<nil>\n")

		off := opts
		off.Env = append([]string{instrDeliveryOff}, opts.Env...)
		res = harness.Run(t, rt, app, off)
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("delivery off: output changed:\n%s", res.Stdout)
		}
		res.MustStderrContain(t, "host= loaded=false probed=false early=true err="+ErrDeliveryOff.Error(),
			"deliverprof: instrumented=[] pending=[] failed=[app!Program::Main: compiled before the helper assembly was loaded", "app!Program::Thrower: compiled before the helper assembly was loaded")
		res.MustStderrNotContain(t, "injected")

		bad := opts
		bad.Env = append([]string{"DELIVER_CORRUPT=1"}, opts.Env...)
		res = harness.Run(t, rt, app, bad)
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("corrupt helper: output changed:\n%s", res.Stdout)
		}
		res.MustStderrContain(t, "loaded=false probed=false early=true err=instr: the helper loader failed in the application: System.BadImageFormatException")
		t.Logf("%s: helper delivered, ran 3 times from bytes, saw Lib 2 while the app saw Lib 1; a throwing integration counted per method through Loader.Failed; Main (the host) deferred then ReJIT-requested; relative CORECLR_PROFILER_PATH fine; off and corrupt runs unchanged", rt.Name)
	})
}

const instrDeliveryOff = DeliveryEnv + "=0"
