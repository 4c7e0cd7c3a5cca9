// Command jitlog is the classic first profiler: it prints the name of every
// function the runtime is about to JIT-compile, generic instantiations
// included ("MyClass<int>.Foo<float>").
//
// Build it as a shared library and name it in the runtime's environment:
//
//	go build -buildmode=c-shared -o libjitlog.so ./sample/jitlog
//	CORECLR_ENABLE_PROFILING=1 \
//	CORECLR_PROFILER={8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D} \
//	CORECLR_PROFILER_PATH=$PWD/libjitlog.so \
//	dotnet app.dll
//
// Each compilation is one line, "jit: <name>", on stderr, or appended to the
// file named by JITLOG_FILE. At shutdown jitlog prints how many functions it
// saw.
package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/clrprof/clrprof/profiler"
)

// CLSID is the class ID the runtime must be given in CORECLR_PROFILER.
const CLSID = "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}"

type jitlog struct {
	profiler.Base
	info *profiler.Info

	mu    sync.Mutex
	out   io.Writer
	count int
}

func (p *jitlog) Initialize(info *profiler.Info) error {
	p.info = info
	p.out = os.Stderr
	if path := os.Getenv("JITLOG_FILE"); path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("jitlog: %w", err)
		}
		p.out = f
	}
	return info.SetEventMask(profiler.MonitorJITCompilation)
}

func (p *jitlog) JITCompilationStarted(f profiler.FunctionID, safeToBlock bool) error {
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

func (p *jitlog) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "jitlog: %d functions compiled\n", p.count)
	if f, ok := p.out.(*os.File); ok && f != os.Stderr {
		return f.Close()
	}
	return nil
}

func init() {
	if err := profiler.Register(CLSID, &jitlog{}); err != nil {
		fmt.Fprintln(os.Stderr, "jitlog:", err)
	}
}

func main() {}
