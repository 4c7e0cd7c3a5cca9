//go:build clrprof_testhooks

package profiler

// diagnostics: see diag_off.go.
const diagnostics = true
