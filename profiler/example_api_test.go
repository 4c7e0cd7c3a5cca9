package profiler_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
)

// jitLogger prints the name of every method the runtime compiles.
type jitLogger struct {
	profiler.Base // every other callback: S_OK, in C
	info          *profiler.Info
}

func (p *jitLogger) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorJITCompilation)
}

func (p *jitLogger) JITCompilationStarted(f profiler.FunctionID, isSafeToBlock bool) error {
	if name, err := p.info.FunctionName(f); err == nil {
		fmt.Fprintln(os.Stderr, "jit:", name)
	}
	return nil
}

// A profiler is a main package built with go build -buildmode=c-shared that
// registers its callbacks from init, under the CLSID CORECLR_PROFILER names.
func ExampleRegister() {
	// In the profiler's main package:
	//
	//	func init() { profiler.Register("{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}", &jitLogger{}) }
	//	func main() {}
	if err := profiler.Register("{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}", &jitLogger{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

// exceptionLogger prints the type of every exception thrown and the
// function that threw it.
type exceptionLogger struct {
	profiler.Base
	info *profiler.Info
}

func (p *exceptionLogger) Initialize(info *profiler.Info) error {
	p.info = info
	// StackTrace needs EnableStackSnapshot.
	return info.SetEventMask(profiler.MonitorExceptions | profiler.EnableStackSnapshot)
}

func (p *exceptionLogger) ExceptionThrown(obj profiler.ObjectID) error {
	typ := "?"
	if c, err := p.info.GetClassFromObject(obj); err == nil {
		if n, err := p.info.ClassName(c); err == nil {
			typ = n
		}
	}
	thrower := "?"
	// Thread 0 is the current thread: the one throwing.
	if frames, err := p.info.StackTrace(0, 1); err == nil && len(frames) > 0 {
		if n, err := p.info.FunctionName(frames[0].Function); err == nil {
			thrower = n
		}
	}
	fmt.Fprintf(os.Stderr, "exception %s thrown in %s\n", typ, thrower)
	return nil
}

// An exception logger: the exception's type name and the function that
// threw it, from ExceptionThrown.
func Example_exceptionLogger() {
	// func init() { profiler.Register("{...}", &exceptionLogger{}) }
	var _ profiler.Callback = &exceptionLogger{}
}

// handles shows an ObjectHandle's life: CreateHandle returns it,
// GetObjectIDFromHandle and DestroyHandle take it.
func handles(info *profiler.Info, obj profiler.ObjectID) error {
	h, err := info.CreateHandle(obj, profiler.HandleTypeStrong)
	if errors.Is(err, profiler.ErrNotAvailable) {
		return nil // before .NET 7 (ICorProfilerInfo13)
	}
	if err != nil {
		return err
	}
	defer info.DestroyHandle(h)
	now, err := info.GetObjectIDFromHandle(h) // the object's ID after any GC
	fmt.Println(now != 0, err)
	return nil
}

// Handles keep an object alive and find it again after the GC moved it.
func ExampleInfo_CreateHandle() {
	var _ = handles
}

// moduleNames shows partial results: inside ModuleLoadStarted the runtime
// does not know a module's assembly yet and answers
// CORPROF_E_DATAINCOMPLETE, with the name it does know.
type moduleNames struct {
	profiler.Base
	info *profiler.Info
}

func (p *moduleNames) ModuleLoadStarted(m profiler.ModuleID) error {
	r, err := p.info.ModuleInfoOf(m, profiler.ModuleFieldName|profiler.ModuleFieldAssembly)
	if err != nil && !errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) {
		return nil
	}
	fmt.Fprintln(os.Stderr, "loading", r.Name)
	return nil
}

// The outputs the runtime filled come back with CORPROF_E_DATAINCOMPLETE.
func ExampleInfo_ModuleInfoOf() {
	var _ profiler.Callback = &moduleNames{}
}
