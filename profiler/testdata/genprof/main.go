// Command genprof is the profiler of the generic names test: it logs the
// names the SDK gives every method of Pair<A,B> the JIT compiles, on
// stderr: "genprof: jit NAME | FULL NAME". GENPROF_CLASSLOADS=0 leaves
// MonitorClassLoads out of the event mask. GENPROF_BENCH=1 times
// FunctionName of Pair<int,long>.Show with the names' metadata cache (module
// loads monitored) and without it, in the same run: "genprof: bench ...".
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info *profiler.Info
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
	mask := profiler.MonitorJITCompilation | profiler.MonitorClassLoads | profiler.MonitorModuleLoads
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
	if os.Getenv("GENPROF_BENCH") == "1" && name == "Pair<int,long>.Show" {
		p.bench(f, name)
	}
	return nil
}

// bench times n calls of FunctionName with the cache (the mask has
// MonitorModuleLoads) and without (the mask has not), alternating rounds
// so that both see the same machine.
func (p *prof) bench(f profiler.FunctionID, want string) {
	mask, err := p.info.GetEventMask()
	if err != nil {
		return
	}
	const n, rounds = 2000, 5
	var with, without time.Duration
	for r := 0; r < rounds; r++ {
		for _, cached := range []bool{true, false} {
			m := mask | profiler.MonitorModuleLoads
			if !cached {
				m &^= profiler.MonitorModuleLoads
			}
			if err := p.info.SetEventMask(m); err != nil {
				fmt.Fprintf(os.Stderr, "genprof: bench SetEventMask: %v\n", err)
				return
			}
			start := time.Now()
			for i := 0; i < n; i++ {
				if got, err := p.info.FunctionName(f); err != nil || got != want {
					fmt.Fprintf(os.Stderr, "genprof: bench name %q %v\n", got, err)
					return
				}
			}
			if cached {
				with += time.Since(start)
			} else {
				without += time.Since(start)
			}
		}
	}
	_ = p.info.SetEventMask(mask)
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / (n * rounds) }
	fmt.Fprintf(os.Stderr, "genprof: bench cached=%.0fns uncached=%.0fns ratio=%.2f\n", per(with), per(without), per(without)/per(with))
}

func init() {
	var opts []profiler.Option
	if os.Getenv("GENPROF_SHARED_NAMES") != "0" {
		opts = append(opts, profiler.WithSharedGenericNames())
	}
	profiler.Register("{6A1B2C3D-4E5F-4071-8293-A4B5C6D7E8F9}", &prof{}, opts...)
}

func main() {}
