//go:build !clrprof_testhooks

package chain

import (
	"testing"

	"github.com/clrprof/clrprof/internal/hooktest"
)

// TestWithTestHooks runs the unit tests of chain_hook_test.go, which drive the C
// through the test hooks, in a build with them, so that a plain
// `go test ./...` runs them too.
func TestWithTestHooks(t *testing.T) {
	hooktest.Run(t, 1, "chain_hook_test.go")
}
