//go:build !clrprof_testhooks

package profiler

import (
	"testing"

	"github.com/clrprof/clrprof/internal/hooktest"
)

// TestWithTestHooks runs the unit tests that drive the C side through the
// test hooks, which only builds with the tag clrprof_testhooks have, so
// that a plain `go test ./...` runs them too.
func TestWithTestHooks(t *testing.T) {
	hooktest.Run(t, 10, "shim_test.go")
}
