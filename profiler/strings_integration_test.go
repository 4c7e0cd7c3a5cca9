package profiler_test

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// ReadString reads strings handed to a hooked method (a literal, one built
// at run time outside ASCII and the BMP, an empty one) and fails, without
// crashing, on an object that is no string and on values that are no
// object (0, small and unmapped addresses, the address of a stack slot).
func TestReadString(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/strprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/strprof/app.cs"}, "", harness.For(rt))
		if rt.Major < 3 {
			t.Skipf("%s: the ELT argument ranges are wrong on Linux before .NET Core 3.0 (dotnet/coreclr#19622), and 2.0 calls no hook", rt.Name)
		}
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{6A2D9C41-0E7B-4F35-9B18-2C5E7A3D1F04}"})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "strapp: 19\n")
		res.MustStderrContain(t,
			"strprof: arg0 \"a literal\" err=<nil>\n",
			"strprof: arg0 \"built \u00e9\u4e2d\U0001F600\" err=<nil>\n",
			"strprof: arg0 \"\" err=<nil>\n",
			"strprof: arg1 \"x\" err=<nil>\n",
		)
		var notString, bogus int
		for _, l := range res.StderrLines() {
			switch {
			case strings.HasPrefix(l, "strprof: arg1 \"\" err=clrprof: ReadString:") && strings.Contains(l, "is not a string"):
				notString++
			case l == "strprof: bogus failed=true":
				bogus++
			case strings.HasPrefix(l, "strprof: bogus"):
				t.Errorf("ReadString accepted a bogus object: %s", l)
			}
		}
		if notString != 2 || bogus != 15 {
			t.Errorf("an object[] and a boxed int rejected %d times (want 2), bogus values %d times (want 15)\n%s", notString, bogus, res.Describe())
		}
	})
}
