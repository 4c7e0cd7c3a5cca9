// Command genprof is the profiler of the generic names test: it logs the
// names the SDK gives every method of Pair<A,B> the JIT compiles, on
// stderr: "genprof: jit NAME | FULL NAME". GENPROF_CLASSLOADS=0 leaves
// MonitorClassLoads out of the event mask.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info *profiler.Info
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
	mask := profiler.MonitorJITCompilation | profiler.MonitorClassLoads
	if os.Getenv("GENPROF_CLASSLOADS") == "0" {
		mask &^= profiler.MonitorClassLoads
	}
	return info.SetEventMask(mask)
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	name, err := p.info.FunctionName(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "genprof: FunctionName %#x: %v\n", uint64(f), err)
		return nil
	}
	if !strings.HasPrefix(name, "Pair<") {
		return nil
	}
	full, err := p.info.FunctionFullName(f, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "genprof: FunctionFullName %s: %v\n", name, err)
	}
	fmt.Fprintf(os.Stderr, "genprof: jit %s | %s\n", name, full)
	return nil
}

func init() {
	profiler.Register("{6A1B2C3D-4E5F-4071-8293-A4B5C6D7E8F9}", &prof{})
}

func main() {}
