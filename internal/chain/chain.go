// Package chain runs a native (C/C++) profiler beside the Go profiler in
// one profiler object, and gives each party that shares the runtime's
// ICorProfilerInfo (the Go profiler, the chained native one, the members of
// a composed Go profiler) an Info wrapper of its own with its own event
// mask. Package profiler configures it (WithChain, CLRPROF_CHAIN_PATH) and
// forwards to it; see docs/internals.md ("Chaining").
//
// The C (chain.c, chain_gen.c from cmd/comgen, chain_linux_amd64.S)
// attaches to the profiler object through the class factory's vtable hook
// (clrprof_object_set_vtbl_hook, internal/include/object.h), which chain.c
// registers from a constructor. It calls the object's C (IUnknown, the live
// vtable; package internal/comobj, which it imports) and the guard
// (internal/include/guard.h; package internal/sigguard, which comobj
// imports). Its only calls into Go are this package's exports,
// which reach package profiler through the hooks set with SetHooks.
package chain

// #cgo CFLAGS: -I${SRCDIR}/../include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
// #cgo LDFLAGS: -ldl
// #include <stdint.h>
// #include <stdlib.h>
// #include "chain.h"
import "C"

import (
	"log/slog"
	"sync/atomic"
	"unsafe"

	// chain.c calls the profiler object's C (IUnknown, the live vtable,
	// the vtable hook): importing its package links that C in.
	_ "github.com/clrprof/clrprof/internal/comobj"
	"github.com/google/uuid"
)

// The parties that share the runtime's ICorProfilerInfo, each with its
// own Info wrapper and event mask.
const (
	PartyGo      = C.CLRPROF_PARTY_GO      // the Go profiler (its dispatcher)
	PartyChain   = C.CLRPROF_PARTY_CHAIN   // the chained native profiler
	PartyMember0 = C.CLRPROF_PARTY_MEMBER0 // the first member of a composed Go profiler
	MaxMembers   = C.CLRPROF_MAX_MEMBERS   // members of a composed Go profiler with a party of their own
)

// Config is the native profiler to chain: its shared library and the
// CLSID of the class it exports.
type Config struct {
	Path  string
	CLSID uuid.UUID
}

// Hooks connect the chain's C to package profiler, which owns the
// configuration and the log.
type Hooks struct {
	// Config returns the native profiler to chain, or false for none. The
	// C asks once, for the first profiler object of the process.
	Config func() (Config, bool)
	// Logger is where the chain's C logs.
	Logger func() *slog.Logger
	// Panic reports a panic recovered in an export (after which the export
	// answers as if nothing were configured).
	Panic func(where string, r any, stack []byte)
}

var hooks atomic.Pointer[Hooks]

// SetHooks sets the hooks; package profiler calls it from an init
// function, so the hooks are there before the runtime's first call.
func SetHooks(h Hooks) { hooks.Store(&h) }

// State is what the chained native profiler is doing.
type State struct {
	Active         bool   // callbacks are forwarded to it
	Version        int    // the highest ICorProfilerCallbackN it implements
	MaskLo, MaskHi uint32 // the event mask it asked for
}

// Chained reports the chained native profiler, and false when there is
// none.
func Chained() (State, bool) {
	if C.clrprof_chain.cb == nil {
		return State{}, false
	}
	var lo, hi C.uint32_t
	C.clrprof_chain_masks(C.CLRPROF_PARTY_CHAIN, &lo, &hi)
	return State{
		Active:  C.clrprof_chain.active != 0,
		Version: int(C.clrprof_chain.version),
		MaskLo:  uint32(lo),
		MaskHi:  uint32(hi),
	}, true
}

// slotLo and slotHi are chain.c's table of the events each callback needs;
// maskLo and maskHi each party's event mask.
var (
	slotLo = (*[C.CLRPROF_CALLBACK_SLOTS]uint32)(unsafe.Pointer(&C.clrprof_slot_lo[0]))
	slotHi = (*[C.CLRPROF_CALLBACK_SLOTS]uint32)(unsafe.Pointer(&C.clrprof_slot_hi[0]))
	maskLo = (*[C.CLRPROF_PARTIES]uint32)(unsafe.Pointer(&C.clrprof_chain.mask_lo[0]))
	maskHi = (*[C.CLRPROF_PARTIES]uint32)(unsafe.Pointer(&C.clrprof_chain.mask_hi[0]))
)

// Wants reports whether party's event mask asks for the callback at slot
// (vtable index - 3); a callback the runtime delivers whatever the mask
// (Initialize, Shutdown, ...) is always wanted. It is chain.h's
// clrprof_chain_wants without a cgo call, for the composed profiler's
// fan-out.
func Wants(party, slot int) bool {
	lo, hi := slotLo[slot], slotHi[slot]
	return lo == 0 && hi == 0 || atomic.LoadUint32(&maskLo[party])&lo != 0 || atomic.LoadUint32(&maskHi[party])&hi != 0
}

// PartyInfo returns the Info wrapper of party around the runtime's Info
// unk (an ICorProfilerInfo in C memory), setting the wrappers up on the
// first call; nil when unk answers no ICorProfilerInfo or belongs to
// another profiler object than the one the parties were set up for.
func PartyInfo(unk unsafe.Pointer, party int) unsafe.Pointer {
	return C.clrprof_party_info(unk, C.int(party))
}

// PartyReset clears party's event mask (a composed member that failed
// Initialize).
func PartyReset(party int) { C.clrprof_party_reset(C.int(party)) }

// PartiesQuiesce keeps only the immutable flags of every party's event
// mask if info is the Info the parties belong to (or one of their
// wrappers), and reports whether it was.
func PartiesQuiesce(info unsafe.Pointer) bool { return C.clrprof_parties_quiesce(info) != 0 }

// SelfPath is the path of the shared library this package is linked into.
func SelfPath() string { return C.GoString(C.clrprof_self_path()) }

// SetIdentity publishes s as this library's clrprof_identity, which a
// second Go library loaded into the process reads to say who holds it.
func SetIdentity(s string) {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	C.clrprof_set_identity(cs)
}

// OtherIdentity is the clrprof_identity of the loaded library at path:
// "" for a library that has none (a Go library that is not a clrprof
// profiler) or is not loaded.
func OtherIdentity(path string) string {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	return C.GoString(C.clrprof_other_identity(cs))
}
