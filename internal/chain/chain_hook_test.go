//go:build clrprof_testhooks

package chain

import "testing"

// TestChainForwarding drives the chain vtable without a runtime: an
// ObjectAllocated reaches the chained profiler when its mask asks for
// allocations, and not otherwise; the chaining object's slot points
// straight at the chained profiler exactly when it alone asks.
func TestChainForwarding(t *testing.T) {
	for _, tc := range []struct {
		via           Via
		want, goWants bool
		calls         uint64
		direct        bool
	}{
		{ViaFanOut, true, false, 1000, true}, // (the live slot is direct; this call goes by the fan-out)
		{ViaFanOut, false, false, 0, false},
		{ViaStraight, true, false, 1000, true},
		{ViaLive, true, false, 1000, true}, // only the chained profiler asks: direct
		{ViaLive, true, true, 1000, false}, // both ask: the fan-out
		{ViaLive, false, true, 0, false},   // only the Go profiler asks
		{ViaLive, false, false, 0, false},  // nobody asks
	} {
		_, calls, direct := TestHookCalls(1000, tc.via, tc.want, tc.goWants)
		if calls != tc.calls || direct != tc.direct {
			t.Errorf("via %d, chained asks %v, Go asks %v: %d of 1000 calls reached the chained profiler, direct slot %v; want %d, %v",
				tc.via, tc.want, tc.goWants, calls, direct, tc.calls, tc.direct)
		}
	}
}

// BenchmarkChainObjectAllocated is the cost of the forwarding vtable per
// callback: ObjectAllocated straight to a native profiler against the same
// call through the fan-out (its mask check, the call, the Go profiler's
// mask check and its C slot) and through the chaining object's vtable
// when only the chained profiler asks (the direct trampoline). It reports
// ns per call of each and their ratios.
func BenchmarkChainObjectAllocated(b *testing.B) {
	const n = 1 << 22
	var straight, fan, live uint64
	for range b.N {
		s, _, _ := TestHookCalls(n, ViaStraight, true, false)
		f, _, _ := TestHookCalls(n, ViaFanOut, true, false)
		l, _, _ := TestHookCalls(n, ViaLive, true, false)
		straight += s
		fan += f
		live += l
	}
	b.ReportMetric(float64(straight)/float64(b.N*n), "ns/direct")
	b.ReportMetric(float64(fan)/float64(b.N*n), "ns/fanout")
	b.ReportMetric(float64(live)/float64(b.N*n), "ns/chained")
	b.ReportMetric(float64(fan)/float64(straight), "fanout/direct")
	b.ReportMetric(float64(live)/float64(straight), "chained/direct")
}
