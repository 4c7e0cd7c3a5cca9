package main

import (
	"testing"

	"github.com/clrprof/clrprof/internal/csgen"
)

// TestHelperFresh fails when BenchWrap.dll is stale against Hooks.cs (run
// go generate ./bench/prof/wrap).
func TestHelperFresh(t *testing.T) {
	if err := csgen.Check("BenchWrap.dll", nil, []string{"Hooks.cs"}); err != nil {
		t.Fatal(err)
	}
}
