// Package alloc records the application's allocations in C, without
// entering Go per allocation.
//
// [NewRecorder] answers the runtime's ObjectAllocated callback in C: each
// allocation's class and size (and, for a Poisson sample of them, the
// allocating thread's stack) goes to a per-thread buffer that a goroutine
// drains into the [Options.Batch] callback. [SampleWeight] turns a sample
// into the allocations it stands for (pprofbuild.LiveHeap uses it).
//
// [NewTickSampler] thins the runtime's own allocation events (EventPipe's
// GCAllocationTick, and AllocationSampled on .NET 10+) in C before they
// reach the profiler's EventPipeEventDelivered.
//
// Both take the profiler's *profiler.Info and are called from Initialize,
// once per process.
package alloc
