//go:build !linux

package profiler

// CodePages is what ReleaseCodePages did, in bytes.
type CodePages struct {
	Library  string
	Resident int64
	Released int64
	Kept     int64
}

// ReleaseCodePages needs Linux's /proc/self/pagemap: elsewhere it returns
// ErrNotAvailable.
func ReleaseCodePages() (CodePages, error) { return CodePages{}, ErrNotAvailable }
