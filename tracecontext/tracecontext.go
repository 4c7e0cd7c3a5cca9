package tracecontext

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/trace"
)

// Header names, as they travel in HTTP (case-insensitive there) and in
// other carriers.
const (
	TraceparentHeader = "traceparent"
	TracestateHeader  = "tracestate"
)

// Version is the traceparent version this package writes.
const Version = 0

// FlagRandom is trace-flags bit 1 of Trace Context Level 2: the trace ID's
// rightmost 7 bytes are random. OpenTelemetry Go's trace.FlagsSampled is
// bit 0.
const FlagRandom trace.TraceFlags = 0x02

// ErrInvalid is what every parse error wraps: the value must be discarded
// (the specification's words), and a new trace started.
var ErrInvalid = errors.New("tracecontext: invalid traceparent")

// the fixed layout of a version-00 traceparent:
// vv-tttttttttttttttttttttttttttttttt-pppppppppppppppp-ff
const (
	lenV00   = 55
	offTrace = 3
	offSpan  = 36
	offFlags = 53
)

// ParseTraceparent parses a traceparent value into a remote SpanContext
// (no tracestate).
//
// Version 00 must be exactly 55 characters. A later version (01..fe) is
// parsed by version 00's layout and may carry more after a '-', which is
// ignored, as the specification requires of a reader that knows an earlier
// version. Version ff, upper-case or non-hex digits, an all-zero trace or
// parent ID, and wrong separators are errors wrapping ErrInvalid.
func ParseTraceparent(s string) (trace.SpanContext, error) {
	var zero trace.SpanContext
	if len(s) < lenV00 {
		return zero, fmt.Errorf("%w: %d characters, want 55", ErrInvalid, len(s))
	}
	ver, ok := hexByte(s[0], s[1])
	if !ok {
		return zero, fmt.Errorf("%w: version %q is not two lower-case hex digits", ErrInvalid, s[:2])
	}
	switch {
	case ver == 0xff:
		return zero, fmt.Errorf("%w: version ff is forbidden", ErrInvalid)
	case ver == 0 && len(s) != lenV00:
		return zero, fmt.Errorf("%w: version 00 has %d characters, want 55", ErrInvalid, len(s))
	case ver != 0 && len(s) > lenV00 && s[lenV00] != '-':
		return zero, fmt.Errorf("%w: version %02x: character 56 is %q, want '-'", ErrInvalid, ver, s[lenV00])
	}
	if s[2] != '-' || s[offSpan-1] != '-' || s[offFlags-1] != '-' {
		return zero, fmt.Errorf("%w: fields not separated by '-'", ErrInvalid)
	}
	var cfg trace.SpanContextConfig
	if !decodeHex(cfg.TraceID[:], s[offTrace:offSpan-1]) {
		return zero, fmt.Errorf("%w: trace-id %q is not 32 lower-case hex digits", ErrInvalid, s[offTrace:offSpan-1])
	}
	if !decodeHex(cfg.SpanID[:], s[offSpan:offFlags-1]) {
		return zero, fmt.Errorf("%w: parent-id %q is not 16 lower-case hex digits", ErrInvalid, s[offSpan:offFlags-1])
	}
	flags, ok := hexByte(s[offFlags], s[offFlags+1])
	if !ok {
		return zero, fmt.Errorf("%w: trace-flags %q is not two lower-case hex digits", ErrInvalid, s[offFlags:offFlags+2])
	}
	if !cfg.TraceID.IsValid() {
		return zero, fmt.Errorf("%w: trace-id is all zeros", ErrInvalid)
	}
	if !cfg.SpanID.IsValid() {
		return zero, fmt.Errorf("%w: parent-id is all zeros", ErrInvalid)
	}
	// Bits 0 (sampled) and 1 (random, Level 2) are defined; the others
	// are reserved, and this package writes version 00, where they must be
	// zero: they are not propagated.
	flags &= byte(trace.FlagsSampled | FlagRandom)
	cfg.TraceFlags = trace.TraceFlags(flags)
	cfg.Remote = true
	return trace.NewSpanContext(cfg), nil
}

// ErrTracestateDropped is wrapped by Extract's error when the traceparent
// was valid and the tracestate was not: the returned SpanContext is usable
// (without a tracestate), as the specification allows.
var ErrTracestateDropped = errors.New("tracecontext: tracestate dropped")

// Extract parses the values of the traceparent and tracestate headers
// (tracestate may be empty). An invalid traceparent is an error wrapping
// ErrInvalid, and the tracestate is then not read, as the specification
// says. An invalid tracestate is dropped: the returned SpanContext is valid,
// without a tracestate, and the error wraps ErrTracestateDropped and says
// why.
func Extract(traceparent, tracestate string) (trace.SpanContext, error) {
	sc, err := ParseTraceparent(traceparent)
	if err != nil {
		return trace.SpanContext{}, err
	}
	if tracestate == "" {
		return sc, nil
	}
	ts, err := trace.ParseTraceState(tracestate)
	if err != nil {
		return sc, fmt.Errorf("%w: %v", ErrTracestateDropped, err)
	}
	return sc.WithTraceState(ts), nil
}

// Traceparent formats sc as a version-00 traceparent. It returns "" for a
// SpanContext without valid IDs (nothing is to be propagated then).
func Traceparent(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	var b [lenV00]byte
	b[0], b[1] = '0', '0'
	b[2] = '-'
	tid, sid := sc.TraceID(), sc.SpanID()
	encodeHex(b[offTrace:], tid[:])
	b[offSpan-1] = '-'
	encodeHex(b[offSpan:], sid[:])
	b[offFlags-1] = '-'
	f := byte(sc.TraceFlags() & (trace.FlagsSampled | FlagRandom))
	encodeHex(b[offFlags:], []byte{f})
	return string(b[:])
}

// Inject returns the header values that carry sc: the traceparent, and the
// tracestate ("" when sc has none, and then the header is not sent).
func Inject(sc trace.SpanContext) (traceparent, tracestate string) {
	tp := Traceparent(sc)
	if tp == "" {
		return "", ""
	}
	return tp, sc.TraceState().String()
}

const hexDigits = "0123456789abcdef"

func encodeHex(dst, src []byte) {
	for i, c := range src {
		dst[2*i] = hexDigits[c>>4]
		dst[2*i+1] = hexDigits[c&0xf]
	}
}

// decodeHex decodes exactly len(dst)*2 lower-case hex digits.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	for i := range dst {
		b, ok := hexByte(s[2*i], s[2*i+1])
		if !ok {
			return false
		}
		dst[i] = b
	}
	return true
}

func hexByte(hi, lo byte) (byte, bool) {
	h, ok1 := nibble(hi)
	l, ok2 := nibble(lo)
	return h<<4 | l, ok1 && ok2
}

// nibble accepts lower-case hex only: the specification makes upper case
// invalid in traceparent.
func nibble(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
