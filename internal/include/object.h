// The profiler object handed to the runtime (internal/comobj/object.c): its
// layout, IUnknown, the per-callback "implemented" table, the live vtable
// and its C overrides, the class factory's hook, and the COM entry points.
// The generated half (corprof_gen.h, internal/comobj/callbacks_gen.c) holds the
// interface types and the callback vtable. Shared (internal/include)
// because the C of internal/chain and of profiler's recorders uses it too.
//
// This header is copied into _cgo_export.h (internal/comobj's comobj.go has
// //export functions and includes it), so it must hold declarations only.
// Everything it declares is internal to the shared library except
// DllGetClassObject and DllCanUnloadNow, which say so explicitly.
#ifndef CLRPROF_OBJECT_H
#define CLRPROF_OBJECT_H

#include <stdint.h>

#include "corprof_gen.h"

#pragma GCC visibility push(hidden)

// clrprof_object is the profiler object handed to the runtime: a COM object
// in C memory. handle is a runtime/cgo.Handle value leading to the Go
// dispatcher; C memory never holds a Go pointer.
typedef struct clrprof_object {
	const void *lpVtbl;
	volatile int32_t refs;
	uintptr_t handle;
} clrprof_object;

// clrprof_impl[slot] is 1 when the callback at that slot (vtable index - 3)
// must call into Go, 0 when the C thunk answers S_OK by itself. Written by
// Go (clrprof_set_impl), read by the generated thunks.
extern volatile uint8_t clrprof_impl[CLRPROF_CALLBACK_SLOTS];
void clrprof_set_impl(int slot, int on);
int clrprof_get_impl(int slot);

// IUnknown of clrprof_object: QueryInterface answers IUnknown and every
// ICorProfilerCallbackN IID; the last Release tells Go to delete the handle
// and frees the object.
HRESULT STDMETHODCALLTYPE clrprof_QueryInterface(void *self, REFIID riid, void **ppv);
ULONG STDMETHODCALLTYPE clrprof_AddRef(void *self);
ULONG STDMETHODCALLTYPE clrprof_Release(void *self);

// clrprof_new_object creates a profiler object for the Go handle h (one
// reference) and queries it for riid. It is the class factory's
// CreateInstance without the aggregation check; exposed for tests.
HRESULT clrprof_new_object(uintptr_t h, REFIID riid, void **ppv);
// clrprof_new_object_vtbl is clrprof_new_object with the object's vtable
// (NULL: the ordinary one; chain.c's when a native profiler is chained).
HRESULT clrprof_new_object_vtbl(uintptr_t h, const void *vtbl, REFIID riid, void **ppv);

// clrprof_callback_override makes the profiler objects answer the callback
// at slot (vtable index - 3) with fn instead of the generated thunk, and
// stores the generated thunk in *orig (fn may chain to it). For C fast
// paths (allocation and exception-unwind recording) that must not enter
// Go; call it before the runtime can deliver that callback (in
// Initialize, before the event mask enables it). Returns 0, or -1 for a
// bad slot.
int clrprof_callback_override(int slot, const void *fn, const void **orig);

// clrprof_live_vtbl is the vtable the profiler objects use: a writable copy
// of the generated one, so that C fast paths can take over single slots.
extern ICorProfilerCallback11Vtbl clrprof_live_vtbl;

// clrprof_object_set_vtbl_hook registers the hook the class factory asks
// for the vtable of each new profiler object (NULL from the hook: the
// ordinary one). internal/chain/chain.c, a layer above, registers it so
// that the first object forwards to a chained native profiler.
void clrprof_object_set_vtbl_hook(const void *(*hook)(void));

// clrprof_signal_audit runs the signal audit (signals.c) once per process
// (later calls do nothing) and reports it to Go. Must be called after the
// Go runtime is up.
void clrprof_signal_audit(void);

// The COM entry points exported from the shared library.
__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllGetClassObject(REFCLSID rclsid, REFIID riid, void **ppv);
__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllCanUnloadNow(void);

#pragma GCC visibility pop

#endif
