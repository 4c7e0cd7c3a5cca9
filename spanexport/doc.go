// Package spanexport sends the spans a profiler makes to an OpenTelemetry
// collector, through the OpenTelemetry Go SDK's OTLP exporters, without
// ever making the profiled application wait for the network.
//
// New builds a Pipeline from the standard OTEL_* variables (endpoint,
// protocol, headers, sampler, service name, resource attributes, queue
// size); Pipeline.Tracer gives the trace.Tracer an integration or a Go hook
// starts its spans with. Ending a span only puts it in a bounded queue: a
// full queue drops the span and counts it. One goroutine exports batches
// and retries a batch the collector refused until it takes it, so a
// collector that is down and comes back loses nothing the queue could hold.
// Shutdown exports what is queued within its context's deadline and says
// what it could not deliver.
//
// The variables and their defaults are listed in docs/apm.md.
package spanexport
