// Command stackprof is the profiler of the stack snapshot tests: on every
// ExceptionThrown it takes the current thread's stack twice, with
// Info.WalkStack (names through FunctionFullName and the frame info) and
// Info.StackTrace, and prints the managed frames of the first exception
// thrown from Elt.Thrower.Deep (STACKPROF_FROM names another function):
//
//	stackprof: walk NAME > NAME > ...
//	stackprof: trace NAME > NAME > ...
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/profiler"
)

type stackprof struct {
	profiler.Base
	info *profiler.Info
	once sync.Once
}

func (p *stackprof) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorExceptions | profiler.EnableStackSnapshot)
}

func (p *stackprof) ExceptionThrown(profiler.ObjectID) error {
	var walk []string
	err := p.info.WalkStack(0, func(f profiler.StackFrame) bool {
		if f.Function != 0 {
			n, err := p.info.FunctionFullName(f.Function, f.Frame)
			if err != nil {
				n = "?"
			}
			walk = append(walk, n)
		}
		return true
	})
	from := "Elt.Thrower.Deep"
	if v := os.Getenv("STACKPROF_FROM"); v != "" {
		from = v
	}
	if err != nil || len(walk) == 0 || !strings.HasPrefix(walk[0], from) {
		return err
	}
	frames, err := p.info.StackTrace(0, 64)
	if err != nil {
		return err
	}
	var trace []string
	for _, f := range frames {
		if f.Function != 0 {
			n, _ := p.info.FunctionName(f.Function)
			trace = append(trace, n)
		}
	}
	p.once.Do(func() {
		fmt.Fprintf(os.Stderr, "stackprof: walk %s\n", strings.Join(walk, " > "))
		fmt.Fprintf(os.Stderr, "stackprof: trace %s\n", strings.Join(trace, " > "))
	})
	return nil
}

func init() { profiler.Register("{9D2B4F61-3A7C-4E85-B1D0-5C6E8F2A4B93}", &stackprof{}) }

func main() {}
