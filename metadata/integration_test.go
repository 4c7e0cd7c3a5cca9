//go:build cgo

package metadata_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const metaprofCLSID = "{3F0E2C9A-61B4-4E57-9D2B-7A1C5E8F4B60}"

// metaRun is one run of metaapp under metaprof on one runtime, shared by
// the tests below (one run per runtime per test binary).
type metaRun struct {
	res   harness.Result
	lines []string // metaprof's lines, without the prefix
}

var (
	runsMu sync.Mutex
	runs   = map[string]*metaRun{}
	built  struct {
		once sync.Once
		lib  string
		mu   sync.Mutex
		apps map[string]string // by runtime name
	}
)

// workDir holds the app and the profiler for all tests of the binary.
var workDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "metadata-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	workDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// buildAll builds the profiler, once, into workDir, and compiles the app
// with its libraries for rt (mcs's build before .NET 10, Roslyn's against
// rt's reference assemblies from 10 on), once per runtime, into
// workDir/<runtime>/.
func buildAll(t *testing.T, rt harness.Runtime) (lib, app string) {
	built.once.Do(func() {
		so := harness.BuildProfiler(t, "./metadata/testdata/metaprof")
		data, err := os.ReadFile(so)
		if err != nil {
			t.Fatal(err)
		}
		lib := filepath.Join(workDir, filepath.Base(so))
		if err := os.WriteFile(lib, data, 0o755); err != nil {
			t.Fatal(err)
		}
		built.lib = lib
	})
	if built.lib == "" {
		t.Fatal("building the profiler failed in an earlier test")
	}
	built.mu.Lock()
	defer built.mu.Unlock()
	if app, ok := built.apps[rt.Name]; ok {
		return built.lib, app
	}
	dir := filepath.Join(workDir, rt.Name, "app")
	v1 := filepath.Join(workDir, rt.Name, "fwda-v1")
	fwdb := harness.CompileCS(t, []string{"testdata/metaapp/fwdb.cs"}, dir, harness.Library(), harness.For(rt))
	fwdaV1 := harness.CompileCS(t, []string{"testdata/metaapp/fwda_v1.cs"}, v1, harness.Library(), harness.OutName("fwda.dll"), harness.For(rt))
	app = harness.CompileCS(t, []string{"testdata/metaapp/metaapp.cs"}, dir, harness.Unsafe(), harness.Reference(fwdaV1), harness.For(rt))
	harness.CompileCS(t, []string{"testdata/metaapp/fwda_v2.cs"}, dir, harness.Library(), harness.OutName("fwda.dll"), harness.Reference(fwdb), harness.For(rt))
	harness.CompileCS(t, []string{"testdata/metaapp/alclib.cs"}, dir, harness.Library(), harness.For(rt))
	if built.apps == nil {
		built.apps = map[string]string{}
	}
	built.apps[rt.Name] = app
	return built.lib, app
}

func runMeta(t *testing.T, rt harness.Runtime) *metaRun {
	t.Helper()
	lib, app := buildAll(t, rt)
	runsMu.Lock()
	defer runsMu.Unlock()
	if r, ok := runs[rt.Name]; ok {
		return r
	}
	res := harness.Run(t, rt, app, harness.RunOptions{
		ProfilerPath:      lib,
		ProfilerCLSID:     metaprofCLSID,
		DisableReadyToRun: true,
	})
	res.MustSucceed(t)
	res.MustStdoutContain(t, "forwarded: moved", "checkpoint", "app done")
	r := &metaRun{res: res}
	for _, l := range res.StderrLines() {
		if s, ok := strings.CutPrefix(l, "metaprof: "); ok {
			r.lines = append(r.lines, s)
		}
	}
	runs[rt.Name] = r
	return r
}

func (r *metaRun) with(prefix string) []string {
	var out []string
	for _, l := range r.lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

var totalRe = regexp.MustCompile(`^sigs total: (.*) failures=(\d+)$`)

// TestSignaturesRoundTripAtRuntime: every method, field, property, local,
// standalone, member-ref, type-spec and method-spec signature of every
// module the app loads (ReadyToRun off, so the whole framework is JIT'd
// and loaded as IL) decodes and re-encodes byte-identical.
func TestSignaturesRoundTripAtRuntime(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		r := runMeta(t, rt)
		for _, l := range r.with("sig failure") {
			t.Errorf("%s", l)
		}
		tot := r.with("sigs total: ")
		if len(tot) != 1 {
			t.Fatalf("no totals line:\n%s", r.res.Describe())
		}
		m := totalRe.FindStringSubmatch(tot[0])
		if m == nil {
			t.Fatalf("bad totals line %q", tot[0])
		}
		modules := len(r.with("sigs ")) - 1
		t.Logf("%s: %d modules, signatures decoded and re-encoded byte-identical: %s (failures %s)", rt.Name, modules, m[1], m[2])
		if m[2] != "0" {
			t.Errorf("%s signatures failed", m[2])
		}
		for _, kv := range strings.Fields(m[1]) {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.Atoi(v)
			if n == 0 && k != "standalone-method" {
				t.Errorf("no %s signatures checked", k)
			}
		}
		if modules < 5 {
			t.Errorf("only %d modules checked", modules)
		}
	})
}

func mustHaveLines(t *testing.T, r *metaRun, want []string) {
	t.Helper()
	have := map[string]bool{}
	for _, l := range r.lines {
		have[l] = true
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("missing line %q", w)
		}
	}
	if t.Failed() {
		var relevant []string
		for _, l := range r.lines {
			if !strings.HasPrefix(l, "sigs ") && !strings.HasPrefix(l, "typeref: ") {
				relevant = append(relevant, l)
			}
		}
		t.Logf("metaprof said:\n  %s", strings.Join(relevant, "\n  "))
	}
	for _, l := range r.lines {
		if strings.Contains(l, " ERROR ") {
			t.Errorf("error: %s", l)
		}
	}
}

// TestTokenNames: names formatted from tokens and signatures alone.
func TestTokenNames(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		mustHaveLines(t, runMeta(t, rt), []string{
			"token method: Meta.Test.Outer<T>+Nested<U>.Pair<V>(T, U, V, string[])",
			"token method: Meta.Test.Outer<T>+Plain.Count(T[], System.Collections.Generic.List<T>)",
			"token method: Meta.Test.Shapes.Sum(int32*, int32)",
			"token method: Meta.Test.Shapes.Swap(int32&, int32&)",
			"token method: Meta.Test.Shapes.TryGet(int32, string&)",
			"token method: Meta.Test.Shapes.Cells(int32[,], int32[][], uint8**)",
			"token method: Meta.Test.Gen.Id<T>(T)",
			"token method: Meta.Test.Gen.Pairs<K,V>(System.Collections.Generic.Dictionary<K,V>)",
			"token method: Meta.Test.Point..ctor(int32, int32)",
			"token field: Meta.Test.Shapes.Flag : int32 modreq(System.Runtime.CompilerServices.IsVolatile)",
			"token field: Meta.Test.Shapes.Name : string modreq(System.Runtime.CompilerServices.IsVolatile)",
			"token field: Meta.Test.Shapes.Grid : int32[,]",
			"token field: Meta.Test.Shapes.Cursor : Meta.Test.Point*",
			"token field: Meta.Test.Outer<T>.Item : T",
			"token methodspec: Meta.Test.Outer<int>+Nested<string>.Pair<float>(int32, string, float32, string[])",
			"token methodspec: Meta.Test.Gen.Id<int>(int32)",
			"token methodspec: Meta.Test.Gen.Id<string>(string)",
			"token methodspec: Meta.Test.Gen.Id<Meta.Test.Point>(Meta.Test.Point)",
			"token methodspec: Meta.Test.Outer<string>+Nested<int>.Pair<Meta.Test.Point>(string, int32, Meta.Test.Point, string[])",
			"token methodspec: Meta.Test.Gen.Shared<string>(string)",
			"token methodspec: Meta.Test.Gen.Shared<object>(object)",
			"token methodspec: Meta.Test.Gen.Pairs<string,int[]>(System.Collections.Generic.Dictionary<string,int32[]>)",
			"token memberref: Meta.Test.Outer<long>+Plain.Count(int64[], System.Collections.Generic.List<int64>)",
			"token memberref: System.Collections.Generic.Dictionary<!!0,!!1>+Enumerator.MoveNext()",
			"token memberref: System.Collections.Generic.List<long>.Add(int64)",
			"token memberref: int32[,]..ctor(int32, int32)",
		})
	})
}

// TestRuntimeNames: names from FunctionIDs as the JIT compiles them, and
// from a stack walk with and without frame info.
func TestRuntimeNames(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		r := runMeta(t, rt)
		mustHaveLines(t, r, []string{
			// Code shared by reference-type instantiations: the runtime
			// reports no class without frame info; metaprof monitors class
			// loads, so the SDK names the canonical instantiation the code
			// is (System.__Canon for reference types, value types kept),
			// and System.__Canon for the method's arguments.
			"jit: Meta.Test.Outer<int>+Nested<System.__Canon>.Pair<float>(int32, System.__Canon, float32, string[])",
			"jit: Meta.Test.Outer<System.__Canon>+Nested<int>.Pair<Meta.Test.Point>(System.__Canon, int32, Meta.Test.Point, string[])",
			"jit: Meta.Test.Outer<System.__Canon>+Plain.Count(System.__Canon[], System.Collections.Generic.List<System.__Canon>)",
			"jit: Meta.Test.Gen.Pairs<System.__Canon,System.__Canon>(System.Collections.Generic.Dictionary<System.__Canon,System.__Canon>)",
			"jit: Meta.Test.Gen.Shared<System.__Canon>(System.__Canon)",
			// Unshared code: exact.
			"jit: Meta.Test.Outer<long>+Plain.Count(int64[], System.Collections.Generic.List<int64>)",
			"jit: Meta.Test.Gen.Id<int>(int32)",
			"jit: Meta.Test.Gen.Id<System.__Canon>(System.__Canon)",
			"jit: Meta.Test.Gen.Id<Meta.Test.Point>(Meta.Test.Point)",
			"jit: Meta.Test.Shapes.Sum(int32*, int32)",
			"jit: Meta.Test.Shapes.Swap(int32&, int32&)",
			"jit: Meta.Test.Shapes.TryGet(int32, string&)",
			"jit: Meta.Test.Shapes.Cells(int32[,], int32[][], uint8**)",
			"jit: Meta.Test.Program.Main(string[])",
			// A COR_PRF_FRAME_INFO from a stack snapshot does not give the
			// exact instantiation (only one from a FunctionEnter hook
			// does, as ICorProfilerInfo2::GetFunctionInfo2 documents).
			"frame: Meta.Test.Gen.Shared<System.__Canon>(System.__Canon) | without frame info: Meta.Test.Gen.Shared<System.__Canon>(System.__Canon)",
			"frame: Meta.Test.Program.Main(string[]) | without frame info: Meta.Test.Program.Main(string[])",
		})
	})
}

// TestTypeRefResolution: every TypeRef of the app's modules resolves to a
// TypeDef of the same name in a loaded module, the forwarded type to
// fwdb.dll.
func TestTypeRefResolution(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		r := runMeta(t, rt)
		sum := r.with("typerefs: ")
		if len(sum) != 1 {
			t.Fatalf("no typeref summary:\n%s", r.res.Describe())
		}
		t.Logf("%s: %s", rt.Name, sum[0])
		for _, l := range r.with("typeref: ") {
			if strings.Contains(l, "ERROR") || strings.Contains(l, "WRONG") || strings.Contains(l, "not loaded") {
				t.Errorf("%s", l)
			}
		}
		fwd := r.with("typeref: metaapp.exe Fwd.Moved -> ")
		if len(fwd) != 1 || !strings.Contains(fwd[0], "-> fwdb.dll ") {
			t.Errorf("forwarded type: %q", fwd)
		}
		// For the record: the app was compiled against Mono's mscorlib,
		// which on CoreCLR is a facade forwarding to the framework.
		for _, l := range append(fwd, r.with("typeref: metaapp.exe System.Object -> ")...) {
			t.Logf("%s", l)
		}
	})
}

// TestIDMapDropsUnloadedIDs: on runtimes with collectible
// AssemblyLoadContexts, the IDs of the unloaded assembly leave the map.
func TestIDMapDropsUnloadedIDs(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		r := runMeta(t, rt)
		if !rt.AtLeast(3, 0) {
			r.res.MustStdoutContain(t, "alc: unsupported")
			t.Skipf("%s has no collectible AssemblyLoadContext", rt.Name)
		}
		r.res.MustStdoutContain(t, "alc: ran 42", "alc: alive=False")
		for _, l := range r.with("idmap") {
			t.Logf("%s", l)
		}
		before := r.with("idmap unload: alclib module before: ")
		after := r.with("idmap unload: alclib module after: ")
		if len(before) != 1 || len(after) != 1 {
			t.Fatalf("no unload of alclib seen")
		}
		if before[0] == "idmap unload: alclib module before: classes=0 functions=0" {
			t.Errorf("the map held nothing of alclib before the unload")
		}
		if after[0] != "idmap unload: alclib module after: known=false classes=0 functions=0" {
			t.Errorf("after unload: %s", after[0])
		}
		for _, l := range r.with("idmap shutdown: alclib functions") {
			if !strings.HasSuffix(l, "still mapped=0") || strings.Contains(l, "seen=0 ") {
				t.Errorf("%s", l)
			}
		}
	})
}

// TestMetadataAPI: the property readers and emit helpers on the app's real
// metadata.
func TestMetadataAPI(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		r := runMeta(t, rt)
		// mcs references Mono's mscorlib; Roslyn (.NET 10 and later) the
		// reference assemblies of the runtime's major version, System.Runtime
		// for the base types and System.Console for Console.
		refs := []string{"api: assembly ref mscorlib 4.0.0.0 token=b77a5c561934e089"}
		if rt.Major >= 10 {
			v := min(rt.Major, 11)
			refs = []string{fmt.Sprintf("api: assembly ref System.Runtime %d.0.0.0 token=b03f5f7f11d50a3a", v),
				fmt.Sprintf("api: assembly ref System.Console %d.0.0.0 token=b03f5f7f11d50a3a", v)}
		}
		mustHaveLines(t, r, refs)
		mustHaveLines(t, r, []string{
			"api: event Changed type=System.EventHandler add=add_Changed remove=remove_Changed",
			"api: param 1 key out=false",
			"api: param 2 value out=true",
			"api: Legacy ObsoleteAttribute found=true blob=01000a6f6c64207368617065730000",
			"api: custom attribute on Legacy: System.ObsoleteAttribute..ctor(string) value=01000a6f6c64207368617065730000",
			"api: property Value get=get_Value set=set_Value",
			"api: assembly metaapp 0.0.0.0",
			"api: assembly ref fwda 0.0.0.0 token=",
			"api: defined member ref System.Console.WriteLine(string)",
			"api: defined method spec Meta.Test.Gen.Id<long[]>(int64[])",
			"api: defined local signature (int32, System.Console) same bytes=true",
			"api: defined type spec System.Console<int32>",
			`api: defined user string "héllo, wörld ✓"`,
		})
		us := r.with("api: user strings=")
		if len(us) != 1 || !strings.HasSuffix(us[0], `has "forwarded: "=true`) {
			t.Errorf("user strings: %q", us)
		}
		for _, l := range r.with("api: ") {
			t.Logf("%s", l)
		}
	})
}
