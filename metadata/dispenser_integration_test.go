//go:build cgo

package metadata_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestRuntimeDispenser runs dispprof (see its doc) on every runtime: the
// runtime's MetaDataGetDispenser reached through profiler.MetaDataDispenser
// opens the app's file by path; the Tables getters agree with the import
// (name of a row, MVID); options round-trip; a scope built with the Emit
// calls (constants, nil-terminated token lists, references) saves to
// memory and reads back with the same values.
func TestRuntimeDispenser(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	lib := harness.BuildProfiler(t, "./metadata/testdata/dispprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/dispapp/app.cs"}, dir, harness.OutName("DApp.exe"), harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{8D2C4B6A-1E3F-4A5B-9C7D-2E4F6A8B0C1D}"})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "get=7\n", "app done\n")
		var lines []string
		for _, l := range res.StderrLines() {
			if s, ok := strings.CutPrefix(l, "dispprof: "); ok {
				lines = append(lines, s)
				if strings.Contains(s, "ERROR") && !strings.HasPrefix(s, "find assemblies by name") {
					t.Errorf("%s", s)
				}
			}
		}
		got := strings.Join(lines, "\n")
		t.Logf("%s:\n%s", rt.Name, got)
		// CoreCLR has no assembly search: the wrapper passes its answer
		// on, COR_E_NOTSUPPORTED before .NET 10 and E_NOTIMPL since.
		findAnswer := "find assemblies by name: 0 ERROR COR_E_NOTSUPPORTED (0x80131515)"
		if rt.Major >= 10 {
			findAnswer = "find assemblies by name: 0 ERROR E_NOTIMPL (0x80004001)"
		}
		for _, want := range []string{
			"dispenser ok",
			"methodimpl DApp.Impl.DApp.IGet.Get() implements DApp.IGet.Get()",
			"table 2 name=TypeDef rows=4 columns=6",
			"column 2.1 name=Name size=",
			"typedef 0x02000003 name via tables=Impl",
			"coded token 0 name=TypeDefOrRef kinds=[MdtTypeDef MdtTypeRef MdtTypeSpec]",
			"guid 1 equals mvid=true",
			"stream 0 name=#~ bytes>0=true",
			"assembly name=DApp",
			findAnswer,
			"option check duplicates: changed=true set=true",
			"emit reuse: assemblyref=true typeref=true",
			"emit bad constant refused: ",
			"emit saved ",
			"saved field Answer type=ElementTypeI4 default=2a000000",
			"saved field Greeting type=ElementTypeString default=6800e9006c006c006f00",
			"saved property Size getter=get_Size",
			"saved event Changed",
			"saved param 1 scale in=true",
			"saved assembly ref System.Runtime 4.0.0.0 token=b03f5f7f11d50a3a",
			"saved generic params [T]; name from token Thing",
			"saved assembly Gen 1.2.3.4",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: missing %q", rt.Name, want)
			}
		}
	})
}
