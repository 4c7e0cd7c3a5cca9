package main

import (
	"fmt"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

// releaseCode gives back the library's resident code and constant pages
// (CONTPROF_RELEASE_CODE=1, the default; profiler.ReleaseCodePages):
// "released_code_kb=N kept_kb=N took_us=N", or what went wrong.
func releaseCode() string {
	t := time.Now()
	r, err := profiler.ReleaseCodePages()
	took := time.Since(t).Microseconds()
	if err != nil {
		return fmt.Sprintf("released_code_kb=0 took_us=%d (%v)", took, err)
	}
	return fmt.Sprintf("released_code_kb=%d kept_kb=%d took_us=%d", r.Released>>10, r.Kept>>10, took)
}
