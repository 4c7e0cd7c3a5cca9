package profiler_test

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"

	"github.com/clrprof/clrprof/profiler"
)

// allocCounter counts allocations per class. Base answers every other
// callback in C, without entering Go.
type allocCounter struct {
	profiler.Base
	info  *profiler.Info
	count atomic.Int64
}

// The compiler checks the callbacks against the newest interface.
var _ profiler.Callback11 = (*allocCounter)(nil)

// allocMask is the event mask allocCounter asks for: ObjectAllocated needs
// both bits.
const allocMask = profiler.MonitorObjectAllocated | profiler.EnableObjectAllocated

func (p *allocCounter) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(allocMask)
}

func (p *allocCounter) ObjectAllocated(obj profiler.ObjectID, class profiler.ClassID) error {
	p.count.Add(1)
	return nil
}

func (p *allocCounter) Shutdown() error {
	fmt.Fprintln(os.Stderr, "allocations:", p.count.Load())
	return nil
}

// A callback profiler: a type embedding Base that declares the callbacks it
// needs, and sets its event mask in Initialize. What runs here without a
// runtime: the checks of its callbacks, the event mask it asks for, and
// Register refusing a malformed CLSID (before anything is registered). In
// the profiler's main package, init calls Register with the CLSID that
// CORECLR_PROFILER names (see ExampleRegister).
func Example_callbackProfiler() {
	fmt.Println("callbacks:", profiler.CheckCallbacks(&allocCounter{}))
	fmt.Println("event mask:", allocMask)

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil)) // Register logs what it refuses
	err := profiler.Register("not-a-clsid", &allocCounter{}, profiler.WithLogger(quiet))
	fmt.Println(err != nil)

	clsid, err := profiler.ParseGUID("5c2e9f41-7a3b-4d8e-9c16-2f0b8a4d6e73")
	fmt.Println(profiler.FormatGUID(clsid), err)
	// Output:
	// callbacks: <nil>
	// event mask: MonitorObjectAllocated|EnableObjectAllocated
	// true
	// {5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73} <nil>
}

// jitNames prints the name of every function the JIT compiles, with its
// class's and its own type arguments.
type jitNames struct {
	profiler.Base
	info *profiler.Info
}

func (p *jitNames) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorJITCompilation | profiler.MonitorClassLoads)
}

func (p *jitNames) JITCompilationStarted(f profiler.FunctionID, safeToBlock bool) error {
	name, err := p.info.FunctionName(f) // "Shop.Box<int>.Get<string>"
	if err != nil {
		return nil
	}
	parts, err := p.info.FunctionNameParts(f) // {Class: "Shop.Box<int>", Method: "Get", MethodArgs: ["string"]}
	if err != nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "%s (class %s, method %s)\n", name, parts.Class, parts.Method)
	return nil
}

// Names of functions from their IDs, inside a profiler (the names come from
// the runtime: this needs a running CoreCLR, so it has no output here; see
// package metadata's Example_typeNames for the formatting rules and
// instr/target's ExampleTypeFromProfiler for turning a class name into a
// target). WithSharedGenericNames names shared generic code by its
// canonical instantiation before .NET 10 too.
func ExampleInfo_FunctionName() {
	_ = profiler.Register("{3B7A9C21-5D4E-4F60-8A1B-2C3D4E5F6071}", &jitNames{}, profiler.WithSharedGenericNames())
}
