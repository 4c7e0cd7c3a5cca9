package main

import (
	"encoding/binary"
	"errors"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/spanexport"
)

var (
	errShort = errors.New("apm: truncated span record")
	errBatch = errors.New("apm: a batch's record overruns it")
)

// splitBatch calls f with each record of a batch (Listener.Send: an i32
// byte count before each). A count that overruns the batch ends it with
// errBatch.
func splitBatch(b []byte, f func(rec []byte)) error {
	for len(b) > 0 {
		if len(b) < 4 {
			return errBatch
		}
		n := int64(int32(binary.LittleEndian.Uint32(b)))
		if n <= 0 || n > int64(len(b)-4) {
			return errBatch
		}
		f(b[4 : 4+n])
		b = b[4+n:]
	}
	return nil
}

// reader reads the listener's encoding (Listener.cs); every read checks
// the bounds, and the first failure sticks.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = errShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) u8() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) i32() int32 {
	if v := r.take(4); v != nil {
		return int32(binary.LittleEndian.Uint32(v))
	}
	return 0
}

func (r *reader) i64() int64 {
	if v := r.take(8); v != nil {
		return int64(binary.LittleEndian.Uint64(v))
	}
	return 0
}

func (r *reader) str() string {
	n := r.i32()
	return strs.get(r.take(int(n)))
}

// interner hands out one copy of each string the records repeat: the
// scopes, span names and tag keys, and values such as methods, routes,
// addresses and query texts come in every span, and a new Go string for
// each was most of what decoding allocated. It holds at most maxInterned
// strings of at most maxInternLen bytes; once full, other strings are
// copied as before (an application whose values never repeat, such as
// URLs with ids, fills it with those and gains nothing after).
type interner struct {
	mu sync.RWMutex
	m  map[string]string
}

const (
	maxInterned  = 4096
	maxInternLen = 256
)

var strs = interner{m: map[string]string{}}

func (in *interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > maxInternLen {
		return string(b)
	}
	in.mu.RLock()
	s, ok := in.m[string(b)] // no copy: a lookup with a converted slice
	in.mu.RUnlock()
	if ok {
		return s
	}
	s = string(b)
	in.mu.Lock()
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	in.mu.Unlock()
	return s
}

// count reads a count of items, each at least min bytes long, and refuses
// one the remaining bytes cannot hold.
func (r *reader) count(min int) int {
	n := int(r.i32())
	if r.err == nil && (n < 0 || n*min > len(r.b)) {
		r.err = errShort
		return 0
	}
	return n
}

func (r *reader) tags() []attribute.KeyValue {
	n := r.count(6)
	kvs := make([]attribute.KeyValue, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		k := r.str()
		switch r.u8() {
		case 0:
			kvs = append(kvs, attribute.String(k, r.str()))
		case 1:
			kvs = append(kvs, attribute.Int64(k, r.i64()))
		case 2:
			kvs = append(kvs, attribute.Bool(k, r.u8() != 0))
		case 3:
			kvs = append(kvs, attribute.Float64(k, math.Float64frombits(uint64(r.i64()))))
		default:
			r.err = errors.New("apm: unknown tag type")
		}
	}
	return kvs
}

// decodeSpan decodes one stopped activity into the pipeline's SpanData.
func decodeSpan(b []byte) (spanexport.SpanData, error) {
	r := &reader{b: b}
	if v := r.u8(); r.err == nil && v != 1 {
		return spanexport.SpanData{}, errors.New("apm: unknown span record version")
	}
	var tid trace.TraceID
	var sid, pid trace.SpanID
	copy(tid[:], r.take(16))
	copy(sid[:], r.take(8))
	copy(pid[:], r.take(8))
	flags := trace.TraceFlags(r.u8())
	remote := r.u8() != 0
	kind := r.u8()
	status := r.u8()
	start := r.i64()
	dur := r.i64()
	var s spanexport.SpanData
	s.Scope = r.str()
	s.Version = r.str()
	s.Name = r.str()
	s.StatusDescription = r.str()
	s.Attrs = r.tags()
	n := r.count(16)
	for i := 0; i < n && r.err == nil; i++ {
		name := r.str()
		at := r.i64()
		s.Events = append(s.Events, sdktrace.Event{Name: name, Time: time.Unix(0, at), Attributes: r.tags()})
	}
	if r.err != nil {
		return spanexport.SpanData{}, r.err
	}
	if len(r.b) != 0 {
		return spanexport.SpanData{}, errors.New("apm: trailing bytes after a span record")
	}
	s.Context = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: flags})
	if pid.IsValid() {
		s.Parent = trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: pid, TraceFlags: flags, Remote: remote})
	}
	// System.Diagnostics.ActivityKind: Internal, Server, Client, Producer,
	// Consumer.
	s.Kind = [...]trace.SpanKind{trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient,
		trace.SpanKindProducer, trace.SpanKindConsumer}[min(int(kind), 4)]
	// ActivityStatusCode: Unset, Ok, Error.
	switch status {
	case 1:
		s.Status = codes.Ok
	case 2:
		s.Status = codes.Error
	}
	s.Start = time.Unix(0, start)
	s.End = s.Start.Add(time.Duration(dur))
	return s, nil
}
