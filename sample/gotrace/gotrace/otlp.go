package gotrace

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/spanexport"
)

func endpointSet() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// otlp is the span pipeline (package spanexport: a bounded queue that
// never blocks the app, retried exports, OTEL_* configuration).
type otlp struct {
	p      *spanexport.Pipeline
	tracer trace.Tracer
}

func (o *otlp) String() string { return o.p.String() }

func newOTLP(info *profiler.Info) (*otlp, error) {
	opts := spanexport.Options{Runtime: pprofbuild.RuntimeVersion(info), Distro: "clrprof-gotrace", Logf: logf}
	if v := os.Getenv("GOTRACE_QUEUE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("GOTRACE_QUEUE=%q: want a positive number of spans", v)
		}
		opts.QueueSize = n
	}
	p, err := spanexport.New(context.Background(), opts)
	if err != nil {
		return nil, err
	}
	return &otlp{p: p, tracer: p.Tracer("github.com/clrprof/clrprof/sample/gotrace")}, nil
}

// shutdown exports what is queued, for at most 5 s; the pipeline logs the
// totals.
func (o *otlp) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := o.p.Shutdown(ctx); err != nil {
		logf("OTLP shutdown: %v", err)
	}
}
