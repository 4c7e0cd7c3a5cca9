package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// CSOption changes how [CompileCS] compiles.
type CSOption func(*csConfig)

type csConfig struct {
	target   string
	unsafe   bool
	optimize bool
	debug    bool
	refs     []string
	defines  []string
	outName  string
	args     []string
	// roslyn, when set, is the reference set ("net10.0", "net11.0") Roslyn's
	// csc compiles against instead of mcs.
	roslyn       string
	runtimeAsync bool
	skip         string // why the compilation cannot be done (the test is skipped)
}

// Unsafe allows unsafe code (mcs -unsafe).
func Unsafe() CSOption { return func(c *csConfig) { c.unsafe = true } }

// Optimize turns on compiler optimizations (mcs -optimize+).
func Optimize() CSOption { return func(c *csConfig) { c.optimize = true } }

// Debug emits debug information (mcs -debug; Mono's .mdb format, which
// CoreCLR ignores, but it keeps sequence-point-friendly IL).
func Debug() CSOption { return func(c *csConfig) { c.debug = true } }

// Library makes a class library (.dll) instead of an executable.
func Library() CSOption { return func(c *csConfig) { c.target = "library" } }

// Reference adds assembly references: paths to assemblies (e.g. a library
// built by CompileCS) or names of Mono's framework assemblies such as
// "System.Core.dll". An app and the libraries it references must be in one
// directory at run time: compile them into the same outDir.
func Reference(refs ...string) CSOption {
	return func(c *csConfig) { c.refs = append(c.refs, refs...) }
}

// Define defines preprocessor symbols (mcs -define:).
func Define(symbols ...string) CSOption {
	return func(c *csConfig) { c.defines = append(c.defines, symbols...) }
}

// OutName sets the output file name (default: the first source's base name
// with .exe or .dll).
func OutName(name string) CSOption { return func(c *csConfig) { c.outName = name } }

// MCSArgs passes extra arguments to mcs.
func MCSArgs(args ...string) CSOption {
	return func(c *csConfig) { c.args = append(c.args, args...) }
}

// For compiles the sources for the runtime rt: with Roslyn's csc against
// the reference assemblies of rt's major version (net10.0 on .NET 10,
// net11.0 on 11 and later), with a portable PDB beside the assembly, when rt
// is .NET 10 or later and Roslyn is installed (scripts/setup.sh lays it out
// from ../shared/dotnet); with mcs otherwise, which is what the older
// runtimes need. Without For, CompileCS uses mcs, whose output runs on every
// runtime. Roslyn compiles with the symbol ROSLYN defined, for code mcs
// cannot compile (ValueTask, async iterators, spans). A reference given by name ("System.Core.dll") is Mono's and is
// ignored by csc, which references the whole framework.
func For(rt Runtime) CSOption {
	return func(c *csConfig) {
		switch {
		case rt.Major >= 11:
			c.roslyn = "net11.0"
		case rt.Major == 10:
			c.roslyn = "net10.0"
		}
	}
}

// AspNetCore references the assemblies of the ASP.NET Core shared
// framework installed beside rt ([AspNetCoreDir]): its implementation
// assemblies, since the reference assemblies laid out for Roslyn cover
// Microsoft.NETCore.App only. Use it with For; run the app with
// RunOptions.AspNetCore. The test is skipped when rt has no ASP.NET Core.
func AspNetCore(rt Runtime) CSOption {
	return func(c *csConfig) {
		dir, _, ok := AspNetCoreDir(rt)
		if !ok {
			c.skip = "no ASP.NET Core (" + aspNetCoreName + ") installed beside " + rt.Name
			return
		}
		dlls, _ := filepath.Glob(filepath.Join(dir, "*.dll"))
		c.refs = append(c.refs, dlls...)
	}
}

// RuntimeAsync compiles async methods as runtime async (Roslyn's
// -features:runtime-async=on -langversion:preview): no state machine, the
// method carries MethodImplAttributes.Async (0x2000). It needs For with a
// runtime of .NET 10 or later (the test is skipped otherwise); on .NET 10
// the app runs only with [RuntimeAsyncEnv] in its environment.
func RuntimeAsync() CSOption { return func(c *csConfig) { c.runtimeAsync = true } }

// RuntimeAsyncEnv returns the environment rt needs to run an assembly
// compiled with [RuntimeAsync]: DOTNET_RuntimeAsync=1 on .NET 10 (without
// it the runtime refuses the type: TypeLoadException), nothing on 11, where
// runtime async is on by default.
func RuntimeAsyncEnv(rt Runtime) []string {
	if rt.Major == 10 {
		return []string{"DOTNET_RuntimeAsync=1"}
	}
	return nil
}

// AsyncBuild is one way of compiling an async app for a runtime: its name
// ("classic" or "runtime-async", fit for a subtest), whether its async
// methods are runtime async, the [CompileCS] options and the environment
// the app needs to run.
type AsyncBuild struct {
	Name         string
	RuntimeAsync bool
	Options      []CSOption
	Env          []string
}

// AsyncBuilds returns the builds of an async app that rt runs, for tests
// that compare the classic build with the runtime-async build of one
// source: the classic build ([For] rt) always, and from .NET 10 on the
// runtime-async build ([For] rt and [RuntimeAsync], with [RuntimeAsyncEnv]:
// DOTNET_RuntimeAsync=1 on .NET 10). extra options are added to both.
func AsyncBuilds(rt Runtime, extra ...CSOption) []AsyncBuild {
	classic := append([]CSOption{For(rt)}, extra...)
	b := []AsyncBuild{{Name: "classic", Options: classic}}
	if rt.Major >= 10 {
		ra := append([]CSOption{For(rt), RuntimeAsync()}, extra...)
		b = append(b, AsyncBuild{Name: "runtime-async", RuntimeAsync: true, Options: ra, Env: RuntimeAsyncEnv(rt)})
	}
	return b
}

// Roslyn is the C# compiler laid out by ../shared/dotnet/install.sh.
type roslynTool struct {
	csc     string // the wrapper script
	dir     string // the layout's root (ref/, roslyn/)
	version string // a digest of csc.dll and the runtime running it
}

var (
	roslynMu   sync.Mutex
	roslynDone bool
	roslynBin  roslynTool
	roslynErr  error
)

// roslyn returns Roslyn's csc from the cache's dotnet layout.
func roslyn() (roslynTool, error) {
	roslynMu.Lock()
	defer roslynMu.Unlock()
	if roslynDone {
		return roslynBin, roslynErr
	}
	roslynDone = true
	dir := filepath.Join(CacheDir(), "dotnet")
	r := roslynTool{csc: filepath.Join(dir, "bin", "csc"), dir: dir}
	dll, err := os.ReadFile(filepath.Join(dir, "roslyn", "csc.dll"))
	if err != nil {
		roslynErr = fmt.Errorf("harness: Roslyn's csc is not installed (%v); scripts/setup.sh lays it out from ../shared/dotnet", err)
		return r, roslynErr
	}
	if _, err := os.Stat(r.csc); err != nil {
		roslynErr = fmt.Errorf("harness: %v; scripts/setup.sh lays it out from ../shared/dotnet", err)
		return r, roslynErr
	}
	sum := sha256.Sum256(dll)
	r.version = "roslyn-" + hex.EncodeToString(sum[:8])
	roslynBin = r
	return r, nil
}

var (
	mcsMu      sync.Mutex
	mcsPath    string
	mcsVersion string
)

// mcs returns the path and version line of mcs, running scripts/setup.sh
// once if it is missing.
func mcs() (string, string, error) {
	mcsMu.Lock()
	defer mcsMu.Unlock()
	if mcsPath != "" {
		return mcsPath, mcsVersion, nil
	}
	p, err := exec.LookPath("mcs")
	if err != nil {
		if serr := ensureSetup("mcs not found"); serr != nil {
			return "", "", serr
		}
		if p, err = exec.LookPath("mcs"); err != nil {
			return "", "", fmt.Errorf("harness: mcs not found after scripts/setup.sh: %v", err)
		}
	}
	out, err := exec.Command(p, "--version").CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("harness: %s --version: %v: %s", p, err, out)
	}
	mcsPath, mcsVersion = p, strings.TrimSpace(string(out))
	return mcsPath, mcsVersion, nil
}

// CompileCS compiles the C# sources with Mono's mcs and returns the path of
// the assembly. Results are cached under <cache>/cs/ by a hash of the mcs
// version, the options, and the contents of the sources and referenced
// files, so an unchanged app is compiled once per machine. With outDir ""
// the cached file itself is returned (fine for a self-contained app);
// otherwise the assembly is copied into outDir (created if needed), which is
// what an app and the libraries it references need. The test fails if mcs
// fails; its output is in the failure message.
func CompileCS(t testing.TB, srcFiles []string, outDir string, opts ...CSOption) string {
	t.Helper()
	Integration(t)
	if len(srcFiles) == 0 {
		t.Fatal("harness.CompileCS: no source files")
	}
	cfg := csConfig{target: "exe"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.skip != "" {
		t.Skip("harness.CompileCS: " + cfg.skip)
	}
	if cfg.runtimeAsync && cfg.roslyn == "" {
		t.Skip("harness.CompileCS: runtime async needs Roslyn and .NET 10 or later (harness.For)")
	}
	var compiler []string // the command, before its arguments
	var compilerID string
	if cfg.roslyn != "" {
		r, err := roslyn()
		switch {
		case err == nil:
			compiler = []string{r.csc, "@" + filepath.Join(r.dir, "ref", cfg.roslyn+".rsp")}
			compilerID = r.version + "\x00" + cfg.roslyn
		case cfg.runtimeAsync:
			t.Skip(err)
		default:
			t.Logf("%v: compiling with mcs", err)
			cfg.roslyn = ""
		}
	}
	if cfg.roslyn == "" {
		mcsBin, mcsVer, err := mcs()
		if err != nil {
			t.Fatal(err)
		}
		compiler = []string{mcsBin}
		compilerID = mcsBin + "\x00" + mcsVer
	}
	name := cfg.outName
	if name == "" {
		base := strings.TrimSuffix(filepath.Base(srcFiles[0]), filepath.Ext(srcFiles[0]))
		if cfg.target == "library" {
			name = base + ".dll"
		} else {
			name = base + ".exe"
		}
	}

	h := sha256.New()
	fmt.Fprintf(h, "clrprof-cs-v2\x00%s\x00%s\x00", compilerID, name)
	args := []string{"-target:" + cfg.target}
	if cfg.roslyn != "" {
		args = append(args, "-nologo", "-deterministic", "-define:ROSLYN", "-debug:portable",
			"-pdb:"+strings.TrimSuffix(name, filepath.Ext(name))+".pdb")
		if cfg.runtimeAsync {
			args = append(args, "-langversion:preview", "-features:runtime-async=on", "-nowarn:SYSLIB5007")
		}
	}
	if cfg.unsafe {
		args = append(args, "-unsafe")
	}
	if cfg.optimize {
		args = append(args, "-optimize+")
	} else {
		args = append(args, "-optimize-")
	}
	if cfg.debug && cfg.roslyn == "" {
		args = append(args, "-debug")
	}
	for _, d := range cfg.defines {
		args = append(args, "-define:"+d)
	}
	args = append(args, cfg.args...)
	for _, r := range cfg.refs {
		if strings.ContainsRune(r, filepath.Separator) {
			abs, err := filepath.Abs(r)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(abs)
			if err != nil {
				t.Fatalf("harness.CompileCS: reference: %v", err)
			}
			fmt.Fprintf(h, "ref\x00%s\x00%x\x00", filepath.Base(abs), sha256.Sum256(data))
			args = append(args, "-r:"+abs)
		} else if cfg.roslyn == "" {
			fmt.Fprintf(h, "ref\x00%s\x00", r)
			args = append(args, "-r:"+r)
		}
	}
	var srcs []string
	for _, s := range srcFiles {
		abs, err := filepath.Abs(s)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			t.Fatalf("harness.CompileCS: %v", err)
		}
		fmt.Fprintf(h, "src\x00%s\x00%d\x00", filepath.Base(abs), len(data))
		h.Write(data)
		srcs = append(srcs, abs)
	}
	fmt.Fprintf(h, "args\x00%s\x00", strings.Join(args, "\x00"))
	key := hex.EncodeToString(h.Sum(nil))[:32]

	csDir := filepath.Join(CacheDir(), "cs")
	final := filepath.Join(csDir, key)
	cached := filepath.Join(final, name)
	if _, err := os.Stat(cached); err != nil {
		if err := os.MkdirAll(csDir, 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(csDir, ".tmp-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		full := append(append([]string{}, compiler[1:]...), args...)
		full = append(full, "-out:"+filepath.Join(tmp, name))
		full = append(full, srcs...)
		start := time.Now()
		cmd := exec.Command(compiler[0], full...)
		cmd.Dir = tmp
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("harness.CompileCS: %s %s: %v\n%s", compiler[0], strings.Join(full, " "), err, out)
		}
		t.Logf("compiled %s with %s in %v", name, filepath.Base(compiler[0]), time.Since(start).Round(time.Millisecond))
		// Another process may have won the race; its result is identical.
		if err := os.Rename(tmp, final); err != nil {
			if _, serr := os.Stat(cached); serr != nil {
				t.Fatalf("harness.CompileCS: %v", err)
			}
		}
	}
	if outDir == "" {
		return cached
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	dst, err := filepath.Abs(filepath.Join(outDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := copyFile(cached, dst); err != nil {
		t.Fatal(err)
	}
	pdb := strings.TrimSuffix(name, filepath.Ext(name)) + ".pdb"
	if _, err := os.Stat(filepath.Join(final, pdb)); err == nil {
		if err := copyFile(filepath.Join(final, pdb), filepath.Join(filepath.Dir(dst), pdb)); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// BuildOption changes how [BuildProfiler] builds.
type BuildOption func(*buildConfig)

type buildConfig struct {
	tags  []string
	flags []string
	env   []string
}

// TestHooksTag is the build tag that compiles the profiler package's test
// hooks and diagnostic switches into a library (see BuildProfiler).
const TestHooksTag = "clrprof_testhooks"

// BuildTags adds build tags (go build -tags).
func BuildTags(tags ...string) BuildOption {
	return func(c *buildConfig) { c.tags = append(c.tags, tags...) }
}

// BuildFlags adds flags to go build (e.g. "-race", "-gcflags=all=-N -l").
func BuildFlags(flags ...string) BuildOption {
	return func(c *buildConfig) { c.flags = append(c.flags, flags...) }
}

// BuildEnv adds KEY=VALUE variables to go build's environment, on top of the
// test's own (which is always passed through).
func BuildEnv(kv ...string) BuildOption {
	return func(c *buildConfig) { c.env = append(c.env, kv...) }
}

// BuildProfiler builds the Go package pkg (an import path, or a path
// relative to the module root such as "./sample/hello") with
// `go build -buildmode=c-shared` and returns the path of the library, in the
// test's temporary directory. Go's build cache makes rebuilding an unchanged
// package cheap; build once per test and share the library among runtimes.
// The test's environment is passed through (GOEXPERIMENT=cgocheck2, GOFLAGS,
// CGO_CFLAGS, ...). The test fails if the build does.
//
// A test profiler (a package under a testdata directory) is built with
// the build tag TestHooksTag, which compiles the SDK's test hooks and
// diagnostic switches (CLRPROF_SIGNAL_GUARD=0, CLRPROF_ELT_SLOW=1, ...)
// in; samples and other packages are built as users build them, without
// it, unless BuildTags asks.
//
// The library is then dropped from the page cache (written back and
// evicted), so that the first process to load it reads it from disk, as a
// deployed library is read. This matters to memory figures only: straight
// from the linker the kernel may hold the file in large folios and map them
// whole into a process that touches one of their pages, which made
// contprof's library 1.9 MiB more resident (9.5 against 7.7 MiB in a
// program that only loads it; 11.7 against 8.5 before 2026-12-07), and by
// an amount that varied with the page cache's state.
func BuildProfiler(t testing.TB, pkg string, opts ...BuildOption) string {
	t.Helper()
	Integration(t)
	var cfg buildConfig
	for _, o := range opts {
		o(&cfg)
	}
	if strings.Contains("/"+filepath.ToSlash(pkg)+"/", "/testdata/") && !slices.Contains(cfg.tags, TestHooksTag) {
		cfg.tags = append(cfg.tags, TestHooksTag)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("harness.BuildProfiler: %v", err)
	}
	base := filepath.Base(strings.TrimSuffix(pkg, "/..."))
	if base == "." || base == "/" || base == "" {
		base = "profiler"
	}
	out := filepath.Join(t.TempDir(), "lib"+base+".so")
	args := []string{"build", "-buildmode=c-shared", "-o", out}
	if len(cfg.tags) > 0 {
		args = append(args, "-tags="+strings.Join(cfg.tags, ","))
	}
	args = append(args, cfg.flags...)
	args = append(args, pkg)
	cmd := exec.Command(goBin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), cfg.env...)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("harness.BuildProfiler: go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	if err := dropCached(out); err != nil {
		t.Fatalf("harness.BuildProfiler: %v", err)
	}
	t.Logf("built %s (go %s%s) in %v", out, strings.Join(args, " "), envNote(cfg.env), time.Since(start).Round(time.Millisecond))
	return out
}

func envNote(extra []string) string {
	var notes []string
	for _, k := range []string{"GOEXPERIMENT", "GOFLAGS", "CGO_ENABLED"} {
		if v, ok := os.LookupEnv(k); ok {
			notes = append(notes, k+"="+v)
		}
	}
	notes = append(notes, extra...)
	if len(notes) == 0 {
		return ""
	}
	return " with " + strings.Join(notes, " ")
}

// BuildCShared compiles C sources into a shared library with $CC (default
// gcc) `-shared -fPIC -O2 -g`, plus cflags, and returns its path in the
// test's temporary directory. The test fails if the compiler does.
func BuildCShared(t testing.TB, srcFiles []string, cflags ...string) string {
	t.Helper()
	Integration(t)
	if len(srcFiles) == 0 {
		t.Fatal("harness.BuildCShared: no source files")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	base := strings.TrimSuffix(filepath.Base(srcFiles[0]), filepath.Ext(srcFiles[0]))
	out := filepath.Join(t.TempDir(), "lib"+base+".so")
	args := []string{"-shared", "-fPIC", "-O2", "-g"}
	args = append(args, cflags...)
	args = append(args, "-o", out)
	for _, s := range srcFiles {
		abs, err := filepath.Abs(s)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, abs)
	}
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("harness.BuildCShared: %s %s: %v\n%s", cc, strings.Join(args, " "), err, b)
	}
	return out
}
