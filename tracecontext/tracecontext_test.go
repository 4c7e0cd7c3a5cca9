package tracecontext

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestParseTraceparent(t *testing.T) {
	for _, tc := range []struct {
		in      string
		ok      bool
		sampled bool
		why     string
	}{
		{valid, true, true, ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", true, false, ""},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03", true, true, ""},
		// a later version: parsed by version 00's layout, the rest ignored
		{"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-will-bring", true, true, ""},
		{"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", true, true, ""},
		{"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", false, false, "character 56"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", false, false, "version 00 has 56"},
		{"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, false, "version ff"},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", false, false, "trace-id"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01", false, false, "parent-id"},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, false, "all zeros"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false, false, "all zeros"},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", false, false, "trace-flags"},
		{"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, false, "separated"},
		{"0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, false, "54 characters"},
		{"", false, false, "0 characters"},
		{"0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", false, false, "version"},
	} {
		sc, err := ParseTraceparent(tc.in)
		if tc.ok {
			if err != nil {
				t.Errorf("%q: %v", tc.in, err)
				continue
			}
			if got := sc.TraceID().String(); got != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("%q: trace id %s", tc.in, got)
			}
			if got := sc.SpanID().String(); got != "00f067aa0ba902b7" {
				t.Errorf("%q: span id %s", tc.in, got)
			}
			if sc.IsSampled() != tc.sampled || !sc.IsRemote() {
				t.Errorf("%q: sampled %v remote %v", tc.in, sc.IsSampled(), sc.IsRemote())
			}
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: err %v, want ErrInvalid", tc.in, err)
		} else if !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: err %q does not say %q", tc.in, err, tc.why)
		}
		if sc.IsValid() {
			t.Errorf("%q: invalid value gave a valid context", tc.in)
		}
	}
}

func TestReservedFlagsNotPropagated(t *testing.T) {
	sc, err := ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff")
	if err != nil {
		t.Fatal(err)
	}
	if got := Traceparent(sc); !strings.HasSuffix(got, "-03") {
		t.Errorf("Traceparent = %s, want flags 03", got)
	}
}

func TestExtractTracestate(t *testing.T) {
	sc, err := Extract(valid, "rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.TraceState().Get("congo"); got != "t61rcWkgMzE" {
		t.Errorf("congo = %q", got)
	}
	tp, ts := Inject(sc)
	if tp != valid || ts != "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE" {
		t.Errorf("Inject = %q, %q", tp, ts)
	}

	// an invalid tracestate is dropped, the traceparent kept
	sc, err = Extract(valid, "UPPER=1")
	if !errors.Is(err, ErrTracestateDropped) || !sc.IsValid() || sc.TraceState().Len() != 0 {
		t.Errorf("bad tracestate: sc valid %v, state %q, err %v", sc.IsValid(), sc.TraceState(), err)
	}
	// an invalid traceparent: the tracestate is not read
	sc, err = Extract("garbage", "rojo=1")
	if !errors.Is(err, ErrInvalid) || sc.IsValid() || sc.TraceState().Len() != 0 {
		t.Errorf("bad traceparent: sc %v, err %v", sc, err)
	}
}

func TestInjectInvalid(t *testing.T) {
	if tp, ts := Inject(trace.SpanContext{}); tp != "" || ts != "" {
		t.Errorf("Inject(zero) = %q, %q", tp, ts)
	}
}

// TestAgreesWithOpenTelemetry compares with OpenTelemetry Go's own W3C
// propagator, the code the spans will meet at the other end.
func TestAgreesWithOpenTelemetry(t *testing.T) {
	prop := propagation.TraceContext{}
	for _, in := range []string{valid, "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
		"01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra"} {
		h := http.Header{}
		h.Set(TraceparentHeader, in)
		h.Set(TracestateHeader, "a=1,b=2")
		want := trace.SpanContextFromContext(prop.Extract(context.Background(), propagation.HeaderCarrier(h)))
		got, err := Extract(in, "a=1,b=2")
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !got.Equal(want) {
			t.Errorf("%q: got %v, OpenTelemetry %v", in, got, want)
		}
		out := http.Header{}
		prop.Inject(trace.ContextWithRemoteSpanContext(context.Background(), got), propagation.HeaderCarrier(out))
		tp, ts := Inject(got)
		if tp != out.Get(TraceparentHeader) || ts != out.Get(TracestateHeader) {
			t.Errorf("%q: Inject %q %q, OpenTelemetry %q %q", in, tp, ts, out.Get(TraceparentHeader), out.Get(TracestateHeader))
		}
	}
}

func FuzzParseTraceparent(f *testing.F) {
	f.Add(valid)
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x")
	f.Add("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseTraceparent(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || sc.IsValid() {
				t.Fatalf("%q: err %v with valid=%v", s, err, sc.IsValid())
			}
			return
		}
		if !sc.IsValid() {
			t.Fatalf("%q: no error and an invalid context", s)
		}
		// what we write we read back the same, and it is s's first 55
		// characters with the reserved flags cleared and version 00
		tp := Traceparent(sc)
		if tp[3:53] != s[3:53] {
			t.Fatalf("%q: wrote %q", s, tp)
		}
		back, err := ParseTraceparent(tp)
		if err != nil || !back.Equal(sc) {
			t.Fatalf("%q: round trip %q: %v", s, tp, err)
		}
	})
}
