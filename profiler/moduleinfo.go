package profiler

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	com "github.com/clrprof/clrprof/internal/com"
)

// #include "thunks_gen.h"
import "C"

// ModuleFields selects the outputs ModuleInfoOf asks the runtime for.
type ModuleFields uint8

const (
	// ModuleFieldBase, ModuleFieldName, ModuleFieldAssembly and
	// ModuleFieldFlags select BaseLoadAddress, Name (the file name),
	// AssemblyID and ModuleFlags.
	ModuleFieldBase     ModuleFields = 1 << iota // BaseLoadAddress
	ModuleFieldName                              // Name (the file name)
	ModuleFieldAssembly                          // AssemblyID
	ModuleFieldFlags                             // ModuleFlags

	// ModuleFieldsAll asks for every output.
	ModuleFieldsAll = ModuleFieldBase | ModuleFieldName | ModuleFieldAssembly | ModuleFieldFlags
)

// String names the fields: "Base|Name|Assembly|Flags", "" for none.
func (f ModuleFields) String() string {
	var parts []string
	for _, n := range []struct {
		f    ModuleFields
		name string
	}{{ModuleFieldBase, "Base"}, {ModuleFieldName, "Name"}, {ModuleFieldAssembly, "Assembly"}, {ModuleFieldFlags, "Flags"}} {
		if f&n.f != 0 {
			parts = append(parts, n.name)
		}
	}
	if rest := f &^ ModuleFieldsAll; rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint8(rest)))
	}
	return strings.Join(parts, "|")
}

// ModuleInfoIncompleteError is the error of ModuleInfoOf and
// GetModuleInfo2 when part of the answer is not known yet (inside
// ModuleLoadStarted): it says which outputs are missing; the others are
// in the result. It matches CORPROF_E_DATAINCOMPLETE (errors.Is), which
// it unwraps to.
type ModuleInfoIncompleteError struct {
	// Module is the module asked about.
	Module ModuleID
	// Missing are the outputs asked for and not returned: those the
	// runtime left empty (an AssemblyID of 0 before the module is
	// attached to its assembly, a base address of 0, an empty name) and
	// those ModuleInfoOf did not ask for because the runtime would crash
	// (Base and Flags on .NET Core 2.1 and 3.1 before the load finished).
	// Flags count as missing only in that last case: 0 is a valid value.
	Missing ModuleFields
	// Withheld are the outputs of Missing that were not asked for to keep
	// the runtime from crashing.
	Withheld ModuleFields
}

// Error names the module and the missing outputs.
func (e *ModuleInfoIncompleteError) Error() string {
	what := e.Missing.String()
	if what == "" {
		what = "the runtime did not say which part (every output asked for came back)"
	}
	s := fmt.Sprintf("clrprof: GetModuleInfo2(module %#x): not known yet: %s", uint64(e.Module), what)
	if e.Withheld != 0 {
		s += fmt.Sprintf(" (%s not asked: the runtime crashes when asked before the module has loaded)", e.Withheld)
	}
	return s + ": " + CORPROF_E_DATAINCOMPLETE.Error()
}

// Unwrap returns CORPROF_E_DATAINCOMPLETE.
func (e *ModuleInfoIncompleteError) Unwrap() error { return CORPROF_E_DATAINCOMPLETE }

// maxModuleName bounds the name buffer grown on the runtime's say-so.
const maxModuleName = 1 << 16

// ModuleInfoOf calls ICorProfilerInfo3::GetModuleInfo2 asking only for the
// outputs in fields (the others are passed as NULL and left zero in the
// result). Inside ModuleLoadStarted the runtime has not finished loading
// the module and answers CORPROF_E_DATAINCOMPLETE; what it did fill is
// returned with the error, a *ModuleInfoIncompleteError that names the
// missing outputs. Seen on .NET Core 2.0 to .NET 8 (TestModuleInfoInModuleLoadStarted):
// the name and an AssemblyID are filled, and .NET 8 gives no base
// address yet. Some runtimes (.NET Core 2.1 and 3.1) crash when asked for the
// module flags or base address that early: on runtimes before .NET 8,
// ModuleInfoOf first asks whether the module has finished loading and, if
// it has not, leaves those two out (zero in the result) and returns the
// rest with CORPROF_E_DATAINCOMPLETE.
func (x *Info) ModuleInfoOf(m ModuleID, fields ModuleFields) (ModuleInfo2Result, error) {
	var res ModuleInfo2Result
	self := x.ptr(3)
	if self == nil {
		return res, notAvailable("ICorProfilerInfo3::GetModuleInfo2", 3, x.Version())
	}
	withheld := ModuleFields(0)
	if fields&(ModuleFieldBase|ModuleFieldFlags) != 0 && x.moduleEarlyFieldsUnsafe() {
		// Ask first whether the runtime has finished loading the module
		// (it knows the assembly only then); until it has, leave out what
		// would crash it.
		var asm C.AssemblyID
		hr := C.clrprof_ICorProfilerInfo3_GetModuleInfo2((*C.ICorProfilerInfo3)(self), C.ModuleID(m), nil, 0, nil, nil, &asm, nil)
		if hr == C.HRESULT(CORPROF_E_DATAINCOMPLETE) {
			withheld = fields & (ModuleFieldBase | ModuleFieldFlags)
			fields &^= withheld
		}
	}
	var base *C.BYTE
	var asm C.AssemblyID
	var flags C.DWORD
	var nameLen C.ULONG
	pBase, pAsm, pFlags := (*C.LPCBYTE)(nil), (*C.AssemblyID)(nil), (*C.DWORD)(nil)
	if fields&ModuleFieldBase != 0 {
		pBase = (*C.LPCBYTE)(unsafe.Pointer(&base))
	}
	if fields&ModuleFieldAssembly != 0 {
		pAsm = &asm
	}
	if fields&ModuleFieldFlags != 0 {
		pFlags = &flags
	}
	var buf []uint16
	if fields&ModuleFieldName != 0 {
		buf = make([]uint16, 256)
	}
	var hr C.HRESULT
	for attempt := 0; ; attempt++ {
		var pName *C.WCHAR
		if len(buf) > 0 {
			pName = (*C.WCHAR)(unsafe.Pointer(&buf[0]))
		}
		hr = C.clrprof_ICorProfilerInfo3_GetModuleInfo2((*C.ICorProfilerInfo3)(self), C.ModuleID(m), pBase,
			C.ULONG(len(buf)), &nameLen, pName, pAsm, pFlags)
		if attempt == 2 || buf == nil || int(nameLen) <= len(buf) || nameLen > maxModuleName ||
			!(hr >= 0 || hr == com.InsufficientBuffer || hr == C.HRESULT(CORPROF_E_DATAINCOMPLETE)) {
			break
		}
		buf = make([]uint16, int(nameLen))
	}
	if hr < 0 && hr != C.HRESULT(CORPROF_E_DATAINCOMPLETE) {
		return res, com.HRESULT(hr)
	}
	res.BaseLoadAddress = Address(unsafe.Pointer(base))
	if buf != nil {
		n := min(int(nameLen), len(buf))
		if n > 0 && buf[n-1] == 0 {
			n--
		}
		res.Name = cgoutil.DecodeUTF16(buf[:n])
	}
	res.AssemblyID = AssemblyID(asm)
	res.ModuleFlags = ModuleFlags(flags)
	if hr < 0 || withheld != 0 {
		missing := withheld
		if hr < 0 { // the runtime said incomplete: name what came back empty
			if fields&ModuleFieldAssembly != 0 && res.AssemblyID == 0 {
				missing |= ModuleFieldAssembly
			}
			if fields&ModuleFieldBase != 0 && res.BaseLoadAddress == 0 {
				missing |= ModuleFieldBase
			}
			if fields&ModuleFieldName != 0 && res.Name == "" {
				missing |= ModuleFieldName
			}
		}
		return res, &ModuleInfoIncompleteError{Module: m, Missing: missing, Withheld: withheld}
	}
	return res, nil
}

// GetModuleInfo2 is ModuleInfoOf with every output (ModuleFieldsAll): the
// module's base address, file name, assembly and flags. Inside
// ModuleLoadStarted some of them are not known yet: see ModuleInfoOf.
func (x *Info) GetModuleInfo2(m ModuleID) (ModuleInfo2Result, error) {
	return x.ModuleInfoOf(m, ModuleFieldsAll)
}

// moduleEarlyFieldsUnsafe reports whether the runtime may crash when asked
// for a module's base address or flags before it has finished loading the
// module (inside ModuleLoadStarted): .NET Core 2.1 and 3.1 dereference an
// image layout that does not exist yet (seen as SIGSEGV in
// ProfToEEInterfaceImpl::GetModuleInfo2). .NET 8 answers. Runtimes before
// .NET 5 all report the CLR version 4.0.30319, so 2.0 (which answers too)
// cannot be told apart; it, and the untested .NET 5 to 7, are treated as
// affected. One runtime per process: the answer is kept.
func (x *Info) moduleEarlyFieldsUnsafe() bool {
	moduleEarly.once.Do(func() {
		major, err := x.RuntimeMajor()
		moduleEarly.unsafe = err != nil || major < 8
	})
	return moduleEarly.unsafe
}

var moduleEarly struct {
	once   sync.Once
	unsafe bool
}
