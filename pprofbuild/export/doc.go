// Package export ships the profiles a profiler built with the SDK makes
// to the backends that collect profiles across a fleet: Pyroscope's push
// API ([NewPyroscope]) and OpenTelemetry's OTLP profiles signal over gRPC
// or HTTP ([NewOTLP]; EXPERIMENTAL, as the signal is: [ProtoVersion]).
//
// Wrap a [Client] in an [Exporter] with [New] (ExampleNew): its Enqueue
// puts a profile into a bounded in-memory queue and returns without
// touching the network; a goroutine sends, retrying with back-off, and
// what is dropped is counted ([Exporter.Stats]), logged and said in the
// next profile's comments. [Exporter.Shutdown] sends what is left within
// its context's deadline. [NewResource] and [OTLPOptionsFromEnv] read the
// OTEL_* environment as OpenTelemetry's SDKs do.
//
// Read more in docs/packages.md of the repository.
package export
