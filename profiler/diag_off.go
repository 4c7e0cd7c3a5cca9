//go:build !clrprof_testhooks

package profiler

// diagnostics says whether the diagnostic switches (CLRPROF_ELT_SLOW=1,
// CLRPROF_SIGNAL_GUARD=0, CLRPROF_SIGNAL_AUDIT=0,
// CLRPROF_SEGV_PRIVATE_STACK=0, CLRPROF_BINDM_HOOK=0,
// CLRPROF_UNCHECKED_HIGH_FLAGS=1) and the C test hooks
// are compiled in: only in test builds (build tag clrprof_testhooks, which
// internal/harness sets for the test profilers under testdata/), never in
// a production profiler.
const diagnostics = false
