package profiler_test

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
)

// finalizerWatch counts objects queued for finalization.
type finalizerWatch struct {
	profiler.Base
	queued int
}

// The compiler checks every callback against the newest interface: a
// method whose signature is stale (written for an older clrprof, or with
// a mistyped parameter) is a build error here instead of a callback the
// runtime never calls.
var _ profiler.Callback11 = (*finalizerWatch)(nil)

func (p *finalizerWatch) FinalizeableObjectQueued(flags profiler.FinalizerFlags, obj profiler.ObjectID) error {
	p.queued++
	return nil
}

// staleWatch has FinalizeableObjectQueued with a uint32 where the runtime's
// callback has FinalizerFlags: it compiles (staleWatch is still a
// Callback through Base) but the runtime would never call it.
type staleWatch struct{ profiler.Base }

func (p *staleWatch) FinalizeableObjectQueued(flags uint32, obj profiler.ObjectID) error { return nil }

// CheckCallbacks, called from a unit test of the profiler's package, finds
// methods named like callbacks whose signature keeps them from being
// called; an interface assertion (var _ profiler.Callback11 = (*T)(nil))
// makes the compiler find them.
func ExampleCheckCallbacks() {
	fmt.Println(profiler.CheckCallbacks(&finalizerWatch{}))
	err := profiler.CheckCallbacks(&staleWatch{})
	fmt.Println(err != nil)
	// Output:
	// <nil>
	// true
}

// typeLister prints the types and methods of every module loaded.
type typeLister struct {
	profiler.Base
	info *profiler.Info
}

func (p *typeLister) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorModuleLoads)
}

// ModuleLoadFinished is the first moment a module's metadata can be read.
func (p *typeLister) ModuleLoadFinished(m profiler.ModuleID, status profiler.HRESULT) error {
	if status < 0 {
		return nil // the load failed
	}
	imp, err := p.info.ModuleImport(m)
	if err != nil {
		return nil // dynamic modules may have none yet
	}
	defer imp.Release()
	types, err := imp.TypeDefs() // every TypeDef but <Module>
	if err != nil {
		return err
	}
	for _, td := range types {
		t, err := imp.TypeDef(td)
		if err != nil {
			continue
		}
		fmt.Fprintf(os.Stderr, "%s.%s\n", t.Namespace, t.Name)
		methods, _ := imp.Methods(td)
		for _, md := range methods {
			if mi, err := imp.Method(md); err == nil {
				fmt.Fprintf(os.Stderr, "  %s (%v, RVA %#x)\n", mi.Name, md, mi.RVA)
			}
		}
	}
	return nil
}

// Open a module's metadata when it has loaded and enumerate its types and
// their methods (Import2's TypeDefs, TypeDef, Methods, Method).
func Example_moduleTypes() {
	_ = profiler.Register("{0C4E8B27-5A1D-4F93-B6E0-2D7C9A3F1E58}", &typeLister{})
}
