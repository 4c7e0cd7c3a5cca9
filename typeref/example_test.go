package typeref_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/typeref"
)

// baseTypes prints where the base type of each class of a loaded module is
// defined, when the base is a TypeRef (a type of another assembly).
type baseTypes struct {
	profiler.Base
	info *profiler.Info
	refs *typeref.Resolver
}

func (p *baseTypes) Initialize(info *profiler.Info) error {
	p.info = info
	p.refs = typeref.New(info)
	return info.SetEventMask(profiler.MonitorModuleLoads)
}

func (p *baseTypes) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	imp, err := p.info.ModuleImport(m)
	if err != nil {
		return nil
	}
	defer imp.Release()
	tds, _ := imp.TypeDefs()
	for _, td := range tds {
		t, err := imp.TypeDef(td)
		if err != nil || metadata.TokenType(t.Extends.Table()) != metadata.MdtTypeRef {
			continue
		}
		loc, err := p.refs.Resolve(m, t.Extends)
		if err != nil {
			continue // its assembly is not loaded yet, for one
		}
		fmt.Fprintf(os.Stderr, "%s extends %v of module %#x\n", t.Name, loc.TypeDef, uint64(loc.Module))
	}
	return nil
}

// The resolver forgets what it read about a module when the module goes.
func (p *baseTypes) ModuleUnloadStarted(m profiler.ModuleID) error {
	p.refs.Forget(m)
	return nil
}

// A profiler that resolves the base types of the classes it sees loaded.
func Example() {
	_ = profiler.Register("{6A1E4C93-2F7B-4D58-9C0A-B3E5D7F91246}", &baseTypes{})
}

// Outside a runtime (or in a runtime that lacks what it needs) Resolve
// fails with the runtime's error rather than guessing.
func ExampleResolver_Resolve() {
	r := typeref.New(nil) // in a profiler: typeref.New(info) in Initialize
	_, err := r.Resolve(profiler.ModuleID(0x7f00_1000), metadata.Token(0x01000001))
	fmt.Println(errors.Is(err, profiler.ErrNotAvailable), errors.Is(err, typeref.ErrUnresolved))
	// Output:
	// true false
}
