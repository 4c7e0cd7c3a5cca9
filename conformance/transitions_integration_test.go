package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	// Upstream runs four variants: a P/Invoke with blittable or
	// non-blittable arguments, calling back through a marshalled delegate
	// or an UnmanagedCallersOnly method. The delegate variants run on every
	// runtime; the UnmanagedCallersOnly ones are a scenario of their own.
	register(&scenario{
		Name:          "transitions",
		Upstream:      "transitions/transitions.cs (delegate variants), native/transitions",
		UpstreamLines: 165,
		CLSID:         "{8C3B6F0E-2D4A-4E59-B1C7-3A9E5D7F1B02}",
		Run: runTransitions(
			transitionsVariant{"BlittableToDelegate", "DoPInvoke", "Invoke", 26},
			transitionsVariant{"NonBlittableToDelegate", "DoPInvokeNonBlittable", "Invoke", 26},
		),
	})
	register(&scenario{
		Name:          "transitionsuco",
		Upstream:      "transitions/transitions.cs (UnmanagedCallersOnly variants), native/transitions",
		UpstreamLines: 165,
		App:           []string{"../transitions/app.cs"},
		Profiler:      "../transitions/profiler",
		CLSID:         "{8C3B6F0E-2D4A-4E59-B1C7-3A9E5D7F1B02}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 5 {
				return "UnmanagedCallersOnlyAttribute is new in .NET 5; earlier runtimes ignore it and cannot call such a method from native code"
			}
			return ""
		},
		Run: runTransitions(
			transitionsVariant{"BlittableToUnmanagedCallersOnly", "DoPInvoke", "DoReversePInvoke", 26},
			transitionsVariant{"NonBlittableToUnmanagedCallersOnly", "DoPInvokeNonBlittable", "DoReversePInvoke", 2},
		),
	})
}

// A transitionsVariant is one run of the app: its argument and the methods
// the profiler must see the P/Invoke and the reverse P/Invoke on, and what
// the callback returns to native code (the bool true arrives as 1).
type transitionsVariant struct {
	arg, pinvoke, reverse string
	returned              int
}

// runTransitions builds the P/Invoke target with gcc, as
// libconftransitions.so, lets the runtime find it through LD_LIBRARY_PATH,
// and runs each variant in its own process. The result of the last run is
// returned for the common checks; the others are checked here.
func runTransitions(variants ...transitionsVariant) func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
	return runTransitionsWith(nil, variants...)
}

// runTransitionsWith is runTransitions with extra environment variables.
func runTransitionsWith(env []string, variants ...transitionsVariant) func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
	return func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
		native := harness.BuildCShared(t, []string{filepath.Join("transitions", "native.c")}, "-Wall", "-Werror", "-fvisibility=hidden")
		dir := t.TempDir()
		if err := os.Symlink(native, filepath.Join(dir, "libconftransitions.so")); err != nil {
			t.Fatal(err)
		}
		var res harness.Result
		for i, v := range variants {
			res = harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath:  lib,
				ProfilerCLSID: sc.CLSID,
				Args:          []string{v.arg},
				Env: append([]string{
					"LD_LIBRARY_PATH=" + dir,
					"TRANSITIONS_PINVOKE=" + v.pinvoke,
					"TRANSITIONS_REVERSE=" + v.reverse,
				}, env...),
			})
			res.MustStdoutContain(t, fmt.Sprintf("native DoPInvoke: the callback returned %d\n", v.returned))
			if i < len(variants)-1 {
				mustPass(t, res)
			}
		}
		return res
	}
}
