package profiler_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/clrprof/clrprof/profiler"
)

// jitByModule counts the functions compiled per module file, remembering
// them in an IDMap that forgets each module when the runtime unloads it.
type jitByModule struct {
	profiler.Base
	info *profiler.Info
	ids  *profiler.IDMap
}

func (p *jitByModule) Initialize(info *profiler.Info) error {
	p.info = info
	p.ids = profiler.NewIDMap(info)
	return info.SetEventMask(profiler.MonitorModuleLoads | profiler.MonitorClassLoads | profiler.MonitorJITCompilation)
}

// The IDMap is fed from the callbacks of the same name.
func (p *jitByModule) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.ids.ModuleLoadFinished(m, hr)
}

func (p *jitByModule) ModuleUnloadStarted(m profiler.ModuleID) error {
	// Before the map forgets the module: how many of its functions it saw.
	_, functions := p.ids.ModuleCounts(m)
	if mi, err := p.info.ModuleInfoOf(m, profiler.ModuleFieldName); err == nil {
		fmt.Fprintf(os.Stderr, "%s unloads after %d compiled functions\n", mi.Name, functions)
	}
	return p.ids.ModuleUnloadStarted(m)
}

func (p *jitByModule) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	return p.ids.ClassLoadFinished(c, hr)
}

func (p *jitByModule) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.ids.JITCompilationStarted(f, safe)
}

func (p *jitByModule) Shutdown() error {
	modules, classes, functions := p.ids.Counts()
	fmt.Fprintf(os.Stderr, "%d modules, %d classes, %d functions still loaded\n", modules, classes, functions)
	return nil
}

// An IDMap keeps (module, token) for the IDs a profiler sees, and drops
// them when the runtime unloads what they name, so a lookup never returns
// a stale ID.
func ExampleIDMap() {
	_ = profiler.Register("{5D3E1B29-8A47-4C6F-B0D2-7E91A3C5F864}", &jitByModule{})
}

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
