//go:build clrprof_testhooks

package profiler

import "testing"

// TestChainForwarding drives the chain vtable without a runtime: an
// ObjectAllocated reaches the chained profiler when its mask asks for
// allocations, and not otherwise.
func TestChainForwarding(t *testing.T) {
	if _, calls := testChainCalls(1000, true, true); calls != 1000 {
		t.Errorf("chained, asking for allocations: %d of 1000 calls reached the chained profiler", calls)
	}
	if _, calls := testChainCalls(1000, true, false); calls != 0 {
		t.Errorf("chained, not asking for allocations: %d calls reached the chained profiler", calls)
	}
	if _, calls := testChainCalls(1000, false, true); calls != 1000 {
		t.Errorf("direct: %d of 1000 calls", calls)
	}
}

// BenchmarkChainObjectAllocated is the cost of the forwarding vtable per
// callback: ObjectAllocated straight to a native profiler against the same
// call through the chain (its mask check, the call, the Go profiler's mask
// check and its C slot). It reports ns per call of each and their ratio.
func BenchmarkChainObjectAllocated(b *testing.B) {
	const n = 1 << 22
	var direct, chained uint64
	for range b.N {
		d, _ := testChainCalls(n, false, true)
		c, _ := testChainCalls(n, true, true)
		direct += d
		chained += c
	}
	b.ReportMetric(float64(direct)/float64(b.N*n), "ns/direct")
	b.ReportMetric(float64(chained)/float64(b.N*n), "ns/chained")
	b.ReportMetric(float64(chained)/float64(direct), "chained/direct")
}
