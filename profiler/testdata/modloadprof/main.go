// Command modloadprof is the profiler of TestModuleInfoInModuleLoadStarted:
// in ModuleLoadStarted it asks GetModuleInfo2 for everything about the
// module (base address, name, assembly, flags: .NET Core 2.1 and 3.1 crash
// when asked for the base address or flags that early unless the SDK holds
// them back), and, when MODLOADPROF_RETURN=error, returns the error it got
// to the runtime. In ModuleLoadFinished it asks again. At Shutdown it prints
// what it saw:
//
//	modloadprof: started=N incomplete=I named=M otherErrors=E returned=R finished=F complete=C
package main

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/clrprof/clrprof/profiler"
)

type modloadprof struct {
	profiler.Base
	info                                        *profiler.Info
	started, incomplete, named, other, returned atomic.Int64
	finished, complete                          atomic.Int64
	// said counts incomplete answers whose ModuleInfoIncompleteError
	// names at least one missing output, each of them really empty in
	// the result (or withheld); withheld those that left base and flags
	// out; bad those whose error is not a ModuleInfoIncompleteError or
	// names an output the result has.
	said, withheld, bad atomic.Int64
	first               sync.Once
	returnErrors        bool
}

func (p *modloadprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.returnErrors = os.Getenv("MODLOADPROF_RETURN") == "error"
	return info.SetEventMask(profiler.MonitorModuleLoads)
}

func (p *modloadprof) ModuleLoadStarted(m profiler.ModuleID) error {
	p.started.Add(1)
	res, err := p.info.GetModuleInfo2(m)
	switch {
	case err == nil:
	case errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE):
		p.incomplete.Add(1)
		var ie *profiler.ModuleInfoIncompleteError
		switch {
		case !errors.As(err, &ie) || ie.Missing&ie.Withheld != ie.Withheld || ie.Module != m:
			p.bad.Add(1)
			fmt.Fprintf(os.Stderr, "modloadprof: ModuleLoadStarted: incomplete without saying what: %v\n", err)
		case ie.Missing&profiler.ModuleFieldAssembly != 0 && res.AssemblyID != 0,
			ie.Missing&profiler.ModuleFieldBase != 0 && res.BaseLoadAddress != 0,
			ie.Missing&profiler.ModuleFieldName != 0 && res.Name != "",
			ie.Missing&profiler.ModuleFieldFlags != 0 && ie.Withheld&profiler.ModuleFieldFlags == 0:
			p.bad.Add(1)
			fmt.Fprintf(os.Stderr, "modloadprof: ModuleLoadStarted: %v, but the result has %+v\n", err, res)
		default:
			if ie.Missing != 0 {
				p.said.Add(1)
			}
			if ie.Withheld != 0 {
				p.withheld.Add(1)
			}
			p.first.Do(func() { fmt.Fprintf(os.Stderr, "modloadprof: first incomplete: %v\n", err) })
		}
	default:
		p.other.Add(1)
		fmt.Fprintf(os.Stderr, "modloadprof: ModuleLoadStarted: %v\n", err)
	}
	if res.Name != "" {
		p.named.Add(1)
	}
	if err != nil && p.returnErrors {
		p.returned.Add(1)
		return err
	}
	return nil
}

func (p *modloadprof) ModuleLoadFinished(m profiler.ModuleID, status profiler.HRESULT) error {
	p.finished.Add(1)
	res, err := p.info.GetModuleInfo2(m)
	if err == nil && res.Name != "" && res.AssemblyID != 0 && res.BaseLoadAddress != 0 {
		p.complete.Add(1)
	} else {
		fmt.Fprintf(os.Stderr, "modloadprof: ModuleLoadFinished: %+v %v\n", res, err)
	}
	return nil
}

func (p *modloadprof) Shutdown() error {
	fmt.Fprintf(os.Stderr, "modloadprof: started=%d incomplete=%d named=%d otherErrors=%d returned=%d finished=%d complete=%d\n",
		p.started.Load(), p.incomplete.Load(), p.named.Load(), p.other.Load(), p.returned.Load(), p.finished.Load(), p.complete.Load())
	fmt.Fprintf(os.Stderr, "modloadprof: said=%d withheld=%d bad=%d\n", p.said.Load(), p.withheld.Load(), p.bad.Load())
	return nil
}

func init() {
	profiler.Register("{3C1B9A57-6D2E-4F80-9A1C-5E7D2B4F8A63}", &modloadprof{})
}

func main() {}
