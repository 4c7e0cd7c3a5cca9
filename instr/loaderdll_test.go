package instr

import (
	"testing"

	"github.com/clrprof/clrprof/internal/csgen"
)

// TestLoaderDLLFresh fails when the committed loader assembly is stale
// against loader/Loader.cs (run go generate ./instr).
func TestLoaderDLLFresh(t *testing.T) {
	if err := csgen.Check("loader/Clrprof.Instr.Loader.dll", nil, []string{"loader/Loader.cs"}); err != nil {
		t.Fatal(err)
	}
}
