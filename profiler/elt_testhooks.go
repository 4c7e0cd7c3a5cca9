//go:build clrprof_testhooks

package profiler

/*
#include "elt.h"
#include "eltcommon.h"
#include "eltcount.h"
#include "object.h"
#include "signals.h"
#include "guard.h"

static uint64_t clrprof_test_cnt_map(uint64_t f, BOOL *hook) {
	typedef UINT_PTR (*mapper)(FunctionID, void *, BOOL *);
	return (uint64_t)((mapper)clrprof_cnt_mapper2())((FunctionID)f, NULL, hook);
}
*/
import "C"

import "unsafe"

// Hooks for the unit tests of the rings and the ELT stubs (test files
// cannot use cgo).

func testRingSet(slots int) (*ringSet, error) { return newRingSet(slots, nil) }

func testRingThreads(rs *ringSet, threads, events int) {
	C.clrprof_ring_test_threads(rs.s, C.int(threads), C.int(events))
}

func testELTSetup(slots int) (*ringSet, error) {
	if rc := C.clrprof_elt_setup(C.uint64_t(slots), nil); rc != 0 {
		return nil, E_FAIL
	}
	return &ringSet{s: &C.clrprof_elt_set, dropped: map[*C.clrprof_ring]uint64{}}, nil
}

func testELTGate(on, slow bool) {
	C.clrprof_elt_on = C.uint8_t(b2i(on))
	C.clrprof_elt_force_slow = C.uint8_t(b2i(slow))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// testELTCall calls hook which (0 enter, 1 leave, 2 tailcall) from
// assembly with sentinels in every register and returns the mask of
// registers that changed (bits 0-12 rax rcx rdx rbx rsi r8-r15, 13 rdi,
// 16+i xmm i).
func testELTCall(which int, id uint64) uint64 {
	var bad C.uint64_t
	C.clrprof_elt_test_call(C.int(which), C.uint64_t(id), (*C.uint64_t)(unsafe.Pointer(&bad)))
	return uint64(bad)
}

func testXSaveSize() uint64 { return uint64(C.clrprof_elt_xsave_size) }

// testCountSetup prepares the call counter (no runtime) and maps f to a
// function index, returned; testCountOff turns counting mode off again.
func testCountSetup(f uint64) (idx uint64) {
	C.clrprof_cnt_setup(64, nil)
	var hook C.BOOL
	idx = uint64(C.clrprof_test_cnt_map(C.uint64_t(f), &hook))
	if hook == 0 {
		return 0
	}
	return idx
}

func testCountOff() { C.clrprof_elt_counting = 0 }
