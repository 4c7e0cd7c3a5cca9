package profiler_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/clrprof/clrprof/profiler"
)

// throwSites prints the managed stack of every thread that throws.
type throwSites struct {
	profiler.Base
	info *profiler.Info
}

func (p *throwSites) Initialize(info *profiler.Info) error {
	p.info = info
	// StackTrace needs EnableStackSnapshot.
	return info.SetEventMask(profiler.MonitorExceptions | profiler.EnableStackSnapshot)
}

func (p *throwSites) ExceptionThrown(obj profiler.ObjectID) error {
	// Thread 0: the calling thread, the one throwing; at most 32 frames,
	// innermost first.
	frames, err := p.info.StackTrace(0, 32)
	if err != nil {
		return nil // a profiler never fails the application's throw
	}
	var b strings.Builder
	for _, f := range frames {
		if f.Function == 0 {
			b.WriteString("  [native code]\n")
			continue
		}
		name, err := p.info.FunctionName(f.Function)
		if err != nil {
			name = fmt.Sprintf("function %#x", uint64(f.Function))
		}
		fmt.Fprintf(&b, "  %s at %v\n", name, f.IP)
	}
	fmt.Fprintf(os.Stderr, "exception thrown:\n%s", b.String())
	return nil
}

// A stack trace of the calling thread from inside a callback.
func ExampleInfo_StackTrace() {
	_ = profiler.Register("{9C4F2A61-3B8E-4D17-A5C0-6E2B8F1D9A37}", &throwSites{})
}

// Open the metadata of any assembly file, loaded or not, with the
// runtime's own dispenser (inside a profiler, once the runtime has loaded
// it).
func ExampleMetaDataDispenser() {
	d, err := profiler.MetaDataDispenser()
	if err != nil {
		fmt.Println(err) // outside a runtime: not available
		return
	}
	defer d.Release()
	imp, err := d.OpenImport("/path/to/Some.dll")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer imp.Release()
	types, _ := imp.TypeDefs()
	fmt.Println(len(types), "types")
}

// The SDK's logger, for a profiler's own records.
func ExampleLogger() {
	profiler.Logger().Info("profiler ready", "version", 3)
}

// Flags print as the names of their bits.
func ExampleMonitor() {
	fmt.Println(profiler.MonitorJITCompilation | profiler.MonitorExceptions)
	fmt.Println(profiler.HighBasicGC | profiler.HighLargeObjectAllocated)
	// Output:
	// MonitorJITCompilation|MonitorExceptions
	// HighBasicGC|HighLargeObjectAllocated
}
