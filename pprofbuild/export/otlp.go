package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	profilesv1 "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the "gzip" compressor
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// ProtoVersion names the OTLP profiles protocol buffers this package
// speaks: go.opentelemetry.io/proto/otlp/profiles/v1development and
// .../collector/profiles/v1development at this version. The signal is in
// development: receivers built on another version of it may not read
// what this one sends.
const ProtoVersion = "v0.4.0"

// DevelopmentVersion is the OTLP profiles development version of
// ProtoVersion, sent as the otlp-profiles-development-version gRPC
// metadata and OTLP-Profiles-Development-Version HTTP header that
// receivers check.
const DevelopmentVersion = "1"

// OTLP protocols.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// OTLPOptions configure an OTLP profiles client.
type OTLPOptions struct {
	// Protocol is ProtocolGRPC or ProtocolHTTP (the default).
	Protocol string
	// Endpoint: for HTTP the URL posted to
	// ("http://collector:4318/v1development/profiles"); for gRPC the
	// server's URL ("http://collector:4317"; https for TLS) or host:port.
	Endpoint string
	// Insecure: no TLS for a gRPC endpoint given as host:port.
	Insecure bool
	// Headers are sent with every request (gRPC metadata for gRPC).
	Headers map[string]string
	// Gzip compresses requests.
	Gzip bool
	// Resource is the resource of every profile.
	Resource Resource
	// HTTPClient, if not nil, is used instead of a default one (HTTP).
	HTTPClient *http.Client
}

// OTLP is a client of the OpenTelemetry protocol's profiles signal
// (experimental: the signal is in development; this package speaks the
// protocol buffers of ProtoVersion), over gRPC
// (ProfilesService/Export) or HTTP (POST /v1development/profiles,
// application/x-protobuf). Each pprof profile becomes one OTLP profile per
// sample type (an OTLP profile has one), sharing one dictionary per
// request, under one resource (OTLPOptions.Resource) and the scope
// ScopeName; the samples' labels become attributes, but trace_id and
// span_id together become the sample's link, and the pprof comments the
// profile's attribute pprof.profile.comment. A profile without samples is
// not sent (the Collector's receiver drops a request without samples
// anyway).
type OTLP struct {
	o    OTLPOptions
	grpc collectorv1.ProfilesServiceClient
	conn *grpc.ClientConn
	hc   *http.Client
}

// NewOTLP returns an OTLP client; an unusable endpoint is an error.
func NewOTLP(o OTLPOptions) (*OTLP, error) {
	if o.Protocol == "" {
		o.Protocol = ProtocolHTTP
	}
	c := &OTLP{o: o}
	switch o.Protocol {
	case ProtocolHTTP:
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("OTLP endpoint %q: want an http or https URL", o.Endpoint)
		}
		c.hc = o.HTTPClient
		if c.hc == nil {
			c.hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		}
	case ProtocolGRPC:
		target, secure := o.Endpoint, !o.Insecure
		if strings.Contains(o.Endpoint, "://") {
			u, err := url.Parse(o.Endpoint)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("OTLP endpoint %q: want http://host:port, https://host:port or host:port", o.Endpoint)
			}
			target, secure = u.Host, u.Scheme == "https"
		}
		if target == "" {
			return nil, fmt.Errorf("OTLP endpoint %q: empty", o.Endpoint)
		}
		creds := insecure.NewCredentials()
		if secure {
			creds = credentials.NewTLS(&tls.Config{MinVersion: tls.VersionTLS12})
		}
		// gRPC's defaults suit long-lived services: a connection whose
		// handshake hangs is given up after 20 s, and reconnecting backs
		// off up to 2 minutes, which would keep the queue waiting long
		// after a receiver is back. An exporter retries on its own.
		conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(creds),
			grpc.WithConnectParams(grpc.ConnectParams{
				Backoff:           backoff.Config{BaseDelay: time.Second, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
				MinConnectTimeout: 5 * time.Second,
			}))
		if err != nil {
			return nil, fmt.Errorf("OTLP endpoint %q: %v", o.Endpoint, err)
		}
		c.conn, c.grpc = conn, collectorv1.NewProfilesServiceClient(conn)
	default:
		return nil, fmt.Errorf("OTLP protocol %q: want %s or %s", o.Protocol, ProtocolGRPC, ProtocolHTTP)
	}
	return c, nil
}

func (c *OTLP) String() string { return "otlp " + c.o.Protocol + " " + c.o.Endpoint }

// Close closes the gRPC connection.
func (c *OTLP) Close() error {
	if c.conn != nil {
		return c.conn.Close()
	}
	return nil
}

// Request converts batch into one export request. A profile whose pprof
// bytes do not parse is left out (and counted in the error).
func (c *OTLP) Request(batch []*Profile) (*collectorv1.ExportProfilesServiceRequest, error) {
	d := newDict()
	sp := &profilesv1.ScopeProfiles{Scope: &commonv1.InstrumentationScope{Name: ScopeName}}
	var bad int
	var firstErr error
	for _, p := range batch {
		pp, err := profile.ParseData(p.Pprof)
		if err != nil {
			bad++
			firstErr = err
			continue
		}
		if !p.Start.IsZero() {
			pp.TimeNanos = p.Start.UnixNano()
			if !p.End.IsZero() {
				pp.DurationNanos = p.End.Sub(p.Start).Nanoseconds()
			}
		}
		for k, v := range p.Labels {
			for _, s := range pp.Sample {
				if s.Label == nil {
					s.Label = map[string][]string{}
				}
				s.Label[k] = []string{v}
			}
		}
		sp.Profiles = append(sp.Profiles, toOTLP(d, p.Name, pp)...)
	}
	req := &collectorv1.ExportProfilesServiceRequest{
		ResourceProfiles: []*profilesv1.ResourceProfiles{{Resource: resourceProto(c.o.Resource), ScopeProfiles: []*profilesv1.ScopeProfiles{sp}}},
		Dictionary:       d.d,
	}
	if bad > 0 {
		return req, fmt.Errorf("%d of %d profiles are not pprof: %v", bad, len(batch), firstErr)
	}
	return req, nil
}

// Send exports batch in one request.
func (c *OTLP) Send(ctx context.Context, batch []*Profile) error {
	req, err := c.Request(batch)
	if len(req.ResourceProfiles[0].ScopeProfiles[0].Profiles) == 0 {
		return err // nothing to send: permanent if not pprof, done if empty
	}
	if c.grpc != nil {
		return c.sendGRPC(ctx, req)
	}
	return c.sendHTTP(ctx, req)
}

func (c *OTLP) sendGRPC(ctx context.Context, req *collectorv1.ExportProfilesServiceRequest) error {
	md := metadata.Pairs("otlp-profiles-development-version", DevelopmentVersion)
	for k, v := range c.o.Headers {
		md.Append(strings.ToLower(k), v)
	}
	ctx = metadata.NewOutgoingContext(ctx, md)
	var opts []grpc.CallOption
	if c.o.Gzip {
		opts = append(opts, grpc.UseCompressor("gzip"))
	}
	var trailer metadata.MD
	opts = append(opts, grpc.Trailer(&trailer))
	resp, err := c.grpc.Export(ctx, req, opts...)
	if err == nil {
		return partial(resp)
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.DeadlineExceeded, codes.Aborted,
		codes.Canceled, codes.OutOfRange, codes.DataLoss, codes.Internal, codes.Unknown:
		var after time.Duration
		if v := trailer.Get("retry-after"); len(v) > 0 {
			after = retryAfter(v[0], time.Now())
		}
		return Retry(err, after)
	}
	return err
}

func (c *OTLP) sendHTTP(ctx context.Context, req *collectorv1.ExportProfilesServiceRequest) error {
	body, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	if c.o.Gzip {
		var b bytes.Buffer
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(&b)
		zw.Write(body)
		zw.Close()
		gzipWriters.Put(zw)
		body = b.Bytes()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.o.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range c.o.Headers {
		hr.Header.Set(k, v)
	}
	hr.Header.Set("Content-Type", "application/x-protobuf")
	hr.Header.Set("OTLP-Profiles-Development-Version", DevelopmentVersion)
	if c.o.Gzip {
		hr.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		return Retry(err, 0)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode/100 == 2:
		var r collectorv1.ExportProfilesServiceResponse
		if proto.Unmarshal(rb, &r) != nil {
			return nil // accepted; an unreadable answer says nothing more
		}
		return partial(&r)
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode >= 500:
		return Retry(fmt.Errorf("OTLP HTTP %s", resp.Status), retryAfter(resp.Header.Get("Retry-After"), time.Now()))
	}
	return fmt.Errorf("OTLP HTTP %s: %q", resp.Status, rb)
}

// partial is a PartialError if the response says profiles were rejected.
func partial(r *collectorv1.ExportProfilesServiceResponse) error {
	if ps := r.GetPartialSuccess(); ps != nil && (ps.RejectedProfiles > 0 || ps.ErrorMessage != "") {
		return &PartialError{Rejected: ps.RejectedProfiles, Message: ps.ErrorMessage}
	}
	return nil
}

// gzipWriters hold compressors at gzip.BestSpeed: at the default level
// compressing a request took about half of the CPU time of sending it
// (BenchmarkSend), for a few percent smaller requests.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}
