package profiler_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const apiprofCLSID = "{4C1E2A7B-3D5F-4E8A-9B6C-2F1D0E3A5B7C}"

var (
	apiModstartRe  = regexp.MustCompile(`(?m)^apiprof: modstart name=(\S*) base=(\S+) assembly=(\d+) incomplete=(\w+) err=(.*)$`)
	apiModfinishRe = regexp.MustCompile(`(?m)^apiprof: modfinish name=(\S*) base=(\S+) assembly=(\d+) flags=\S* err=(.*)$`)
	apiHandleRe    = regexp.MustCompile(`(?m)^apiprof: handle obj=(\S+) back=(\S+) same=(\w+) err=(.*) notavailable=(\w+)$`)
	apiShutdownRe  = regexp.MustCompile(`(?m)^apiprof: Shutdown arrays=(\d+) nonarrays=(\d+) arrayerrs=(\d+) codestarts=(\d+) nocode=(\d+) codeerr=(.*) codeerr_notavailable=(\w+) frozenerr=(.*)$`)
)

// TestIdiomaticAPI loads testdata/apiprof, which calls the idiomatic forms
// of calls whose raw forms had holes, into every runtime:
//
//   - ModuleInfoOf (GetModuleInfo2) inside ModuleLoadStarted: the runtime
//     answers CORPROF_E_DATAINCOMPLETE (no assembly yet) and the module's
//     name it did return must reach the caller; GetModuleInfo2 with every
//     output in ModuleLoadFinished answers all of them;
//   - CreateHandle returns an ObjectHandle that GetObjectIDFromHandle maps
//     back to the object and DestroyHandle takes (ICorProfilerInfo13: .NET 7+);
//   - IsArrayClass answers array and not-array as a bool (S_FALSE is "no");
//   - GetNativeCodeStartAddresses returns a slice (ICorProfilerInfo9: 3.0+).
func TestIdiomaticAPI(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/apiprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: apiprofCLSID})
		checkApp(t, res)
		iv := regexp.MustCompile(`(?m)^apiprof: info=(\d+)$`).FindStringSubmatch(res.Stderr)
		if iv == nil {
			t.Fatalf("no info line:\n%s", res.Describe())
		}
		infoVersion, _ := strconv.Atoi(iv[1])

		mods := apiModstartRe.FindAllStringSubmatch(res.Stderr, -1)
		if len(mods) < 3 {
			t.Fatalf("%d modstart lines, want at least 3:\n%s", len(mods), res.Describe())
		}
		incomplete := 0
		for _, m := range mods {
			name, inc := m[1], m[4]
			if !strings.HasSuffix(strings.ToLower(name), ".dll") && !strings.HasSuffix(strings.ToLower(name), ".exe") {
				t.Errorf("GetModuleInfo2 in ModuleLoadStarted: name %q (err %s): the module's file name did not reach the caller", name, m[5])
			}
			if inc == "true" {
				incomplete++
			} else if m[5] != "<nil>" {
				t.Errorf("GetModuleInfo2 in ModuleLoadStarted: %s: %s", name, m[5])
			}
		}
		t.Logf("%s: %d modules at ModuleLoadStarted, %d answered CORPROF_E_DATAINCOMPLETE with the name filled", rt.Name, len(mods), incomplete)
		if incomplete == 0 {
			t.Errorf("no module answered CORPROF_E_DATAINCOMPLETE: the partial-result path was not exercised")
		}

		fin := apiModfinishRe.FindAllStringSubmatch(res.Stderr, -1)
		if len(fin) < 3 {
			t.Fatalf("%d modfinish lines, want at least 3:\n%s", len(fin), res.Describe())
		}
		for _, m := range fin {
			if m[1] == "" || m[1] == "." || m[2] == "0x0" || m[3] == "0" || m[4] != "<nil>" {
				t.Errorf("GetModuleInfo2 in ModuleLoadFinished: name=%q base=%s assembly=%s err=%s", m[1], m[2], m[3], m[4])
			}
		}

		if !strings.Contains(res.Stderr, "apiprof: parts class=App method=Work args=0 name=App.Work\n") ||
			!strings.Contains(res.Stderr, "apiprof: parts class=App method=Main args=0 name=App.Main\n") {
			t.Errorf("FunctionNameParts: no class=App method=Work / Main lines:\n%s", res.Describe())
		}

		h := apiHandleRe.FindStringSubmatch(res.Stderr)
		if h == nil {
			t.Fatalf("no handle line:\n%s", res.Describe())
		}
		hasInfo13 := infoVersion >= 13
		switch {
		case hasInfo13 && (h[3] != "true" || h[4] != "<nil>"):
			t.Errorf("CreateHandle/GetObjectIDFromHandle/DestroyHandle on %s: obj=%s back=%s err=%s", rt.Name, h[1], h[2], h[4])
		case !hasInfo13 && h[5] != "true":
			t.Errorf("CreateHandle on %s (no ICorProfilerInfo13): err=%s, want ErrNotAvailable", rt.Name, h[4])
		}

		s := apiShutdownRe.FindStringSubmatch(res.Stderr)
		if s == nil {
			t.Fatalf("no Shutdown line:\n%s", res.Describe())
		}
		n := func(i int) int { v, _ := strconv.Atoi(s[i]); return v }
		t.Logf("%s: IsArrayClass arrays=%d nonarrays=%d errors=%d; GetNativeCodeStartAddresses code=%d none=%d err=%s; IsFrozenObject err=%s",
			rt.Name, n(1), n(2), n(3), n(4), n(5), s[6], s[8])
		if n(1) == 0 || n(2) == 0 || n(3) != 0 {
			t.Errorf("IsArrayClass: arrays=%d nonarrays=%d errors=%d, want both answers and no errors", n(1), n(2), n(3))
		}
		hasInfo9 := infoVersion >= 9
		switch {
		case hasInfo9 && (n(4) == 0 || s[6] != "<nil>"):
			t.Errorf("GetNativeCodeStartAddresses on %s: %d functions with code, first error %s", rt.Name, n(4), s[6])
		case !hasInfo9 && s[7] != "true":
			t.Errorf("GetNativeCodeStartAddresses on %s (no ICorProfilerInfo9): err=%s, want ErrNotAvailable", rt.Name, s[6])
		}
		if infoVersion >= 10 && s[8] != "<nil>" {
			t.Errorf("IsFrozenObject on %s: %s", rt.Name, s[8])
		}
		// .NET 8 asks every profiler that answers ICorProfilerCallback11
		// whether it loads as a notification-only profiler; the Go method
		// returns the answer as a bool.
		asked := strings.Contains(res.Stderr, "apiprof: notificationonly asked")
		t.Logf("%s: LoadAsNotificationOnly called: %v", rt.Name, asked)
		if rt.Major >= 8 && !asked {
			t.Errorf("LoadAsNotificationOnly was not called on %s", rt.Name)
		}
	})
}
