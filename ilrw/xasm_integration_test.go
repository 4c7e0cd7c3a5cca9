//go:build cgo

package ilrw_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestRewriteCallsIntoAnotherAssembly rewrites App::Target to call a method
// of XLib.dll, an assembly the app does not reference (the rewrite defines
// the AssemblyRef, TypeRef and MemberRef), and Console.WriteLine through
// the references the app already has (reused: no row added). Calling the
// same external method twice defines nothing the second time. The app's
// output shows the rewritten calls ran, on every runtime.
func TestRewriteCallsIntoAnotherAssembly(t *testing.T) {
	lib := harness.BuildProfiler(t, "./ilrw/testdata/xasmprof")
	existing := regexp.MustCompile(`^xasmprof: existing refs: WriteLine=(\S+) rows before asm=(\d+) type=(\d+) member=(\d+) after asm=(\d+) type=(\d+) member=(\d+)$`)
	fresh := regexp.MustCompile(`^xasmprof: new refs: Hit=(\S+) again=(\S+) rows after first asm=(\d+) type=(\d+) member=(\d+) after second asm=(\d+) type=(\d+) member=(\d+)$`)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		dir := t.TempDir()
		harness.CompileCS(t, []string{"testdata/xasm/lib.cs"}, dir, harness.Library(), harness.OutName("XLib.dll"), harness.For(rt))
		app := harness.CompileCS(t, []string{"testdata/xasm/app.cs"}, dir, harness.OutName("XApp.exe"), harness.For(rt))
		if strings.Contains(filepath.Base(app), "XLib") {
			t.Fatal("app and library mixed up")
		}
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{5B7A3C1E-2D4F-4A8B-9C6E-0F1A2B3C4D5E}"})
		res.MustSucceed(t)
		res.MustStderrNotContain(t, "rewrite error")
		var ex, nw []string
		for _, l := range res.StderrLines() {
			if m := existing.FindStringSubmatch(l); m != nil {
				ex = m
			}
			if m := fresh.FindStringSubmatch(l); m != nil {
				nw = m
			}
		}
		if ex == nil || nw == nil {
			t.Fatalf("no reference report:\n%s", res.Describe())
		}
		t.Logf("%s\n%s", ex[0], nw[0])
		n := func(s string) int { v, _ := strconv.Atoi(s); return v }
		// Existing references: no row added.
		if ex[2] != ex[5] || ex[3] != ex[6] || ex[4] != ex[7] {
			t.Errorf("reusing the app's Console.WriteLine reference added rows: %s", ex[0])
		}
		if !strings.HasPrefix(ex[1], "MemberRef") && !strings.HasPrefix(ex[1], "0x0a") {
			t.Errorf("WriteLine token %s is not a MemberRef", ex[1])
		}
		// New references: one AssemblyRef, one TypeRef, one MemberRef; the
		// second request defines nothing and gives the same token.
		if n(nw[3]) != n(ex[5])+1 || n(nw[4]) != n(ex[6])+1 || n(nw[5]) != n(ex[7])+1 {
			t.Errorf("calling into XLib: want one new row of each, got %s (after the existing refs: asm=%s type=%s member=%s)", nw[0], ex[5], ex[6], ex[7])
		}
		if nw[1] != nw[2] || nw[3] != nw[6] || nw[4] != nw[7] || nw[5] != nw[8] {
			t.Errorf("second request for the same external method defined rows or gave another token: %s", nw[0])
		}
		for i := 1; i <= 3; i++ {
			res.MustStdoutContain(t, fmt.Sprintf("XLib.Hits.Hit App::Target #%d\n", i))
		}
		if c := strings.Count(res.Stdout, "Target via the app's Console reference\n"); c != 3 {
			t.Errorf("rewritten Console.WriteLine call ran %d times, want 3:\n%s", c, res.Describe())
		}
		res.MustStdoutContain(t, "sum=6\n", "app done\n")
		res.MustStderrContain(t, "xasmprof: stats rewritten=1 errors=0")
	})
}
