package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "lib.so")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-pid is required"},
		{[]string{"-pid", "1"}, "-path is required"},
		{[]string{"-pid", "1", "-path", lib, "-clsid", "nope"}, `-clsid "nope" is not a CLSID`},
		{[]string{"-pid", "1", "-path", lib, "-clsid", clsid, "-data", "a", "-data-file", lib}, "not both"},
		{[]string{"-pid", "1", "-path", lib, "-clsid", clsid, "extra"}, "unexpected arguments: extra"},
		{[]string{"-pid", "1", "-path", lib, "-clsid", clsid, "-timeout", "0s"}, "-timeout must be positive"},
		{[]string{"-bogus"}, "flag provided but not defined"},
	} {
		code, _, stderr := runCmd(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage: clrattach") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// Failures of the attach itself exit 1.
	code, _, stderr := runCmd("-pid", "1073741824", "-path", lib, "-clsid", clsid)
	if code != 1 || !strings.Contains(stderr, "no such process") {
		t.Errorf("missing process: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd("-pid", "1", "-path", lib, "-clsid", clsid, "-data-file", filepath.Join(t.TempDir(), "none"))
	if code != 1 || !strings.Contains(stderr, "no such file") {
		t.Errorf("missing data file: exit %d, %q", code, stderr)
	}
}
