package conformance

import (
	"path/filepath"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "classload",
		Upstream:      "unittest/classload.cs, native/classload",
		UpstreamLines: 158,
		CLSID:         "{3B8E1F6A-4C2D-4B97-8E05-A1D6C9F3B713}",
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major < 3:
				return "collectible AssemblyLoadContexts are new in .NET Core 3.0"
			case rt.Major < 10:
				return "ClassUnloadStarted/Finished come only for TestClass, not for the generic instantiations over it that the collectible context owns (observed on 3.1 and 8: 7 classes loaded, 1 unloaded; dotnet/runtime#114068, fixed in .NET 10 by dotnet/runtime#114107)"
			}
			return ""
		},
		Run: func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
			dll := harness.CompileCS(t, []string{filepath.Join(sc.Name, "lib.cs")}, t.TempDir(), harness.Library(), harness.OutName("ConfClassLib.dll"))
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: sc.CLSID, Args: []string{dll}})
			res.MustStdoutContain(t, "context collected: True")
			return res
		},
	})
}
