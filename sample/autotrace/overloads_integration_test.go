package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// Which HttpClient overload every call goes through (docs/integrations.md,
// step 1), counted, not read from the source: the app makes 5 exchanges
// through each of GetAsync, GetStringAsync, SendAsync(request), PostAsync
// and the synchronous Send; autotrace traces one overload at a time, and
// each overload's calls are counted. Every asynchronous call reaches
// HttpMessageInvoker.SendAsync(request, token) once, every synchronous one
// HttpMessageInvoker.Send(request, token); HttpClient's own SendAsync with
// the completion option misses GetStringAsync.
func TestHttpClientOverloads(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/autotrace")
	const (
		req = "System.Net.Http.HttpRequestMessage"
		opt = "System.Net.Http.HttpCompletionOption"
		ct  = "System.Threading.CancellationToken"
	)
	want := []struct {
		method string
		calls  int
	}{
		{"HttpClient::SendAsync(" + req + ")", 5},
		{"HttpClient::SendAsync(" + req + "," + ct + ")", 5},
		{"HttpClient::SendAsync(" + req + "," + opt + "," + ct + ")", 15},
		{"HttpMessageInvoker::SendAsync(" + req + "," + ct + ")", 20},
		{"HttpClient::Send(" + req + "," + opt + "," + ct + ")", 5},
		{"HttpMessageInvoker::Send(" + req + "," + ct + ")", 5},
	}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skip("the app is compiled with Roslyn against the runtime's reference assemblies (System.Net.Http), here from .NET 10 on")
		}
		app := harness.CompileCS(t, []string{"testdata/overloads.cs"}, "", harness.For(rt))
		for _, w := range want {
			out := filepath.Join(t.TempDir(), "calls.jsonl")
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"AUTOTRACE_TARGETS=System.Net.Http!System.Net.Http." + w.method, "AUTOTRACE_OUTPUT=" + out}})
			res.MustSucceed(t)
			res.MustStdoutContain(t, "exchanges=25")
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			n := strings.Count(string(b), "\n")
			if n != w.calls {
				t.Errorf("%s: %d calls, want %d of the 25 exchanges", w.method, n, w.calls)
			}
			t.Logf("%s: %s: %d calls", rt.Name, w.method, n)
		}
	})
}
