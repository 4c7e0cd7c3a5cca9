//go:build linux

package profiler

import (
	"reflect"

	"github.com/clrprof/clrprof/internal/codepages"
)

// ReleaseCodePages gives back the resident pages of the profiler library's
// code and constants, so that the process's RSS counts only the pages it
// uses again afterwards.
//
// A Go library touches much of itself once as it starts: the Go runtime
// walks its tables, every package's init runs, the dynamic loader reads
// the relocations. Each touch maps up to 16 neighbouring pages (the
// kernel's fault-around), and they stay mapped for the life of the
// process: several megabytes of a profiled service's RSS (docs/cost.md).
// The pages stay in the page cache; using one again is a minor fault that
// maps it back, with the file's contents.
//
// Only pages of the library's read-only mappings that /proc/self/pagemap
// reports as the file's own are dropped: a page written since it was
// mapped (a debugger's breakpoint, say) is kept, so nothing is lost. Call
// it at the end of Initialize, and after any rare burst of work (a
// periodic write). For contprof's 15 MB library it took 0.6-1.3 ms at
// start-up and 0.7-4.5 ms after a write (one goroutine's time: reading
// pagemap and one madvise call per run of pages). It needs
// /proc/self/pagemap (Linux 3.5+); elsewhere it returns an error and
// changes nothing.
func ReleaseCodePages() (CodePages, error) {
	r, err := codepages.Release(reflect.ValueOf(ReleaseCodePages).Pointer())
	return CodePages{Library: r.Path, Resident: r.Resident, Released: r.Released, Kept: r.Kept}, err
}
