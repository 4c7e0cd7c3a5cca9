// Package jitlog is the jitlog sample's profiler as a package, so that a
// library can run it beside other profilers (profiler.Compose; see
// sample/contprof's with_jitlog.go): it prints the name of every function
// the runtime is about to JIT-compile, generic instantiations included.
//
// Each compilation is one line, "jit: <name>", on stderr, or appended to the
// file named by JITLOG_FILE. At shutdown it prints how many functions it
// saw.
//
// Shared generic code (one body compiled for every reference-type
// instantiation) is named by the canonical instantiation the runtime
// compiled, "MyClass<System.__Canon>.Foo<Demo.Point>", on every runtime:
// .NET 10 and later report that class themselves (GetFunctionInfo2,
// dotnet/runtime#107753); before, the SDK finds it among the classes it saw
// loaded, which needs MonitorClassLoads (asked for here) and the Register
// option profiler.WithSharedGenericNames (Options). A library that composes
// jitlog without that option gets the class's formal parameters
// ("MyClass<S>") on runtimes before .NET 10.
package jitlog

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/clrprof/clrprof/profiler"
)

// CLSID is the class ID of the jitlog sample library (sample/jitlog).
const CLSID = "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}"

// Profiler is the jitlog profiler.
type Profiler struct {
	profiler.Base
	info *profiler.Info

	mu    sync.Mutex
	out   io.Writer
	count int
}

// New returns a jitlog profiler.
func New() *Profiler { return &Profiler{} }

// Options are the Register options jitlog's names need: shared generic code
// named by its canonical instantiation on runtimes before .NET 10 too.
func Options() []profiler.Option {
	return []profiler.Option{profiler.WithSharedGenericNames()}
}

// Initialize asks for JIT compilations, and for class loads, through which
// the SDK names shared generic code on runtimes before .NET 10.
func (p *Profiler) Initialize(info *profiler.Info) error {
	p.info = info
	p.out = os.Stderr
	if path := os.Getenv("JITLOG_FILE"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("jitlog: %w", err)
		}
		p.out = f
	}
	return info.SetEventMask(profiler.MonitorJITCompilation | profiler.MonitorClassLoads)
}

// JITCompilationStarted prints the function's name.
func (p *Profiler) JITCompilationStarted(f profiler.FunctionID, safeToBlock bool) error {
	name, err := p.info.FunctionName(f)
	if err != nil {
		name = fmt.Sprintf("<function %#x: %v>", uint64(f), err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	fmt.Fprintf(p.out, "jit: %s\n", name)
	return nil
}

// Shutdown prints the count.
func (p *Profiler) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "jitlog: %d functions compiled\n", p.count)
	if f, ok := p.out.(*os.File); ok && f != os.Stderr {
		return f.Close()
	}
	return nil
}
