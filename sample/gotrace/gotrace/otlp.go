package gotrace

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/pprofbuild/export"
	"github.com/clrprof/clrprof/profiler"
)

const (
	batchSize     = 512
	batchInterval = time.Second
	flushTimeout  = 5 * time.Second
	maxBackoff    = 2 * time.Second
)

func endpointSet() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// otlp is the span pipeline: the SDK's TracerProvider with queue as its
// only span processor.
type otlp struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	q        *queue
	protocol string
}

func (o *otlp) String() string {
	ep := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if ep == "" {
		ep = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	return fmt.Sprintf("%s (OTLP %s, queue of %d spans)", ep, o.protocol, cap(o.q.ch))
}

func newOTLP(info *profiler.Info) (*otlp, error) {
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto == "" {
		proto = "http/protobuf"
	}
	ctx := context.Background()
	var exp sdktrace.SpanExporter
	var err error
	// The exporters read the endpoint, headers, timeout, TLS and
	// compression from the standard variables themselves. Their own retry
	// is off: the queue retries, without a time limit.
	switch proto {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	case "http/protobuf":
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: gotrace speaks grpc and http/protobuf", proto)
	}
	if err != nil {
		return nil, err
	}
	res, err := newResource(pprofbuild.RuntimeVersion(info))
	if err != nil {
		return nil, err
	}
	size := 8192
	if v := os.Getenv("GOTRACE_QUEUE"); v != "" {
		if size, err = strconv.Atoi(v); err != nil || size < 1 {
			return nil, fmt.Errorf("GOTRACE_QUEUE=%q: want a positive number of spans", v)
		}
	}
	q := newQueue(exp, size)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(q), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()))
	return &otlp{provider: tp, tracer: tp.Tracer("github.com/clrprof/clrprof/sample/gotrace"), q: q, protocol: proto}, nil
}

// newResource: the attributes pprofbuild/export gathers for the process
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, process.*, host.name, the
// .NET runtime), plus the SDK's telemetry.sdk.*.
func newResource(runtime string) (*resource.Resource, error) {
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
	return resource.Merge(resource.NewSchemaless(kvs...), resource.NewSchemaless(
		attribute.String("telemetry.sdk.name", "opentelemetry"), attribute.String("telemetry.sdk.language", "go"),
		attribute.String("telemetry.distro.name", "clrprof-gotrace")))
}

func (o *otlp) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	err := o.provider.Shutdown(ctx)
	select {
	case <-o.q.stopped:
	case <-time.After(time.Second):
	}
	s := o.q.stats()
	logf("spans: %d ended, %d exported, %d dropped (queue full), %d not delivered at shutdown; %d export attempts failed", s.ended, s.exported, s.dropped, s.lost, s.failures)
	if err != nil {
		logf("OTLP shutdown: %v", err)
	}
}

// queue is a span processor with a bounded queue: OnEnd never blocks (a
// full queue drops the span and counts it); one goroutine exports batches
// and retries a batch the collector did not take until it does.
type queue struct {
	exp sdktrace.SpanExporter
	ch  chan sdktrace.ReadOnlySpan

	ended, exported, dropped, lost, failures atomic.Int64
	lastDropLog                              atomic.Int64 // unix ns

	closing  chan struct{}
	stopped  chan struct{}
	once     sync.Once
	deadline atomic.Int64 // unix ns: stop retrying after it (set at shutdown)
}

type queueStats struct{ ended, exported, dropped, lost, failures int64 }

func newQueue(exp sdktrace.SpanExporter, size int) *queue {
	q := &queue{exp: exp, ch: make(chan sdktrace.ReadOnlySpan, size), closing: make(chan struct{}), stopped: make(chan struct{})}
	go q.run()
	return q
}

func (q *queue) stats() queueStats {
	return queueStats{q.ended.Load(), q.exported.Load(), q.dropped.Load(), q.lost.Load(), q.failures.Load()}
}

func (q *queue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (q *queue) OnEnd(s sdktrace.ReadOnlySpan) {
	q.ended.Add(1)
	select {
	case q.ch <- s:
	default:
		n := q.dropped.Add(1)
		now := time.Now().UnixNano()
		if last := q.lastDropLog.Load(); now-last > int64(10*time.Second) && q.lastDropLog.CompareAndSwap(last, now) {
			logf("the span queue is full (%d spans; the collector is unreachable or slow): dropping spans, %d so far", cap(q.ch), n)
		}
	}
}

func (q *queue) ForceFlush(context.Context) error { return nil }

func (q *queue) Shutdown(ctx context.Context) error {
	q.once.Do(func() {
		dl, ok := ctx.Deadline()
		if !ok {
			dl = time.Now().Add(flushTimeout)
		}
		// Leave the exporter's own Shutdown a moment after the last try.
		q.deadline.Store(dl.Add(-250 * time.Millisecond).UnixNano())
		close(q.closing)
	})
	select {
	case <-q.stopped:
	case <-ctx.Done():
	}
	return q.exp.Shutdown(ctx)
}

func (q *queue) run() {
	defer close(q.stopped)
	batch := make([]sdktrace.ReadOnlySpan, 0, batchSize)
	timer := time.NewTimer(batchInterval)
	defer timer.Stop()
	for {
		flush := false
		select {
		case s := <-q.ch:
			batch = append(batch, s)
			flush = len(batch) >= batchSize
		case <-timer.C:
			flush = true
			timer.Reset(batchInterval)
		case <-q.closing:
			// Drain what is queued, then export it all.
			for {
				select {
				case s := <-q.ch:
					batch = append(batch, s)
					if len(batch) >= batchSize {
						if !q.export(batch) {
							q.lost.Add(int64(len(q.ch)))
							return
						}
						batch = batch[:0]
					}
					continue
				default:
				}
				break
			}
			if len(batch) > 0 {
				q.export(batch)
			}
			return
		}
		if flush && len(batch) > 0 {
			q.export(batch)
			batch = batch[:0]
		}
	}
}

// export sends a batch until the collector takes it; after Shutdown began
// it gives up at the shutdown deadline (the batch is counted lost).
func (q *queue) export(batch []sdktrace.ReadOnlySpan) bool {
	backoff := 100 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if dl := q.deadline.Load(); dl != 0 {
			ctx, cancel = context.WithDeadline(context.Background(), time.Unix(0, dl))
		}
		err := q.exp.ExportSpans(ctx, batch)
		cancel()
		if err == nil {
			q.exported.Add(int64(len(batch)))
			return true
		}
		if q.failures.Add(1) == 1 {
			logf("export failed (retrying, spans queue meanwhile): %v", trimErr(err))
		}
		if dl := q.deadline.Load(); dl != 0 && time.Now().UnixNano() >= dl {
			q.lost.Add(int64(len(batch)))
			logf("export failed at shutdown: %v", trimErr(err))
			return false
		}
		select {
		case <-time.After(backoff):
		case <-q.closing:
			// Shutting down: try again at once, until the deadline.
			time.Sleep(50 * time.Millisecond)
		}
		if backoff *= 2; backoff > maxBackoff {
			backoff = maxBackoff
		}
	}
}

func trimErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
