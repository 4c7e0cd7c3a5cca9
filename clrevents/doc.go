// Package clrevents decodes the events the .NET runtime delivers through
// EventPipe (a profiler receives them in
// ICorProfilerCallback10::EventPipeEventDelivered, .NET 5 and later; see
// profiler.Info.EventPipeStartSession): the metadata blob that describes any
// event ([ParseMetadata]), a self-describing payload read with that metadata
// ([DecodeFields]), and the payloads of the runtime's own events that
// profilers use most, as Go structs ([DecodeRuntime]): garbage collections
// (GCStart, GCEnd, GCHeapStats, GCTriggered, the suspension and restart of
// the runtime, GCAllocationTick, and .NET 10's AllocationSampled with the
// estimator its sampling calls for, [AllocationEstimate]), lock contention (ContentionStart,
// ContentionStop), ExceptionThrown and the thread pool's worker thread
// events. Every version of those events the runtime's manifest
// (ClrEtwAll.man) defines is decoded: a struct carries the event's Version
// and the fields that version has (later fields are zero). An event this
// package does not know comes back as a [Raw] event with its bytes.
//
// The package is pure Go (it builds with CGO_ENABLED=0) and its decoders
// never panic on any input: a payload too short for its version is an
// error, bytes past the fields of the version are ignored (a newer runtime
// may append fields). The decoders are fuzzed (FuzzDecodeRuntime,
// FuzzDecodeAllocationSampled, FuzzParseMetadata; seeded with payloads
// the runtimes sent).
//
// Pointers in payloads are 8 bytes: the package decodes events of 64-bit
// processes, the only ones the SDK profiles.
package clrevents
