package conformance

import (
	"path/filepath"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "getappdomainstaticaddress",
		Upstream:      "unittest/getappdomainstaticaddress.cs, unittest/unloadlibrary.cs, native/getappdomainstaticaddress",
		UpstreamLines: 641,
		CLSID:         "{604D76F0-2AF2-48E0-B196-80C972F6AFB7}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 3 {
				return "collectible AssemblyLoadContext (statics of an unloadable library) came with .NET Core 3.0"
			}
			return ""
		},
		Run: func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
			unload := harness.CompileCS(t, []string{filepath.Join("classload", "unloadlibrary.cs")}, t.TempDir(),
				harness.Library(), harness.OutName("UnloadLibrary.dll"))
			return harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath:  lib,
				ProfilerCLSID: sc.CLSID,
				Args:          []string{unload},
			})
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			logLines(t, res, "static addresses")
		},
	})
}
