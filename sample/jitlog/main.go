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
// file named by JITLOG_FILE; shared generic code is named by the canonical
// instantiation compiled ("MyClass<System.__Canon>.Foo<Demo.Point>"), and
// the async variant of a runtime-async method, compiled beside its
// Task-returning entry under the same name, by the signature the runtime
// compiled ("jit: Ops.DelayThenValue [async variant: int32  (int32)]"). At shutdown jitlog prints how many functions it
// saw. The profiler itself is package jitlog (sample/jitlog/jitlog), which
// other libraries compose with theirs (profiler.Compose).
package main

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/sample/jitlog/jitlog"
)

// CLSID is the class ID the runtime must be given in CORECLR_PROFILER.
const CLSID = jitlog.CLSID

func init() {
	if err := profiler.Register(CLSID, jitlog.New(), jitlog.Options()...); err != nil {
		fmt.Fprintln(os.Stderr, "jitlog:", err)
	}
}

func main() {}
