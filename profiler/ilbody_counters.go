package profiler

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

/*
#include <stdint.h>
#include <stdlib.h>

// clrprof_hit is what rewritten IL calls (calli unmanaged cdecl
// void(native int)) to count: one relaxed atomic add, no Go.
static void clrprof_hit(int64_t *counter) {
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static uintptr_t clrprof_hit_addr(void) { return (uintptr_t)&clrprof_hit; }

static int64_t *clrprof_counters_alloc(size_t n) { return calloc(n, sizeof(int64_t)); }
*/
import "C"

// maxHitCounters bounds one HitCounters array.
const maxHitCounters = 1 << 24

// HitCounters is an array of 64-bit counters in C memory that rewritten
// IL can increment without entering Go: push the address of a counter
// (Addr) as a native int, push HitFunc, and calli with the unmanaged cdecl
// signature void(native int). The memory is never freed (IL may still run
// after Shutdown), so allocate what you need once.
type HitCounters struct {
	p *C.int64_t
	n int
}

// NewHitCounters allocates n zeroed counters.
func NewHitCounters(n int) (*HitCounters, error) {
	if n <= 0 || n > maxHitCounters {
		return nil, fmt.Errorf("clrprof: NewHitCounters(%d): want 1..%d", n, maxHitCounters)
	}
	p := C.clrprof_counters_alloc(C.size_t(n))
	if p == nil {
		return nil, fmt.Errorf("clrprof: NewHitCounters(%d): %w", n, E_OUTOFMEMORY)
	}
	return &HitCounters{p: p, n: n}, nil
}

// Len is the number of counters.
func (h *HitCounters) Len() int { return h.n }

// HitFunc is the address of the native function that increments the
// counter whose address it is given.
func HitFunc() uint64 { return uint64(C.clrprof_hit_addr()) }

func (h *HitCounters) at(i int) *int64 {
	return (*int64)(unsafe.Add(unsafe.Pointer(h.p), i*8))
}

// Addr returns the address of counter i, for the IL (0 if out of range).
func (h *HitCounters) Addr(i int) uint64 {
	if i < 0 || i >= h.n {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(h.at(i))))
}

// Get reads counter i (0 if out of range).
func (h *HitCounters) Get(i int) int64 {
	if i < 0 || i >= h.n {
		return 0
	}
	return atomic.LoadInt64(h.at(i))
}
