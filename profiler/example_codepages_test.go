//go:build linux

package profiler_test

import (
	"fmt"

	"github.com/clrprof/clrprof/profiler"
)

// lean is a profiler that gives back the pages of its library that only
// its start-up touched.
type lean struct {
	profiler.Base
}

func (p *lean) Initialize(info *profiler.Info) error {
	// ... set the event mask, start goroutines ...
	if r, err := profiler.ReleaseCodePages(); err == nil {
		profiler.Logger().Info("code pages given back", "kb", r.Released>>10, "kept_kb", r.Kept>>10)
	}
	return nil
}

// A profiler calls ReleaseCodePages at the end of Initialize (and after
// any rare burst of work): here, in the test binary, it gives back the
// binary's own pages, and the code runs on.
func ExampleReleaseCodePages() {
	_ = &lean{}
	r, err := profiler.ReleaseCodePages()
	fmt.Println(err == nil, r.Released > 0, r.Library != "")
	// Output: true true true
}
