//go:build cgo

package instr_test

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
)

// ExampleMember reads an HttpClient request's method and URI at entry,
// and the response's status at its task's completion, from Go
// (TestGoHookMembersHttpClient runs this rule on .NET 10 and 11). The
// framework is precompiled: the rule needs Config.ReJIT.
func ExampleMember() {
	targets, err := target.ParseList("System.Net.Http!System.Net.Http.HttpClient::SendAsync(" +
		"System.Net.Http.HttpRequestMessage,System.Net.Http.HttpCompletionOption,System.Threading.CancellationToken)")
	if err != nil {
		panic(err)
	}
	hooks := &instr.GoHooks{
		Deferred: true, // the entry and exit only record; Enter and Exit run on a goroutine
		Members: []instr.Member{
			{Arg: 0, Path: "Method.Method"},         // a string
			{Arg: 0, Path: "RequestUri"},            // a System.Uri: its ToString()
			{Arg: instr.Result, Path: "StatusCode"}, // an enum of another module: its ToString()
		},
		Enter: func(c *instr.Call) uint64 {
			fmt.Fprintf(os.Stderr, "%s %s\n", c.Member(0).Str(), c.Member(1).Str())
			return 0
		},
		Exit: func(r *instr.Return) {
			if st := r.Member(2); !st.IsNull() {
				fmt.Fprintf(os.Stderr, "-> %s\n", st.Str())
			}
		},
	}
	cfg := instr.Config{ReJIT: true, Rules: []instr.Rule{{Targets: targets, Go: hooks}}}
	_ = cfg // instr.New(info, cfg) in Initialize, as ExampleGoHooks
}
