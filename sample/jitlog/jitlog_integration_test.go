package main_test

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}"

// TestJitlogNames runs the jitlog sample on the demo app on every runtime and
// checks the names of the demo's methods, generic instantiations included.
func TestJitlogNames(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/jitlog")
	want := []string{
		"jit: Demo.Program.Main",
		"jit: Demo.MyClass<int>..ctor",
		"jit: Demo.MyClass<int>.Foo<float>",
		// Reference type arguments share code, compiled once for all of
		// them: the body compiled is the canonical instantiation's, named
		// so on every runtime (by the runtime itself on .NET 10+, through
		// the class loads the SDK records before).
		"jit: Demo.MyClass<System.__Canon>..ctor",
		"jit: Demo.MyClass<System.__Canon>.Foo<Demo.Point>",
		"jit: Demo.MyClass<long>+Nested<double>.Count",
		"jit: Demo.Program.Twice<double>",
		"jit: Demo.Point.ToString",
	}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"demo/demo.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "1/4/8.8\n", "s/x/(1,2)\n", "3\n", "demo done\n")
		lines := map[string]bool{}
		for _, l := range strings.Split(res.Stderr, "\n") {
			lines[l] = true
		}
		for _, w := range want {
			if !lines[w] {
				t.Errorf("%s: no line %q", rt.Name, w)
			}
		}
		// Which instantiation a shared body serves is not known when it is
		// compiled: no line may claim MyClass<string>.
		for l := range lines {
			if strings.Contains(l, "MyClass<string>") || strings.Contains(l, "MyClass<S>") {
				t.Errorf("%s: %q: shared code named as one instantiation or by its formal parameters", rt.Name, l)
			}
		}
		if t.Failed() {
			var demo []string
			for _, l := range strings.Split(res.Stderr, "\n") {
				if strings.Contains(l, "Demo.") {
					demo = append(demo, l)
				}
			}
			t.Logf("demo lines:\n%s", strings.Join(demo, "\n"))
		}
		res.MustStderrContain(t, "functions compiled\n")
	})
}
