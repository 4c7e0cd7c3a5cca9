package export_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/clrprof/clrprof/pprofbuild/export"
)

// A profiler ships each profile it writes to Pyroscope, and flushes
// within a bound when the runtime shuts down.
func ExampleNew() {
	res, err := export.NewResource(".NET 8.0.4") // pprofbuild.RuntimeVersion(info) in a profiler
	if err != nil {
		log.Fatal(err)
	}
	c, err := export.NewPyroscope(export.PyroscopeOptions{URL: "http://127.0.0.1:4040", Resource: res, TenantID: "team-a"})
	if err != nil {
		log.Fatal(err)
	}
	e := export.New(c, export.Options{Logf: log.Printf})

	// every period, from the profiler's own goroutine:
	var pprofBytes []byte // pprofbuild.Write's output
	start := time.Now().Add(-time.Minute)
	e.Enqueue(&export.Profile{Name: "cpu", Start: start, End: start.Add(time.Minute), Pprof: pprofBytes})

	// at Shutdown:
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		log.Print(err) // what could not be sent is counted in e.Stats().Lost
	}
}

// The OTLP exporter reads OpenTelemetry's variables.
func ExampleOTLPOptionsFromEnv() {
	os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
	os.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20xyz")
	defer os.Unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	defer os.Unsetenv("OTEL_EXPORTER_OTLP_HEADERS")
	o, _, err := export.OTLPOptionsFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Protocol, o.Endpoint, o.Headers["authorization"], o.Gzip)

	os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318")
	_, _, err = export.OTLPOptionsFromEnv()
	fmt.Println(err)
	// Output:
	// http/protobuf http://collector:4318/v1development/profiles Bearer xyz true
	// OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": want an http:// or https:// URL
}
