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
	// gRPC goes to the server directly, HTTP/2 with prior knowledge
	// without TLS; HTTP through the proxy HTTPS_PROXY or HTTP_PROXY names
	// (NO_PROXY) unless HTTPClient says otherwise.
	Endpoint string
	// Insecure: no TLS for a gRPC endpoint given as host:port.
	Insecure bool
	// Headers are sent with every request (gRPC metadata for gRPC).
	Headers map[string]string
	// Gzip compresses requests.
	Gzip bool
	// Resource is the resource of every profile.
	Resource Resource
	// TLS, if not nil, configures TLS (the certificates trusted, a
	// client certificate) for an https endpoint, gRPC or HTTP; nil means
	// the system's certificates, TLS 1.2 at least. For HTTP, HTTPClient
	// wins over it.
	TLS *tls.Config
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
	grpc *grpcClient
	hc   *http.Client
}

// exportMethod is the gRPC method of OTLP's profiles service.
const exportMethod = "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export"

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
			tr := http.DefaultTransport.(*http.Transport).Clone()
			if o.TLS != nil {
				tr.TLSClientConfig = o.TLS.Clone()
			}
			c.hc = &http.Client{Transport: tr}
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
		c.grpc = newGRPC(target, exportMethod, secure, o.TLS)
	default:
		return nil, fmt.Errorf("OTLP protocol %q: want %s or %s", o.Protocol, ProtocolGRPC, ProtocolHTTP)
	}
	return c, nil
}

func (c *OTLP) String() string { return "otlp " + c.o.Protocol + " " + c.o.Endpoint }

// Close closes the gRPC connections.
func (c *OTLP) Close() error {
	if c.grpc != nil {
		c.grpc.close()
	}
	return nil
}

// Request converts batch into one export request, encoded: an
// opentelemetry.proto.collector.profiles.v1development
// ExportProfilesServiceRequest of ProtoVersion, as Send sends it. A
// profile whose pprof bytes do not parse is left out (and counted in the
// error).
func (c *OTLP) Request(batch []*Profile) ([]byte, error) {
	b, _, err := c.request(batch)
	return b, err
}

// request is Request, and the number of OTLP profiles in it.
func (c *OTLP) request(batch []*Profile) ([]byte, int, error) {
	d := newDict()
	var profiles []*wireProfile
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
		profiles = append(profiles, toOTLP(d, p.Name, pp)...)
	}
	b := marshalRequest(resourceAttrs(c.o.Resource), ScopeName, profiles, d.d)
	if bad > 0 {
		return b, len(profiles), fmt.Errorf("%d of %d profiles are not pprof: %v", bad, len(batch), firstErr)
	}
	return b, len(profiles), nil
}

// Send exports batch in one request.
func (c *OTLP) Send(ctx context.Context, batch []*Profile) error {
	req, n, err := c.request(batch)
	if n == 0 {
		return err // nothing to send: permanent if not pprof, done if empty
	}
	if c.grpc != nil {
		return c.sendGRPC(ctx, req)
	}
	return c.sendHTTP(ctx, req)
}

func (c *OTLP) sendGRPC(ctx context.Context, req []byte) error {
	md := map[string]string{"otlp-profiles-development-version": DevelopmentVersion}
	for k, v := range c.o.Headers {
		md[strings.ToLower(k)] = v
	}
	resp, err := c.grpc.call(ctx, req, c.o.Gzip, md)
	if err != nil {
		return err
	}
	return partial(resp)
}

func (c *OTLP) sendHTTP(ctx context.Context, body []byte) error {
	if c.o.Gzip {
		body = gzipped(body)
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
		return partial(rb)
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode >= 500:
		return Retry(fmt.Errorf("OTLP HTTP %s", resp.Status), retryAfter(resp.Header.Get("Retry-After"), time.Now()))
	}
	return fmt.Errorf("OTLP HTTP %s: %q", resp.Status, rb)
}

// partial is a PartialError if the response (an
// ExportProfilesServiceResponse) says profiles were rejected. The export
// was accepted: an unreadable answer says nothing more.
func partial(resp []byte) error {
	rejected, msg, err := parseResponse(resp)
	if err == nil && (rejected > 0 || msg != "") {
		return &PartialError{Rejected: rejected, Message: msg}
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

// gzipped compresses b with a pooled writer.
func gzipped(b []byte) []byte {
	var out bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	zw.Reset(&out)
	zw.Write(b)
	zw.Close()
	gzipWriters.Put(zw)
	return out.Bytes()
}
