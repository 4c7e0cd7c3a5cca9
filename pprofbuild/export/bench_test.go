package export_test

import (
	"bytes"
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/pprofbuild/export"
	"github.com/google/pprof/profile"
)

// bigProfile is a profile the size of a busy contprof CPU period: 1000
// distinct stacks of 30 frames over 3000 functions, gzip-compressed.
func bigProfile(b *testing.B) []byte {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		TimeNanos:  time.Now().UnixNano(), DurationNanos: int64(time.Minute),
	}
	for i := range 3000 {
		f := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("Namespace.Class%d.Method%d", i/10, i)}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}})
	}
	for i := range 1000 {
		s := &profile.Sample{Value: []int64{int64(i%7 + 1), int64(i%7+1) * 52631578}}
		for j := range 30 {
			s.Location = append(s.Location, p.Location[(i*7+j*31)%3000])
		}
		p.Sample = append(p.Sample, s)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// What shipping one such profile costs the profiled process (in its own
// CPU time, the receiver's where it runs in this process included): the
// request built, compressed and sent on loopback. contprof ships six
// profiles a period (60 s by default).
func BenchmarkSend(b *testing.B) {
	data := bigProfile(b)
	b.Logf("profile: %d bytes", len(data))
	res, _ := export.NewResource(".NET 8.0.4")
	pyro := exporttest.StartPyroscope(b, "")
	col := exporttest.StartCollector(b)
	for _, tc := range []struct {
		name string
		mk   func() (export.Client, error)
	}{
		{"pyroscope", func() (export.Client, error) {
			return export.NewPyroscope(export.PyroscopeOptions{URL: pyro.URL(), Resource: res})
		}},
		{"otlp-grpc", func() (export.Client, error) {
			return export.NewOTLP(export.OTLPOptions{Protocol: export.ProtocolGRPC, Endpoint: col.GRPCEndpoint(), Gzip: true, Resource: res})
		}},
		{"otlp-http", func() (export.Client, error) {
			return export.NewOTLP(export.OTLPOptions{Endpoint: col.HTTPEndpoint(), Gzip: true, Resource: res})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, err := tc.mk()
			if err != nil {
				b.Fatal(err)
			}
			p := []*export.Profile{{Name: "cpu", Pprof: data}}
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				if err := c.Send(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// cpuTime is this process's CPU time (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
