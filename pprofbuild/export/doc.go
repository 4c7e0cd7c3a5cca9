// Package export ships the profiles a profiler built with the SDK makes
// to the backends that collect profiles across a fleet:
//
//   - Pyroscope ([NewPyroscope]): its push API, POST
//     /push.v1.PusherService/Push in the connect protocol, with the
//     protobuf types of github.com/grafana/pyroscope/api; one series per
//     profile, labelled __name__ (the profile's name), service_name and
//     the resource's other attributes, whose sample is the pprof bytes as
//     they are; basic or bearer auth and the X-Scope-OrgID tenant header.
//   - OpenTelemetry's OTLP profiles signal ([NewOTLP]), over gRPC or HTTP
//     (POST /v1development/profiles). EXPERIMENTAL, as the signal is: it
//     speaks the protocol buffers of
//     go.opentelemetry.io/proto/otlp/profiles/v1development and
//     .../collector/profiles/v1development at [ProtoVersion] (v0.4.0,
//     development version [DevelopmentVersion]), which the OpenTelemetry
//     Collector's OTLP receiver v0.165.0 reads; other versions of the
//     signal may not. Each pprof profile becomes one OTLP profile per
//     sample type in one shared dictionary, labels become attributes,
//     trace_id/span_id labels the sample's link, comments the attribute
//     pprof.profile.comment.
//
// Both describe the process with a [Resource] ([NewResource]: the
// attributes of OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, plus the
// process, the host and the .NET runtime) and compress their requests
// (gzip); [OTLPOptionsFromEnv] reads the OTEL_EXPORTER_OTLP_* variables
// as OpenTelemetry's SDKs do.
//
// A [Client] is wrapped in an [Exporter] ([New]), which sends from a
// goroutine of its own: [Exporter.Enqueue] puts a profile into a bounded
// in-memory queue and returns without touching the network, so a
// profiler calls it from its own goroutine (never from a runtime
// callback) at the cost of a mutex and an append. Failed requests that
// may succeed later (connection refused, timeouts, 408, 429, 5xx, gRPC
// UNAVAILABLE and the like) are retried with exponential back-off (1 s
// doubling to 30 s, 20% jitter, or the server's Retry-After), so a
// backend away for a while loses nothing that fits the queue (512
// profiles or 64 MiB by default); past that the oldest are dropped. What
// is dropped or refused for good is counted ([Exporter.Stats]), logged
// (Options.Logf) and written into the comments of the next profile sent
// ("export to ...: N profiles dropped before this one ...").
// [Exporter.Shutdown] sends what is left within its context's deadline
// and counts the rest as lost: a profiler's Shutdown, after which the
// runtime exits, bounds its wait that way.
//
// Samples taken inside a tracing span carry its IDs as the labels
// trace_id and span_id (pprofbuild.Spans records which span each thread is
// in; sample/contprof reads it): Pyroscope keeps them as labels, OTLP
// turns them into the sample's link.
package export
