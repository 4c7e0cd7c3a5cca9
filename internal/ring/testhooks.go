//go:build clrprof_testhooks

package ring

/*
#cgo CFLAGS: -DCLRPROF_TESTHOOKS
#include "ring.h"
*/
import "C"

// testThreads runs n C threads that each write events records into their
// own rings of rs (ring.c's test hook; test files cannot use cgo).
func testThreads(rs *Set, threads, events int) {
	C.clrprof_ring_test_threads(rs.s, C.int(threads), C.int(events))
}
