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
//
// Runtime async (.NET 11, .NET 10 with DOTNET_RuntimeAsync=1) compiles one
// async method twice: its Task-returning entry and its async variant, the
// body that returns the unwrapped result. Both have the method's name and
// token; the profiling API tells them apart only by FunctionID. jitlog
// reads the runtime's own MethodJittingStarted event (an in-process
// EventPipe session, ICorProfilerInfo12: .NET 5+), which carries the
// signature the runtime compiled for that FunctionID, and ends the
// variant's line with it: "jit: Ops.DelayThenValue [async variant: int32
// (int32)]" (.NET 10 writes the return as "required_modifier
// System.Threading.Tasks.Task`1 int32"). With the events on, a line is
// printed when the event arrives, or at JITCompilationFinished without one.
package jitlog

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
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
	// events: the runtime's JIT events are read (ICorProfilerInfo12); a
	// compilation's line waits in pending for its MethodJittingStarted
	// event, which says the signature the runtime compiled
	events  bool
	pending map[profiler.FunctionID]pendingLine
	// the runtime's EventPipeProvider, once seen (another provider's
	// event may have the same ID)
	runtimeProvider profiler.EventPipeProvider
}

// pendingLine is a compilation's line waiting for the runtime's event, and
// whether the method's metadata signature returns a task.
type pendingLine struct {
	name    string
	taskRet bool
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
	p.pending = map[profiler.FunctionID]pendingLine{}
	low := profiler.MonitorJITCompilation | profiler.MonitorClassLoads
	if info.Version() >= 12 {
		// The runtime's MethodJittingStarted event (JIT keyword, verbose)
		// carries the signature of the method it compiles, which for the
		// async variant of a runtime-async method is not the metadata's.
		_, err := info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{
			Name: clrevents.RuntimeProvider, Keywords: jitKeyword, Level: profiler.EventPipeVerbose,
		}}, false)
		if err == nil {
			p.events = true
			return info.SetEventMask2(low, profiler.HighEventPipe)
		}
		fmt.Fprintf(p.out, "jitlog: no JIT events (names without the compiled signature): %v\n", err)
	}
	return info.SetEventMask(low)
}

const (
	jitKeyword           = 0x10 // the runtime provider's JIT keyword
	methodJittingStarted = 145  // MethodJittingStarted_V1's event ID
)

// JITCompilationStarted prints the function's name.
func (p *Profiler) JITCompilationStarted(f profiler.FunctionID, safeToBlock bool) error {
	name, err := p.info.FunctionName(f)
	if err != nil {
		name = fmt.Sprintf("<function %#x: %v>", uint64(f), err)
	}
	if p.events {
		taskRet := returnsTask(p.info, f)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.count++
		// printed when the runtime's event for f arrives, on this thread
		// before the compilation finishes, or at JITCompilationFinished
		p.pending[f] = pendingLine{name, taskRet}
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	fmt.Fprintf(p.out, "jit: %s\n", name)
	return nil
}

// JITCompilationFinished prints the line of a compilation whose event did
// not come.
func (p *Profiler) JITCompilationFinished(f profiler.FunctionID, _ profiler.HRESULT, _ bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.pending[f]; ok {
		delete(p.pending, f)
		fmt.Fprintf(p.out, "jit: %s\n", l.name)
	}
	return nil
}

// EventPipeEventDelivered reads the runtime's MethodJittingStarted: the
// method's ID is its FunctionID. A method whose compiled signature returns
// something else than a task where its metadata's (what the Task-returning
// entry compiles) returns one is the async variant of a runtime-async
// method, the body that returns the unwrapped result: its line says
// "[async variant: <signature>]". The Task-returning entry's line is the
// plain name.
func (p *Profiler) EventPipeEventDelivered(provider profiler.EventPipeProvider, id, _ uint32, _, data []byte,
	_, _ uuid.UUID, _ profiler.ThreadID, _ []profiler.Address) error {
	if id != methodJittingStarted || len(data) < 24 {
		return nil
	}
	f := profiler.FunctionID(binary.LittleEndian.Uint64(data))
	p.mu.Lock()
	defer p.mu.Unlock()
	if provider != p.runtimeProvider {
		if p.runtimeProvider != 0 {
			return nil
		}
		if name, err := p.info.EventPipeGetProviderInfo(provider); err != nil || name != clrevents.RuntimeProvider {
			return nil
		}
		p.runtimeProvider = provider
	}
	l, ok := p.pending[f]
	if !ok {
		return nil
	}
	delete(p.pending, f)
	// MethodID, ModuleID (u64), MethodToken, MethodILSize (u32), then the
	// namespace, name and signature (UTF-16, NUL-terminated)
	rest := data[24:]
	var strs [3]string
	for i := range strs {
		strs[i], rest = utf16z(rest)
	}
	name := l.name
	if l.taskRet && !returnsTaskSig(strs[2]) {
		name += " [async variant: " + strs[2] + "]"
	}
	fmt.Fprintf(p.out, "jit: %s\n", name)
	return nil
}

// returnsTask says whether f's metadata signature returns a task (Task,
// Task<T>, ValueTask, ValueTask<T>): the signature of the Task-returning
// entry of an async method.
func returnsTask(info *profiler.Info, f profiler.FunctionID) bool {
	imp, tok, err := info.FunctionImport(f)
	if err != nil {
		return false
	}
	defer imp.Release()
	m, err := imp.Method(tok)
	if err != nil {
		return false
	}
	sig, err := metadata.ParseMethodSig(m.Sig)
	if err != nil {
		return false
	}
	ret, err := imp.FormatType(sig.Return, &metadata.GenericContext{}, metadata.ILAsm)
	return err == nil && isTaskType(ret)
}

func isTaskType(t string) bool {
	for _, p := range []string{"class ", "valuetype ", "value class "} {
		t = strings.TrimPrefix(t, p)
	}
	for _, p := range []string{"System.Threading.Tasks.Task", "System.Threading.Tasks.ValueTask"} {
		if rest, ok := strings.CutPrefix(t, p); ok && (rest == "" || rest[0] == '`' || rest[0] == '<' || rest[0] == ' ') {
			return true
		}
	}
	return false
}

// returnsTaskSig says whether a signature as the runtime's JIT events
// write it ("instance class System.Threading.Tasks.Task`1<int32>  (int32)")
// returns a task. An async variant's does not: it returns the unwrapped
// type ("int32  (int32)" on .NET 11) or, on .NET 10, the task type as a
// required modifier of it ("required_modifier
// System.Threading.Tasks.Task`1 int32  (int32)").
func returnsTaskSig(sig string) bool {
	return isTaskType(strings.TrimPrefix(sig, "instance "))
}

// utf16z decodes a NUL-terminated UTF-16LE string at the start of b.
func utf16z(b []byte) (string, []byte) {
	var u []uint16
	for len(b) >= 2 {
		c := binary.LittleEndian.Uint16(b)
		b = b[2:]
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u)), b
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
