package conformance

import (
	"path/filepath"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "classload",
		Upstream:      "unittest/classload.cs, unittest/unloadlibrary.cs, native/classload",
		UpstreamLines: 158,
		CLSID:         "{A1B2C3D4-E5F6-7890-1234-56789ABCDEF0}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 3 {
				return "collectible AssemblyLoadContext (unloading a library and its classes) came with .NET Core 3.0"
			}
			return ""
		},
		Run: func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
			unload := harness.CompileCS(t, []string{filepath.Join("classload", "unloadlibrary.cs")}, t.TempDir(),
				harness.Library(), harness.OutName("UnloadLibrary.dll"), harness.For(rt))
			return harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath:  lib,
				ProfilerCLSID: sc.CLSID,
				Args:          []string{unload},
			})
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			res.MustStdoutContain(t, "TestClass constructed", "context collected: True")
			// dotnet/runtime#114068: generic instantiations are unloaded
			// without a callback before .NET 10.
			if rt.Major >= 10 {
				res.MustStdoutContain(t, "unloads expected: 7")
			} else {
				res.MustStdoutContain(t, "unloads expected: 1")
			}
			logLines(t, res, "load started")
		},
	})
}
