package main

import (
	"testing"

	"github.com/clrprof/clrprof/internal/csgen"
)

// TestHelperFresh fails when the committed Autotrace.dll is stale against
// Hooks.cs (run go generate ./sample/autotrace).
func TestHelperFresh(t *testing.T) {
	if err := csgen.Check("Autotrace.dll", []string{"-unsafe", "-r:../../instr/loader/Clrprof.Instr.Loader.dll"}, []string{"Hooks.cs"}); err != nil {
		t.Fatal(err)
	}
}
