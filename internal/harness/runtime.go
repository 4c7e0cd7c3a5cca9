package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Runtime is one CoreCLR runtime: a `dotnet` host and one
// Microsoft.NETCore.App version it can run.
type Runtime struct {
	// Name is short and usable as a test name: "netcore2.0.0",
	// "netcore3.1.23", "net8.0.4", or "system-net8.0.11" for a system dotnet.
	Name string
	// Version is the Microsoft.NETCore.App version, e.g. "3.1.23".
	Version string
	// Major, Minor and Patch are Version's numbers.
	Major, Minor, Patch int
	// DotnetPath is the host executable.
	DotnetPath string
	// Dir is the directory holding the host (and host/, shared/).
	Dir string
	// FrameworkDir is Dir/shared/Microsoft.NETCore.App/<Version>: where
	// libcoreclr.so and the framework assemblies are.
	FrameworkDir string
	// Source says where the runtime came from: "system" or, for a cached
	// runtime, "<registry> <package> <version>".
	Source string
}

// AtLeast reports whether the runtime's version is at least major.minor.
func (rt Runtime) AtLeast(major, minor int) bool {
	return rt.Major > major || (rt.Major == major && rt.Minor >= minor)
}

func (rt Runtime) String() string {
	return fmt.Sprintf("%s (Microsoft.NETCore.App %s from %s, %s)", rt.Name, rt.Version, rt.Source, rt.DotnetPath)
}

const frameworkName = "Microsoft.NETCore.App"

// ModuleRoot returns the root directory of this module (the directory of
// the go.mod declaring github.com/clrprof/clrprof), searched upwards from the
// working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.Contains(data, []byte("module github.com/clrprof/clrprof\n")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("harness: no go.mod of github.com/clrprof/clrprof above %s", dir)
		}
	}
}

// CacheDir returns the harness cache directory: $CLRPROF_CACHE, or
// $HOME/.cache/clrprof (the same default scripts/setup.sh uses).
func CacheDir() string {
	if d := os.Getenv("CLRPROF_CACHE"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "clrprof-cache")
	}
	return filepath.Join(home, ".cache", "clrprof")
}

var (
	rtMu       sync.Mutex
	rtDone     bool
	rtCached   []Runtime
	rtErr      error
	setupMu    sync.Mutex
	setupRan   bool
	setupError error
)

// Runtimes returns every usable runtime: those in the cache (see
// [discover]: setup.sh's registry runtimes and .NET 10 and 11 from
// ../shared/dotnet) and a user's system ones, oldest version first, system
// ones last. It runs
// scripts/setup.sh (at most once per process) when none is found or when the
// script changed since it last completed, except under `go test -short`,
// where it installs nothing and only reports what is there. The result is
// computed once per process.
func Runtimes() ([]Runtime, error) {
	rtMu.Lock()
	defer rtMu.Unlock()
	if !rtDone {
		rtCached, rtErr = findRuntimes()
		rtDone = true
	}
	return append([]Runtime(nil), rtCached...), rtErr
}

func findRuntimes() ([]Runtime, error) {
	rts, err := findRuntimes1()
	if err != nil && len(rts) == 0 && !errors.Is(err, errFilter) {
		err = fmt.Errorf("%w\n%s", err, noRuntimeAdvice)
	}
	return rts, err
}

// errFilter is wrapped by the error of a CLRPROF_RUNTIMES that matches none.
var errFilter = errors.New("CLRPROF_RUNTIMES matches no runtime")

func findRuntimes1() ([]Runtime, error) {
	if reason := setupStale(); reason != "" && !Short() {
		if err := ensureSetup(reason); err != nil {
			return nil, err
		}
	}
	none := fmt.Sprintf("no CoreCLR runtime found (none in %s or %s, none in $DOTNET_ROOT, /usr/share/dotnet, /usr/lib/dotnet, /usr/local/share/dotnet or on PATH)", filepath.Join(CacheDir(), "runtimes"), filepath.Join(CacheDir(), "dotnet"))
	rts := discover()
	if len(rts) == 0 {
		if err := ensureSetup(none); err != nil {
			return nil, err
		}
		rts = discover()
	}
	if len(rts) == 0 {
		return nil, fmt.Errorf("harness: %s after scripts/setup.sh", none)
	}
	if f := os.Getenv("CLRPROF_RUNTIMES"); f != "" {
		var keep []Runtime
		for _, rt := range rts {
			for _, p := range strings.Split(f, ",") {
				if p = strings.TrimSpace(p); p != "" && strings.HasPrefix(rt.Name, p) {
					keep = append(keep, rt)
					break
				}
			}
		}
		if len(keep) == 0 {
			var names []string
			for _, rt := range rts {
				names = append(names, rt.Name)
			}
			return nil, fmt.Errorf("harness: %w: CLRPROF_RUNTIMES=%q matches none of %s", errFilter, f, strings.Join(names, ", "))
		}
		rts = keep
	}
	return rts, nil
}

// discover lists the runtimes present now, without installing anything:
// the registry runtimes setup.sh unpacks into the cache
// (runtimes/<registry>-<package>-<version>/), the DOTNET_ROOTs that
// ../shared/dotnet/install.sh lays out there (dotnet/runtime-<version>/),
// then the runtimes a user's machine has: $DOTNET_ROOT, /usr/share/dotnet,
// /usr/lib/dotnet, /usr/local/share/dotnet and a `dotnet` on PATH. A
// runtime found twice (the same framework directory) is listed once, under
// its first name; the system ones are named "system-<name>".
func discover() []Runtime {
	var cached []Runtime
	seenDir := map[string]bool{}
	seenName := map[string]bool{}
	add := func(list *[]Runtime, rts []Runtime) {
		for _, rt := range rts {
			key := rt.FrameworkDir
			if real, err := filepath.EvalSymlinks(key); err == nil {
				key = real
			}
			if seenDir[key] || seenName[rt.Name] {
				continue
			}
			seenDir[key], seenName[rt.Name] = true, true
			*list = append(*list, rt)
		}
	}
	hosts, _ := filepath.Glob(filepath.Join(CacheDir(), "runtimes", "*", "dotnet"))
	roots, _ := filepath.Glob(filepath.Join(CacheDir(), "dotnet", "runtime-*", "dotnet"))
	hosts = append(hosts, roots...)
	sort.Strings(hosts)
	for _, host := range hosts {
		dir := filepath.Dir(host)
		if strings.HasPrefix(filepath.Base(dir), ".") {
			continue
		}
		source := filepath.Base(dir)
		if b, err := os.ReadFile(filepath.Join(dir, ".clrprof-source")); err == nil {
			source = strings.TrimSpace(string(b))
		} else if filepath.Base(filepath.Dir(dir)) == "dotnet" {
			source = "shared/dotnet install.sh"
		}
		add(&cached, runtimesIn(host, source, ""))
	}
	sortRuntimes(cached)
	var sys []Runtime
	for _, host := range systemHosts() {
		add(&sys, runtimesIn(host, "system", "system-"))
	}
	sortRuntimes(sys)
	return append(cached, sys...)
}

// systemHosts returns the `dotnet` hosts a user's machine may have, in the
// order a user's own `dotnet` would be found: DOTNET_ROOT, the distribution
// and Microsoft install locations, then PATH. Symlinks are resolved, so a
// muxer on PATH that links into /usr/lib/dotnet is that root.
func systemHosts() []string {
	var cands []string
	if root := os.Getenv("DOTNET_ROOT"); root != "" {
		cands = append(cands, filepath.Join(root, "dotnet"))
	}
	cands = append(cands, "/usr/share/dotnet/dotnet", "/usr/lib/dotnet/dotnet", "/usr/local/share/dotnet/dotnet")
	if p, err := exec.LookPath("dotnet"); err == nil {
		cands = append(cands, p)
	}
	var hosts []string
	seen := map[string]bool{}
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		if abs, err := filepath.Abs(real); err == nil {
			real = abs
		}
		if !seen[real] {
			seen[real] = true
			hosts = append(hosts, real)
		}
	}
	return hosts
}

func runtimesIn(host, source, prefix string) []Runtime {
	if fi, err := os.Stat(host); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return nil
	}
	dir := filepath.Dir(host)
	vdirs, _ := filepath.Glob(filepath.Join(dir, "shared", frameworkName, "*", "libcoreclr.so"))
	var rts []Runtime
	for _, lib := range vdirs {
		fw := filepath.Dir(lib)
		v := filepath.Base(fw)
		major, minor, patch, ok := parseVersion(v)
		if !ok {
			continue
		}
		kind := "net"
		if major < 5 {
			kind = "netcore"
		}
		rts = append(rts, Runtime{
			Name:         prefix + kind + v,
			Version:      v,
			Major:        major,
			Minor:        minor,
			Patch:        patch,
			DotnetPath:   host,
			Dir:          dir,
			FrameworkDir: fw,
			Source:       source,
		})
	}
	return rts
}

func parseVersion(v string) (major, minor, patch int, ok bool) {
	core, _, _ := strings.Cut(v, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return 0, 0, 0, false
	}
	var n [3]int
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil {
			return 0, 0, 0, false
		}
		n[i] = x
	}
	return n[0], n[1], n[2], true
}

func sortRuntimes(rts []Runtime) {
	sort.SliceStable(rts, func(i, j int) bool {
		a, b := rts[i], rts[j]
		if a.Major != b.Major {
			return a.Major < b.Major
		}
		if a.Minor != b.Minor {
			return a.Minor < b.Minor
		}
		if a.Patch != b.Patch {
			return a.Patch < b.Patch
		}
		return a.Version < b.Version
	})
}

// setupStale returns why scripts/setup.sh should run before discovery, or ""
// if it need not: it has not completed since it last changed.
func setupStale() string {
	if os.Getenv("CLRPROF_SKIP_SETUP") != "" {
		return ""
	}
	script, err := setupScript()
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(script)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	stamp, err := os.ReadFile(filepath.Join(CacheDir(), "setup.stamp"))
	if err != nil {
		return "scripts/setup.sh has not completed on this machine"
	}
	if strings.TrimSpace(string(stamp)) != hex.EncodeToString(sum[:]) {
		return "scripts/setup.sh changed since it last completed"
	}
	return ""
}

func setupScript() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "scripts", "setup.sh"), nil
}

// ensureSetup runs scripts/setup.sh unless it already ran in this process,
// and returns its error (the same one every time).
func ensureSetup(reason string) error {
	setupMu.Lock()
	defer setupMu.Unlock()
	if setupRan {
		return setupError
	}
	setupRan = true
	if Short() {
		setupError = fmt.Errorf("harness: %s, and under -short the harness installs nothing (scripts/setup.sh does)", reason)
		return setupError
	}
	if os.Getenv("CLRPROF_SKIP_SETUP") != "" {
		setupError = fmt.Errorf("harness: %s, and CLRPROF_SKIP_SETUP is set; run scripts/setup.sh", reason)
		return setupError
	}
	script, err := setupScript()
	if err != nil {
		setupError = fmt.Errorf("harness: %s; cannot find scripts/setup.sh: %v", reason, err)
		return setupError
	}
	fmt.Fprintf(os.Stderr, "harness: %s: running %s\n", reason, script)
	start := time.Now()
	cmd := exec.Command("bash", script)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		setupError = fmt.Errorf("harness: %s; running %s to install the runtimes failed (%v); its output:\n%s\nrun it by hand to see why (it needs network access and apt)", reason, script, err, out.String())
		return setupError
	}
	fmt.Fprintf(os.Stderr, "harness: %s done in %v\n%s", script, time.Since(start).Round(time.Millisecond), out.String())
	return nil
}

// ForEachRuntime runs fn as a subtest named after each runtime, on every
// runtime [Runtimes] returns, and logs which runtime it is. Under -short it
// skips t (see [Integration]); otherwise it fails t (it does not skip) when
// no runtime is available, as [NeedsRuntime] does.
func ForEachRuntime(t *testing.T, fn func(t *testing.T, rt Runtime)) {
	t.Helper()
	rts := NeedsRuntime(t)
	for _, rt := range rts {
		t.Run(rt.Name, func(t *testing.T) {
			t.Logf("runtime %s", rt)
			t.Cleanup(func() { recordOutcome(t, rt) })
			fn(t, rt)
		})
	}
}

// SummaryEnv names the file ForEachRuntime appends each runtime subtest's
// outcome to, one line each: "<runtime> <pass|fail|skip> <test>" (task
// test prints the counts per runtime from it: internal/cmd/runtimesummary).
const SummaryEnv = "CLRPROF_RUNTIME_SUMMARY"

func recordOutcome(t *testing.T, rt Runtime) {
	path := os.Getenv(SummaryEnv)
	if path == "" {
		return
	}
	outcome := "pass"
	switch {
	case t.Failed():
		outcome = "fail"
	case t.Skipped():
		outcome = "skip"
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Logf("harness: %s: %v", SummaryEnv, err)
		return
	}
	defer f.Close()
	// One write of a short line: appends from parallel test binaries
	// do not interleave.
	if _, err := fmt.Fprintf(f, "%s %s %s\n", rt.Name, outcome, t.Name()); err != nil {
		t.Logf("harness: %s: %v", SummaryEnv, err)
	}
}

// aspNetCoreName is the ASP.NET Core shared framework.
const aspNetCoreName = "Microsoft.AspNetCore.App"

// AspNetCoreDir returns the directory of the ASP.NET Core shared framework
// (Microsoft.AspNetCore.App) installed beside rt, the one of rt's version
// or else the newest with rt's major and minor version, and its version;
// ok is false when rt's host has none (the runtimes before .NET 10 that
// scripts/setup.sh installs come without it).
func AspNetCoreDir(rt Runtime) (dir, version string, ok bool) {
	best, bestPatch := "", -1
	vdirs, _ := filepath.Glob(filepath.Join(rt.Dir, "shared", aspNetCoreName, "*", "Microsoft.AspNetCore.dll"))
	for _, f := range vdirs {
		d := filepath.Dir(f)
		major, minor, patch, vok := parseVersion(filepath.Base(d))
		if !vok || major != rt.Major || minor != rt.Minor {
			continue
		}
		if filepath.Base(d) == rt.Version {
			return d, rt.Version, true
		}
		if patch > bestPatch {
			best, bestPatch = d, patch
		}
	}
	if best == "" {
		return "", "", false
	}
	return best, filepath.Base(best), true
}
