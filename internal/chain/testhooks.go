//go:build clrprof_testhooks

package chain

// #cgo CFLAGS: -DCLRPROF_TESTHOOKS
// #include <stdint.h>
// #include "chain.h"
import "C"

// Via is how TestHookCalls reaches the fake native profiler.
type Via int

const (
	ViaStraight Via = iota // a direct call, no SDK in between
	ViaFanOut              // the fan-out vtable (clrprof_chain_vtbl)
	ViaLive                // the chaining object's vtable after refresh
)

// TestHookCalls makes n ObjectAllocated calls to a fake native profiler,
// chained or not (via), its mask asking for allocations or not (want), the
// Go party's too (goWants); it returns the loop's duration in
// nanoseconds, how many calls reached the fake, and whether the live slot
// pointed straight at it. The chain's state is restored afterwards. Test
// builds only (clrprof_test_chain_calls in chain.c).
func TestHookCalls(n int, via Via, want, goWants bool) (ns, calls uint64, direct bool) {
	var c C.uint64_t
	var d C.int
	ns = uint64(C.clrprof_test_chain_calls(C.long(n), C.int(via), C.int(b2i(want)), C.int(b2i(goWants)), &c, &d))
	return ns, uint64(c), d != 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
