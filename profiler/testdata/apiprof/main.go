// Command apiprof is the profiler of package profiler's API integration
// test: it exercises the idiomatic forms of calls whose raw forms had holes
// and prints on stderr what the runtime answered, in lines starting
// "apiprof: ":
//
//   - "modstart name=N base=B assembly=A incomplete=I err=E" for every
//     module, from ModuleInfoOf inside ModuleLoadStarted (where the runtime
//     does not know the assembly yet and answers CORPROF_E_DATAINCOMPLETE
//     with the rest filled), and "modfinish ..." from GetModuleInfo2 (every
//     output) in ModuleLoadFinished;
//   - "handle obj=O back=O2 err=E" once, from CreateHandle,
//     GetObjectIDFromHandle and DestroyHandle on an object just allocated;
//   - "notificationonly asked" when the runtime calls LoadAsNotificationOnly;
//   - at Shutdown, "Shutdown arrays=A nonarrays=N arrayerrs=E codestarts=C
//     nocode=Z codeerr=E frozenerr=F": IsArrayClass answers over the first
//     allocations, and how many JIT-compiled functions had native code start
//     addresses (GetNativeCodeStartAddresses), with the first errors.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/clrprof/clrprof/profiler"
)

type apiprof struct {
	profiler.Base
	info *profiler.Info

	mu                          sync.Mutex
	allocs                      int
	arrays, nonArrays, arrayErr int
	handleDone                  bool
	prevFn                      profiler.FunctionID
	codeStarts, noCode          int
	codeErr, frozenErr          error
}

func (p *apiprof) Initialize(info *profiler.Info) error {
	p.info = info
	fmt.Fprintf(os.Stderr, "apiprof: info=%d\n", info.Version())
	return info.SetEventMask(profiler.MonitorModuleLoads | profiler.MonitorJITCompilation |
		profiler.MonitorObjectAllocated | profiler.EnableObjectAllocated)
}

func (p *apiprof) ModuleLoadStarted(m profiler.ModuleID) error {
	if os.Getenv("APIPROF_SKIP") == "modstart" {
		return nil
	}
	// Everything but the module flags, which .NET Core 2.1 and 3.1 crash
	// on before the module is loaded.
	fields := profiler.ModuleFieldBase | profiler.ModuleFieldName | profiler.ModuleFieldAssembly
	if f := os.Getenv("APIPROF_FIELDS"); f != "" {
		v, _ := strconv.Atoi(f)
		fields = profiler.ModuleFields(v)
	}
	r, err := p.info.ModuleInfoOf(m, fields)
	fmt.Fprintf(os.Stderr, "apiprof: modstart name=%s base=%v assembly=%d incomplete=%v err=%v\n", filepath.Base(r.Name), r.BaseLoadAddress, r.AssemblyID, errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE), err)
	return nil
}

func (p *apiprof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	r, err := p.info.GetModuleInfo2(m)
	fmt.Fprintf(os.Stderr, "apiprof: modfinish name=%s base=%v assembly=%d flags=%v err=%v\n", filepath.Base(r.Name), r.BaseLoadAddress, r.AssemblyID, r.ModuleFlags, err)
	return nil
}

func (p *apiprof) ObjectAllocated(obj profiler.ObjectID, cls profiler.ClassID) error {
	if os.Getenv("APIPROF_SKIP") == "alloc" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.allocs++
	if p.allocs > 5000 {
		return nil
	}
	_, isArray, err := p.info.IsArrayClass(cls)
	switch {
	case err != nil:
		p.arrayErr++
	case isArray:
		p.arrays++
	default:
		p.nonArrays++
	}
	if os.Getenv("APIPROF_SKIP") == "frozen" {
	} else if _, err := p.info.IsFrozenObject(obj); err != nil && p.frozenErr == nil {
		p.frozenErr = err
	}
	if !p.handleDone {
		p.handleDone = true
		h, err := p.info.CreateHandle(obj, profiler.HandleTypeStrong)
		var back profiler.ObjectID
		if err == nil {
			back, err = p.info.GetObjectIDFromHandle(h)
			if derr := p.info.DestroyHandle(h); err == nil {
				err = derr
			}
		}
		fmt.Fprintf(os.Stderr, "apiprof: handle obj=%#x back=%#x same=%v err=%v notavailable=%v\n", uint64(obj), uint64(back), back == obj, err, errors.Is(err, profiler.ErrNotAvailable))
	}
	return nil
}

func (p *apiprof) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	parts, err := p.info.FunctionNameParts(f)
	if err == nil && parts.Class == "App" {
		name, _ := p.info.FunctionName(f)
		fmt.Fprintf(os.Stderr, "apiprof: parts class=%s method=%s args=%d name=%s\n", parts.Class, parts.Method, len(parts.MethodArgs), name)
	}
	return nil
}

func (p *apiprof) JITCompilationFinished(f profiler.FunctionID, hr profiler.HRESULT, safe bool) error {
	p.mu.Lock()
	prev := p.prevFn
	p.prevFn = f
	p.mu.Unlock()
	if prev == 0 || os.Getenv("APIPROF_SKIP") == "codestart" {
		return nil
	}
	// The previous function's code is published by now.
	starts, err := p.info.GetNativeCodeStartAddresses(prev, 0)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err != nil:
		if p.codeErr == nil {
			p.codeErr = err
		}
	case len(starts) > 0 && starts[0] != 0:
		p.codeStarts++
	default:
		p.noCode++
	}
	return nil
}

func (p *apiprof) LoadAsNotificationOnly() (bool, error) {
	fmt.Fprintln(os.Stderr, "apiprof: notificationonly asked")
	return false, nil
}

func (p *apiprof) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(os.Stderr, "apiprof: Shutdown arrays=%d nonarrays=%d arrayerrs=%d codestarts=%d nocode=%d codeerr=%v codeerr_notavailable=%v frozenerr=%v\n",
		p.arrays, p.nonArrays, p.arrayErr, p.codeStarts, p.noCode, p.codeErr, errors.Is(p.codeErr, profiler.ErrNotAvailable), p.frozenErr)
	return nil
}

func init() { profiler.Register("{4C1E2A7B-3D5F-4E8A-9B6C-2F1D0E3A5B7C}", &apiprof{}) }

func main() {}
