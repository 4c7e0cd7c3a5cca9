package spanexport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/clrprof/clrprof/pprofbuild/export"
)

// Defaults of the queue, where the OTEL_BSP_* variables are not set.
const (
	DefaultQueueSize     = 8192
	DefaultBatchSize     = 512
	DefaultScheduleDelay = time.Second
	DefaultExportTimeout = 10 * time.Second
)

// ErrNoEndpoint is returned by New when neither OTEL_EXPORTER_OTLP_ENDPOINT
// nor OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and Options.Exporter is
// nil): there is nowhere to send spans.
var ErrNoEndpoint = errors.New("spanexport: no OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)")

// Options configure New. The zero value reads everything from the
// environment.
type Options struct {
	// Runtime is the .NET runtime's version ("10.0.15"), recorded in the
	// resource as process.runtime.*; a profiler gets it from
	// pprofbuild.RuntimeVersion. Empty: not recorded.
	Runtime string
	// Distro is the resource's telemetry.distro.name (the profiler's
	// name). Empty: "clrprof".
	Distro string
	// Logf receives what the pipeline has to say (drops, failed exports,
	// the totals at Shutdown), rate-limited. Nil: standard error, prefixed
	// with "spanexport: ".
	Logf func(format string, args ...any)
	// QueueSize overrides OTEL_BSP_MAX_QUEUE_SIZE when positive.
	QueueSize int
	// Exporter replaces the OTLP exporter the environment describes (for
	// another protocol, or a test). Nil: OTLP, as the variables say.
	Exporter sdktrace.SpanExporter
}

// Pipeline is a tracer provider whose only span processor is the bounded
// queue. Its methods are safe for concurrent use.
type Pipeline struct {
	provider *sdktrace.TracerProvider
	res      *resource.Resource
	disabled bool
	q        *queue
	desc     string
	logf     func(string, ...any)
}

// Stats counts spans through the pipeline.
type Stats struct {
	Ended    int64 // spans ended (sampled ones only: the queue never sees the rest)
	Exported int64 // taken by the collector
	Dropped  int64 // dropped because the queue was full
	Lost     int64 // still queued or in a refused batch when Shutdown's deadline passed
	Failures int64 // export attempts that failed (each batch is retried)
}

// New builds the pipeline from the environment:
//
//   - OTEL_SDK_DISABLED=true: a pipeline whose tracers make no spans.
//   - OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT (required unless
//     Options.Exporter is set), _HEADERS, _TIMEOUT, _COMPRESSION,
//     _CERTIFICATE...: read by the OTLP exporters themselves.
//   - OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL: http/protobuf (default) or grpc.
//   - OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG: read by the SDK
//     (default parentbased_always_on).
//   - OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: the resource, with
//     process.*, host.name and the runtime.
//   - OTEL_BSP_MAX_QUEUE_SIZE (default 8192 spans),
//     OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512), OTEL_BSP_SCHEDULE_DELAY (1000
//     ms), OTEL_BSP_EXPORT_TIMEOUT (10000 ms, one attempt): the queue. Unlike
//     the SDK's batch processor it retries a refused batch, with backoff up
//     to 2 s, instead of dropping it.
func New(ctx context.Context, opts Options) (*Pipeline, error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "spanexport: "+format+"\n", args...)
		}
	}
	if v, _ := strconv.ParseBool(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED"))); v {
		return &Pipeline{disabled: true, desc: "disabled (OTEL_SDK_DISABLED)", logf: logf}, nil
	}
	cfg, err := queueConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if opts.QueueSize > 0 {
		cfg.size = opts.QueueSize
	}
	exp := opts.Exporter
	desc := "custom exporter"
	if exp == nil {
		ep := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
		if ep == "" {
			ep = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		}
		if ep == "" {
			return nil, ErrNoEndpoint
		}
		proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if proto == "" {
			proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		if proto == "" {
			proto = "http/protobuf"
		}
		// The exporters' own retry is off: the queue retries.
		switch proto {
		case "grpc":
			exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
		case "http/protobuf":
			exp, err = otlptracehttp.New(ctx, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
		default:
			return nil, fmt.Errorf("spanexport: OTEL_EXPORTER_OTLP_PROTOCOL=%q: want grpc or http/protobuf", proto)
		}
		if err != nil {
			return nil, fmt.Errorf("spanexport: %w", err)
		}
		desc = fmt.Sprintf("%s (OTLP %s)", ep, proto)
	}
	res, err := newResource(opts.Runtime, opts.Distro)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("spanexport: %w", err)
	}
	q := newQueue(exp, cfg, logf)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(q), sdktrace.WithResource(res))
	return &Pipeline{provider: tp, res: res, q: q, logf: logf,
		desc: fmt.Sprintf("%s, queue of %d spans", desc, cfg.size)}, nil
}

// String says where the spans go.
func (p *Pipeline) String() string { return p.desc }

// Tracer returns a tracer named for the instrumentation (its scope: the
// integration's package path, by OpenTelemetry's convention).
func (p *Pipeline) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	if p.disabled {
		return noop.NewTracerProvider().Tracer(name, opts...)
	}
	return p.provider.Tracer(name, opts...)
}

// TracerProvider returns the provider behind Tracer.
func (p *Pipeline) TracerProvider() trace.TracerProvider {
	if p.disabled {
		return noop.NewTracerProvider()
	}
	return p.provider
}

// Stats returns the counts so far.
func (p *Pipeline) Stats() Stats {
	if p.disabled {
		return Stats{}
	}
	return p.q.stats()
}

// Shutdown exports what is queued and stops the pipeline. It returns by
// ctx's deadline (5 s from now if ctx has none) plus at most a second for
// the worker to stop; what was not delivered by then is counted Lost. The
// totals are logged once. Spans ended after Shutdown are dropped.
func (p *Pipeline) Shutdown(ctx context.Context) (Stats, error) {
	if p.disabled {
		return Stats{}, nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	err := p.provider.Shutdown(ctx)
	select {
	case <-p.q.stopped:
	case <-time.After(time.Second):
	}
	s := p.q.stats()
	p.logf("spans: %d ended, %d exported, %d dropped (queue full), %d not delivered at shutdown; %d export attempts failed",
		s.Ended, s.Exported, s.Dropped, s.Lost, s.Failures)
	return s, err
}

// newResource: the attributes pprofbuild/export gathers for the process
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, process.*, host.name, the
// .NET runtime), plus the SDK's telemetry.sdk.*.
func newResource(runtime, distro string) (*resource.Resource, error) {
	r, err := export.NewResource(runtime)
	if err != nil {
		return nil, err
	}
	var kvs []attribute.KeyValue
	for _, a := range r {
		switch v := a.Value.(type) {
		case int64:
			kvs = append(kvs, attribute.Int64(a.Key, v))
		default:
			kvs = append(kvs, attribute.String(a.Key, fmt.Sprint(v)))
		}
	}
	if distro == "" {
		distro = "clrprof"
	}
	return resource.Merge(resource.NewSchemaless(kvs...), resource.NewSchemaless(
		attribute.String("telemetry.sdk.name", "opentelemetry"), attribute.String("telemetry.sdk.language", "go"),
		attribute.String("telemetry.distro.name", distro)))
}

type queueConfig struct {
	size, batch    int
	delay, timeout time.Duration
}

func queueConfigFromEnv() (queueConfig, error) {
	c := queueConfig{size: DefaultQueueSize, batch: DefaultBatchSize, delay: DefaultScheduleDelay, timeout: DefaultExportTimeout}
	num := func(name string, dst *int) error {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("spanexport: %s=%q: want a positive integer", name, v)
		}
		*dst = n
		return nil
	}
	ms := func(name string, dst *time.Duration) error {
		n := 0
		if err := num(name, &n); err != nil || n == 0 {
			return err
		}
		*dst = time.Duration(n) * time.Millisecond
		return nil
	}
	if err := errors.Join(num("OTEL_BSP_MAX_QUEUE_SIZE", &c.size), num("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", &c.batch),
		ms("OTEL_BSP_SCHEDULE_DELAY", &c.delay), ms("OTEL_BSP_EXPORT_TIMEOUT", &c.timeout)); err != nil {
		return c, err
	}
	// As the specification says: a batch is never larger than the queue.
	c.batch = min(c.batch, c.size)
	return c, nil
}
