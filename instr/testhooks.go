//go:build clrprof_testhooks

package instr

// #cgo CFLAGS: -DCLRPROF_TESTHOOKS
import "C"

// Test builds (-tags clrprof_testhooks, as the harness builds test
// profilers and the benchmark its diagnostic libraries) read two
// diagnostic switches that a user's library never has:
// CLRPROF_GOHOOK_GUARD=0 leaves the signal guard out of the Go hook
// entries (gohook.c; the storm test's demonstration), and
// CLRPROF_GOHOOK_ENTRY=c binds the P/Invokes to empty C functions instead
// of the Go hooks (the benchmark's C baseline, bound the same way).
func init() { testHooks = true }
