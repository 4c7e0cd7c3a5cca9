package main

import (
	"strings"
	"testing"
)

// The C of the packages checked in task test-c is layered one way.
func TestRepoLayers(t *testing.T) {
	for _, dir := range []string{"../../../internal/sigguard", "../../../profiler", "../../../instr"} {
		if err := check(dir, false); err != nil {
			t.Error(err)
		}
	}
}

func TestCircleFound(t *testing.T) {
	err := check("testdata/circle", false)
	if err == nil || !strings.Contains(err.Error(), "circle: a -> b -> a") {
		t.Fatalf("check(testdata/circle) = %v, want the circle a -> b -> a", err)
	}
}

func TestForeignIncludeFound(t *testing.T) {
	err := check("testdata/reach", false)
	if err == nil || !strings.Contains(err.Error(), "-I${SRCDIR}/../circle") {
		t.Fatalf("check(testdata/reach) = %v, want the -I outside internal/include reported", err)
	}
}

// A call of a header's static inline function is a dependency on the
// header's component: here the only way a reaches b.
func TestCircleThroughInlineFound(t *testing.T) {
	err := check("testdata/inline", false)
	if err == nil || !strings.Contains(err.Error(), "circle: a -> b -> a") {
		t.Fatalf("check(testdata/inline) = %v, want the circle a -> b -> a", err)
	}
}
