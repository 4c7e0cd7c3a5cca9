package profiler

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// ModuleImport opens the metadata of a loaded module for reading. The
// result is owned: release it with Release when done.
func (x *Info) ModuleImport(m ModuleID) (*metadata.Import2, error) {
	unk, err := x.GetModuleMetaData(m, metadata.OfRead, metadata.IIDImport2)
	if err != nil {
		return nil, fmt.Errorf("clrprof: metadata of module %#x: %w", uint64(m), err)
	}
	defer unk.Release()
	return metadata.QueryImport2(unk)
}

// ModuleEmit opens the metadata of a loaded module for reading and
// writing (new tokens: type and member references, signatures, strings).
// The result is owned: release it with Release when done.
func (x *Info) ModuleEmit(m ModuleID) (*metadata.Emit2, error) {
	unk, err := x.GetModuleMetaData(m, metadata.OfRead|metadata.OfWrite, metadata.IIDEmit2)
	if err != nil {
		return nil, fmt.Errorf("clrprof: writable metadata of module %#x: %w", uint64(m), err)
	}
	defer unk.Release()
	return metadata.QueryEmit2(unk)
}

// FunctionImport returns the metadata reader of the module that defines a
// function, with the function's MethodDef token. The reader is owned:
// release it with Release when done.
func (x *Info) FunctionImport(f FunctionID) (*metadata.Import2, metadata.Token, error) {
	r, err := x.GetTokenAndMetaDataFromFunction(f, metadata.IIDImport2)
	if err != nil {
		return nil, 0, fmt.Errorf("clrprof: metadata of function %#x: %w", uint64(f), err)
	}
	defer r.Import.Release()
	imp, err := metadata.QueryImport2(r.Import)
	if err != nil {
		return nil, 0, err
	}
	return imp, r.Token, nil
}
