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
			switch {
			case rt.Major < 3:
				return "collectible AssemblyLoadContext (statics of an unloadable library) came with .NET Core 3.0"
			case rt.Major < 5:
				return "GetAppDomainStaticAddress on a class of a collectible context being unloaded crashes the runtime " +
					"(its loader allocator object is already cleared, dotnet/runtime#33367; seen here on 3.1.23 as SIGSEGV in " +
					"ProfToEEInterfaceImpl::GetAppDomainStaticAddress), and no callback comes early enough to stop asking"
			case rt.Major == 8:
				return "with COR_PRF_MONITOR_GC on, the GC's heap walk crashes the runtime after a collectible " +
					"AssemblyLoadContext is unloaded (gc_heap::walk_heap_per_heap over frozen segments, dotnet/runtime#100002; " +
					"seen here on 8.0.4 with MonitorGC as the only event)"
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
