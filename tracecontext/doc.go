// Package tracecontext reads and writes W3C Trace Context
// (https://www.w3.org/TR/trace-context/): the traceparent and tracestate
// values an instrumented request carries, as OpenTelemetry Go's
// trace.SpanContext.
//
// An integration that sees an incoming request calls Extract on its
// headers' values and parents its server span on the result; one that
// makes an outgoing request calls Inject (or Traceparent) with its client
// span's context and sets the headers. Parsing is strict where the
// specification says a value must be discarded (upper-case hex, all-zero
// IDs, version ff, a wrong length) and lenient where it says a later
// version must be understood.
package tracecontext
