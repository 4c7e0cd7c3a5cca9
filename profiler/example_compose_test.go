package profiler_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
)

// jitCounter and noInline are two independent profilers.
type jitCounter struct {
	profiler.Base
	n int
}

func (p *jitCounter) Initialize(info *profiler.Info) error {
	return info.SetEventMask(profiler.MonitorJITCompilation)
}

func (p *jitCounter) JITCompilationStarted(profiler.FunctionID, bool) error {
	p.n++
	return nil
}

type noInline struct{ profiler.Base }

func (noInline) Initialize(info *profiler.Info) error {
	return info.SetEventMask(profiler.MonitorJITCompilation)
}

func (noInline) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return false, nil // refuse every inlining: this "no" wins over a "yes"
}

// Two profilers in one library: each sets its own event mask and gets only
// the callbacks it implements and asked for; the runtime runs with the
// union of the masks.
func ExampleCompose() {
	c, err := profiler.Compose(&jitCounter{}, noInline{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	// From the main package's init function:
	//	profiler.Register("{...}", c)
	fmt.Println(len(c.Members()), "profilers")
	inline, _ := c.JITInlining(1, 2)
	fmt.Println("inline:", inline)
	// Output:
	// 2 profilers
	// inline: false
}

// A Go profiler that runs a vendor's native profiler beside it. The
// environment (CLRPROF_CHAIN_PATH, CLRPROF_CHAIN_CLSID) does the same for
// any profiler built with the SDK, without code.
func ExampleWithChain() {
	_ = profiler.WithChain("/opt/vendor/libvendorprof.so", "{0F3C1A2B-4D5E-4F60-8172-93A4B5C6D7E8}")
	// From the main package's init function:
	//	profiler.Register("{...}", &jitCounter{}, profiler.WithChain(path, clsid))
	//
	// Later, for instance in Initialize:
	if c, ok := profiler.Chained(); ok {
		fmt.Fprintln(os.Stderr, "running beside", c)
	}
}

// A profiler that may be loaded as a notification profiler checks what the
// SDK refused.
func ExampleErrNotificationOnly() {
	var info *profiler.Info // from Initialize
	_ = func() error {
		err := info.SetEventMask(profiler.MonitorJITCompilation | profiler.EnableReJIT)
		if errors.Is(err, profiler.ErrNotificationOnly) {
			// Loaded through CORECLR_NOTIFICATION_PROFILERS: run without ReJIT.
			return info.SetEventMask(profiler.MonitorJITCompilation)
		}
		return err
	}
}
