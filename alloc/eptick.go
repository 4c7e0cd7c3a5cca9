package alloc

/*
#include <stdint.h>

int clrprof_tick_enable(void *info, uint64_t mean_bytes, uint64_t seed);
uint64_t clrprof_tick_bytes(void);
void clrprof_tick_counts(int64_t *seen, int64_t *kept, int64_t *shortp, uint64_t *bytes);
void clrprof_sampled_counts(int64_t *seen, int64_t *kept, int64_t *shortp);
*/
import "C"

import (
	"errors"
	"fmt"
	"time"

	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/profiler"
)

// TickSampler keeps a sample of the runtime's allocation ticks
// (the GCAllocationTick event of Microsoft-Windows-DotNETRuntime, which
// the runtime raises about every 100 KB allocated when its GC keyword is on
// at Verbose level) and delivers only those to EventPipeEventDelivered.
// The decision is taken in C on the tick's byte count, inside the
// runtime's callback: a tick that is not kept never enters Go (no cgo
// transition, no signal guard, no payload copy). A tick is kept when the
// bytes the ticks report since the last kept one pass an exponentially
// distributed gap of mean MeanBytes, so that each kept tick stands for
// the bytes since the previous one ([TickSampler.KeptBytes]) and
// estimates built on them stay unbiased.
//
// The runtime's AllocationSampled events (.NET 10+, when the session has
// clrevents.KeywordAllocationSampling) are thinned in C the same way: each
// is kept with probability [TickSampler.SampledKeep],
// AllocationSamplingMean (102,400 bytes, the runtime's mean) over
// MeanBytes, at most 1, independently of its contents, so that one is
// kept every MeanBytes allocated on average and the kept ones are a
// random sample of the runtime's (an estimator weighs each by 1/keep more:
// clrevents.AllocationEstimate). Every other event, and events of other
// providers, reach EventPipeEventDelivered as before.
type TickSampler struct {
	mean int
}

// TickStats are the ticks the sampler saw, kept, and could not
// read (a payload too short to hold its byte count; dropped), and the
// bytes the ticks it saw reported.
type TickStats struct {
	// Seen counts the allocation ticks of the runtime's provider the
	// sampler read; Kept those it delivered to EventPipeEventDelivered;
	// Short those whose payload was too short to hold a byte count
	// (dropped, not delivered).
	Seen, Kept, Short int64
	// Bytes is the sum of the byte counts the seen ticks reported.
	Bytes uint64
	// Sampled counts the AllocationSampled events (.NET 10+) the sampler
	// read, SampledKept those it delivered, SampledShort those too short
	// for the event's fields (dropped).
	Sampled, SampledKept, SampledShort int64
}

// NewTickSampler starts sampling the runtime's allocation ticks in
// C, keeping one every meanBytes bytes allocated on average. Call it in
// Initialize, before the event mask has HighEventPipe (the runtime must
// not be delivering events yet), once per process. It needs
// ICorProfilerInfo12 (.NET 5 and later): on older runtimes the error
// matches ErrNotAvailable.
func NewTickSampler(info *profiler.Info, meanBytes int) (*TickSampler, error) {
	p := profimpl.Ptr(info, 12)
	if p == nil {
		return nil, profimpl.NotAvailable("ICorProfilerInfo12::EventPipeGetProviderInfo", 12, info.Version())
	}
	if meanBytes < 1 {
		return nil, fmt.Errorf("clrprof: alloc.NewTickSampler: mean %d bytes: want at least 1", meanBytes)
	}
	switch C.clrprof_tick_enable(p, C.uint64_t(meanBytes), C.uint64_t(time.Now().UnixNano())) {
	case 0:
	case -2:
		return nil, errors.New("clrprof: alloc.NewTickSampler: already sampling")
	default:
		return nil, errors.New("clrprof: alloc.NewTickSampler: cannot take over EventPipeEventDelivered")
	}
	return &TickSampler{mean: meanBytes}, nil
}

// MeanBytes is the mean number of bytes between kept ticks.
func (s *TickSampler) MeanBytes() int { return s.mean }

// allocationSamplingMean is clrevents.AllocationSamplingMean (the C side
// has its own copy, SAMPLED_MEAN).
const allocationSamplingMean = 102400

// SampledKeep is the probability with which the sampler keeps each
// AllocationSampled event: 102,400 (the runtime's mean bytes between
// samples) over MeanBytes, or 1 when MeanBytes is at most that (the
// runtime samples no finer).
func (s *TickSampler) SampledKeep() float64 {
	return min(1, allocationSamplingMean/float64(s.mean))
}

// KeptBytes is, inside EventPipeEventDelivered for a GCAllocationTick the
// sampler kept (on the thread the runtime delivers it on), the bytes the
// tick stands for: those the ticks reported since the previous kept one,
// this one included. It is 0 elsewhere (outside a kept tick's delivery).
func (s *TickSampler) KeptBytes() uint64 {
	return uint64(C.clrprof_tick_bytes())
}

// Stats are the ticks and AllocationSampled events seen, kept and
// unreadable so far.
func (s *TickSampler) Stats() TickStats {
	var seen, kept, short C.int64_t
	var bytes C.uint64_t
	C.clrprof_tick_counts(&seen, &kept, &short, &bytes)
	var sseen, skept, sshort C.int64_t
	C.clrprof_sampled_counts(&sseen, &skept, &sshort)
	return TickStats{Seen: int64(seen), Kept: int64(kept), Short: int64(short), Bytes: uint64(bytes),
		Sampled: int64(sseen), SampledKept: int64(skept), SampledShort: int64(sshort)}
}
