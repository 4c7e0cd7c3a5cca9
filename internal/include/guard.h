// The signal guard (internal/sigguard/guard.c), the C API shared by every cgo
// package of clrprof whose C calls into Go on a runtime thread (profiler,
// instr): bracket each such call with clrprof_go_enter/clrprof_go_leave.
// Defined once, in package internal/sigguard's C; hidden symbols, resolved inside
// the one shared library.
//
// Declarations only (copied into _cgo_export.h).
#ifndef CLRPROF_GUARD_H
#define CLRPROF_GUARD_H

#include <signal.h>

#pragma GCC visibility push(hidden)

// clrprof_guard brackets a C->Go call made on a runtime thread:
// clrprof_go_enter blocks the CoreCLR activation signal (SIGRTMIN) on the
// calling thread, clrprof_go_leave restores the mask the thread had, so a
// pending activation is delivered only after Go has returned, on the
// thread's own stack.
typedef struct clrprof_guard {
	sigset_t old;
	int restore;
} clrprof_guard;
void clrprof_go_enter(clrprof_guard *g);
void clrprof_go_leave(clrprof_guard *g);

#pragma GCC visibility pop

#endif
