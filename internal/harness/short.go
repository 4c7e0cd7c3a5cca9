package harness

import (
	"flag"
	"fmt"
	"testing"
)

// Integration tests and `go test -short`.
//
// Like Go's internal/testenv, the harness decides which tests can run here.
// An integration test is one that builds a profiler with -buildmode=c-shared,
// compiles C#, or starts a .NET process; it needs the toolchains and, mostly,
// a CoreCLR runtime. Under `go test -short` every integration test skips, and
// the harness installs nothing (scripts/setup.sh is never run, nothing is
// downloaded), so `go test -short ./...` runs the unit tests alone on a
// machine that has only Go and gcc. Without -short the integration tests run
// as always: the harness runs scripts/setup.sh when no runtime is found, and
// a test fails, saying why and what to run, when setup cannot provide one.
//
// [CompileCS], [BuildProfiler], [BuildCShared], [Run], [Start] and
// [ForEachRuntime] make a test an integration test on their own: each calls
// [Integration] first. A test that does integration work without them
// (runs gcc or `go build` itself, say) calls [Integration] at its top; one
// that needs the runtimes list calls [NeedsRuntime].

// ShortSkipMessage is the reason every integration test gives when it skips
// under -short.
const ShortSkipMessage = "integration test (builds a profiler, compiles C# or starts a process; needs a CoreCLR runtime): skipped under -short; run without -short for it"

// Short reports whether the test binary runs with -short. Unlike
// [testing.Short] it does not panic outside a test binary (it is then
// false).
func Short() bool {
	f := flag.Lookup("test.short")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	b, _ := g.Get().(bool)
	return b
}

// Integration marks t as an integration test: under -short it skips t with
// [ShortSkipMessage]; otherwise it does nothing.
func Integration(t testing.TB) {
	t.Helper()
	if Short() {
		t.Skip(ShortSkipMessage)
	}
}

// NeedsRuntime marks t as an integration test that needs a CoreCLR runtime
// and returns the runtimes [Runtimes] finds. Under -short it skips t (see
// [Integration]) without looking for one. Otherwise, when none is available
// (none installed and scripts/setup.sh could not install one, or
// CLRPROF_RUNTIMES matches none), it fails t with the reason and what to
// run: an integration test does not pass by skipping its subject.
func NeedsRuntime(t testing.TB) []Runtime {
	t.Helper()
	Integration(t)
	rts, err := Runtimes()
	if err == nil && len(rts) == 0 {
		err = fmt.Errorf("harness: no CoreCLR runtime available\n%s", noRuntimeAdvice)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rts
}

// noRuntimeAdvice follows every "no runtime" error of [Runtimes].
const noRuntimeAdvice = "This test needs a real CoreCLR runtime. Install the test runtimes with `bash scripts/setup.sh` " +
	"(they go to $CLRPROF_CACHE, default ~/.cache/clrprof), or point DOTNET_ROOT at a dotnet install; " +
	"to run only the unit tests, which need none, use `go test -short ./...`."
