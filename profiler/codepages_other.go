//go:build !linux

package profiler

// ReleaseCodePages needs Linux's /proc/self/pagemap: elsewhere it returns
// ErrNotAvailable.
func ReleaseCodePages() (CodePages, error) { return CodePages{}, ErrNotAvailable }
