package main_test

import (
	"testing"

	"github.com/clrprof/clrprof/internal/csgen"
)

// TestHelperFresh fails when Clrprof.Apm.dll is stale against Listener.cs
// (run go generate ./sample/apm).
func TestHelperFresh(t *testing.T) {
	args := []string{"-unsafe", "-r:../../instr/loader/Clrprof.Instr.Loader.dll", csgen.RoslynArg + "net10.0"}
	if err := csgen.Check("Clrprof.Apm.dll", args, []string{"Listener.cs"}); err != nil {
		t.Error(err)
	}
}
