//go:build clrprof_testhooks

package ring

/*
#cgo CFLAGS: -DCLRPROF_TESTHOOKS
#include <stdlib.h>
#include "ring.h"

static clrprof_ringset *test_ringset_new(void) { return calloc(1, sizeof(clrprof_ringset)); }
*/
import "C"

// testThreads runs n C threads that each write events records into their
// own rings of rs (ring.c's test hook; test files cannot use cgo).
func testThreads(rs *Set, threads, events int) {
	C.clrprof_ring_test_threads(rs.s, C.int(threads), C.int(events))
}

// newByteSet makes a set of byte rings of the test's own structure (a
// recorder other than the slot rings', as instr's deferred rings are)
// with `bytes` bytes of records per ring and the after-exit policy
// release (free once drained) or not (reuse).
func newByteSet(bytes int, release bool) *Set {
	s := C.test_ringset_new()
	if s == nil {
		panic("out of memory")
	}
	policy := C.int(C.CLRPROF_RING_REUSE)
	if release {
		policy = C.CLRPROF_RING_RELEASE
	}
	if rc := C.clrprof_ring_test_bytes_init(s, C.uint64_t(bytes), policy); rc != 0 {
		panic("clrprof_ring_test_bytes_init")
	}
	return &Set{s: s}
}

// testBytes runs n C threads that each write events byte records into
// their own rings of rs (ring.c's clrprof_ring_test_bytes).
func testBytes(rs *Set, threads, events int) {
	C.clrprof_ring_test_bytes(rs.s, C.int(threads), C.int(events))
}
