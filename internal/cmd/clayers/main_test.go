package main

import (
	"strings"
	"testing"
)

// The C of the packages checked in task test-c is layered one way, each
// package on its own and all of them together.
func TestRepoLayers(t *testing.T) {
	dirs := []string{"../../../internal/sigguard", "../../../internal/comobj", "../../../internal/ring", "../../../profiler", "../../../elt", "../../../alloc", "../../../heapwalk", "../../../instr", "../../../internal/chain"}
	for _, dir := range dirs {
		if err := check([]string{dir}, false); err != nil {
			t.Error(err)
		}
	}
	if err := check(dirs, false); err != nil {
		t.Error(err)
	}
}

func TestCircleFound(t *testing.T) {
	err := check([]string{"testdata/circle"}, false)
	if err == nil || !strings.Contains(err.Error(), "circle: testdata/circle: a -> testdata/circle: b -> testdata/circle: a") {
		t.Fatalf("check(testdata/circle) = %v, want the circle a -> b -> a", err)
	}
}

// A circle through two packages is found when they are checked together,
// and not in either alone.
func TestCircleAcrossPackagesFound(t *testing.T) {
	for _, dir := range []string{"testdata/across/p", "testdata/across/q"} {
		if err := check([]string{dir}, false); err != nil {
			t.Errorf("check(%s) alone = %v, want nil", dir, err)
		}
	}
	err := check([]string{"testdata/across/p", "testdata/across/q"}, false)
	if err == nil || !strings.Contains(err.Error(), "circle: testdata/across/p: p -> testdata/across/q: q -> testdata/across/p: p") {
		t.Fatalf("check(testdata/across/p, q) = %v, want the circle p -> q -> p", err)
	}
}

func TestForeignIncludeFound(t *testing.T) {
	err := check([]string{"testdata/reach"}, false)
	if err == nil || !strings.Contains(err.Error(), "-I${SRCDIR}/../circle") {
		t.Fatalf("check(testdata/reach) = %v, want the -I outside internal/include reported", err)
	}
	err = check([]string{"testdata/pathinc"}, false)
	if err == nil || !strings.Contains(err.Error(), `x.c: #include "../circle/private.h"`) {
		t.Fatalf("check(testdata/pathinc) = %v, want the #include of a path reported", err)
	}
}

// A call of a header's static inline function is a dependency on the
// header's component: here the only way a reaches b.
func TestCircleThroughInlineFound(t *testing.T) {
	err := check([]string{"testdata/inline"}, false)
	if err == nil || !strings.Contains(err.Error(), "circle: testdata/inline: a -> testdata/inline: b -> testdata/inline: a") {
		t.Fatalf("check(testdata/inline) = %v, want the circle a -> b -> a", err)
	}
}
