package instr_test

import (
	"path/filepath"
	"strings"
	"testing"
	"os"

	"github.com/clrprof/clrprof/internal/harness"
)

func TestScratchAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/instrprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		dir := t.TempDir()
		harness.CompileCS(t, []string{"testdata/apps/helper.cs"}, dir, harness.Library(), harness.OutName("InstrHelper.dll"))
		app := harness.CompileCS(t, []string{"../internal/testapps/async/async.cs"}, dir, harness.For(rt), harness.RuntimeAsync())
		env := []string{"INSTRPROF_TARGETS=async!AsyncApp.Ops::NoAwait", "INSTRPROF_REJIT=1", "INSTR_WAIT_FILE=" + filepath.Join(t.TempDir(), "added")}
		if a := os.Getenv("SCRATCH_ADD"); a != "" {
			env = append(env, "INSTRPROF_ADD="+a)
		}
		env = append(env, strings.Fields(os.Getenv("SCRATCH_ENV"))...)
		env = append(env, harness.RuntimeAsyncEnv(rt)...)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, Env: env})
		var b strings.Builder
		n0 := 0
		for _, l := range res.StderrLines() {
			if strings.HasPrefix(l, "HOOK end 0") {
				n0++
			}
			if !strings.HasPrefix(l, "HOOK begin 0") && !strings.HasPrefix(l, "HOOK end 0") {
				b.WriteString(l + "\n")
			}
		}
		t.Logf("NoAwait ends %d\n%s\nstdout:\n%s", n0, b.String(), res.Stdout)
	})
}
