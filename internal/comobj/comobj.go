// Package comobj owns the profiler COM object handed to the runtime: its C
// (object.c: layout, IUnknown, the implemented-callback table, the live
// vtable and its C overrides, the class factory and its vtable hook,
// DllGetClassObject and DllCanUnloadNow, the signal audit run on the first
// call; callbacks_gen.c from cmd/comgen: one thunk per callback, the
// vtable, the IID tables) and the Go exports that C calls.
//
// The exports must live here: a C file calls by name only the exports of
// its own package. They hand the runtime's arguments over in raw form
// (IDs as uintptr, pointers as unsafe.Pointer) to the Host that package
// profiler installs from an init function, which converts them to the
// public types and dispatches to the user's profiler. Every thunk calls
// Go under the signal guard (internal/include/guard.h) and only for the
// callbacks marked implemented (SetImpl); the others are answered S_OK in
// C. See docs/internals.md ("Component files").
package comobj

/*
#cgo CFLAGS: -I${SRCDIR}/../include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
#include "object.h"
*/
import "C"

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	// The object's C calls the guard and the signal audit (guard.h,
	// signals.h): importing the package links its C in.
	_ "github.com/clrprof/clrprof/internal/sigguard"
	"github.com/google/uuid"
)

// Host is what the object's C calls in Go: the callbacks (Callbacks) and
// the object's life. Package profiler implements it; SetHost installs it.
// No method may let a panic escape: nothing may unwind into C.
type Host interface {
	Callbacks
	// MatchCLSID is called by DllGetClassObject (its first call into Go
	// also waits for the Go runtime to finish initialising): it reports
	// whether clsid, the class the runtime asks for (given is false when
	// it passed none), is this library's.
	MatchCLSID(clsid uuid.UUID, given bool) bool
	// NewObject is called by the class factory's CreateInstance: it
	// returns the cgo.Handle the new object will carry (passed as h to
	// every callback), or 0 to fail the creation.
	NewObject() uintptr
	// ObjectReleased is called when the runtime releases the last
	// reference to the object whose handle is h.
	ObjectReleased(h uintptr)
	// SignalAudit receives the records of the signal audit (n
	// clrprof_sigrec at recs, for sigguard.Records), run once, from the
	// first DllGetClassObject; activation is SIGRTMIN.
	SignalAudit(recs unsafe.Pointer, n int, activation int)
}

// host is written once, by SetHost from an init function: the exports run
// only after the Go runtime's initialisation (package inits included) has
// finished, so they read it without synchronisation. Until then (or in a
// binary without package profiler) noHost answers: no class, no object,
// every callback S_OK.
var host Host = noHost{}

// SetHost installs h. Call it from an init function only.
func SetHost(h Host) { host = h }

type noHost struct{ nopCallbacks }

func (noHost) MatchCLSID(uuid.UUID, bool) bool      { return false }
func (noHost) NewObject() uintptr                   { return 0 }
func (noHost) ObjectReleased(uintptr)               {}
func (noHost) SignalAudit(unsafe.Pointer, int, int) {}

// SetImpl tells the C thunk of slot (vtable index - 3) whether to call
// into Go (clrprof_impl).
func SetImpl(slot int, on bool) {
	v := C.int(0)
	if on {
		v = 1
	}
	C.clrprof_set_impl(C.int(slot), v)
}

// Impl reports whether the C thunk of slot calls into Go.
func Impl(slot int) bool { return C.clrprof_get_impl(C.int(slot)) != 0 }

//export clrprofGoMatchCLSID
func clrprofGoMatchCLSID(req *C.GUID, have C.int) C.int {
	if host.MatchCLSID(cgoutil.GUIDAt(unsafe.Pointer(req)), have != 0) {
		return 1
	}
	return 0
}

//export clrprofGoNewObject
func clrprofGoNewObject() C.uintptr_t { return C.uintptr_t(host.NewObject()) }

//export clrprofGoObjectReleased
func clrprofGoObjectReleased(h C.uintptr_t) { host.ObjectReleased(uintptr(h)) }

//export clrprofGoSignalAudit
func clrprofGoSignalAudit(recs unsafe.Pointer, n C.int, activation C.int) {
	host.SignalAudit(recs, int(n), int(activation))
}
