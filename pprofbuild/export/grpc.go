package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// grpcClient makes unary gRPC calls over net/http's HTTP/2 client: HTTP/2
// with prior knowledge for an insecure target, over TLS otherwise. A
// unary call is one POST whose body is the request message behind a
// five-byte prefix (compressed flag, big-endian length), answered by the
// response message the same way and the call's status in the trailers
// (grpc-status, grpc-message), or in the headers when there is no
// message. That is all the OTLP exporter needs of gRPC; grpc-go would add
// about 2.5 MiB to every profiler library that links the exporter.
type grpcClient struct {
	url string
	tr  *http.Transport
	hc  *http.Client

	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

// trackedConn is a connection the client dialed, so that a failed call
// can close it: net/http keeps an HTTP/2 connection whose calls timed out
// in its pool (it has streams it reset and has had no answer to), and
// would send the next call on it. Closing it makes the next call dial.
type trackedConn struct {
	net.Conn
	g *grpcClient
}

func (c *trackedConn) Close() error {
	c.g.mu.Lock()
	delete(c.g.conns, c)
	c.g.mu.Unlock()
	return c.Conn.Close()
}

func (g *grpcClient) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, g: g}
	g.mu.Lock()
	g.conns[tc] = struct{}{}
	g.mu.Unlock()
	return tc, nil
}

// closeConns closes every connection the client has dialed.
func (g *grpcClient) closeConns() {
	g.mu.Lock()
	cs := make([]*trackedConn, 0, len(g.conns))
	for c := range g.conns {
		cs = append(cs, c)
	}
	g.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
	g.tr.CloseIdleConnections()
}

// newGRPC returns a client of method (/package.Service/Method) at target
// (host:port), over TLS configured by tc (nil: the system's certificates)
// if secure.
func newGRPC(target, method string, secure bool, tc *tls.Config) *grpcClient {
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		tc = tc.Clone()
	}
	var p http.Protocols
	scheme := "http"
	if secure {
		p.SetHTTP2(true)
		scheme = "https"
	} else {
		p.SetUnencryptedHTTP2(true)
	}
	g := &grpcClient{conns: map[*trackedConn]struct{}{}}
	g.tr = &http.Transport{
		// a connection whose handshake hangs is given up after 5 s
		DialContext:         g.dial,
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: 5 * time.Second,
		Protocols:           &p,
		// No pings: grpc-go's servers count a ping on a connection without
		// a call as abuse (and close it after three); an exporter's
		// connection is idle most of the time. A connection that stops
		// answering fails the call at its deadline, and call then closes
		// it, so the next call dials anew.
		IdleConnTimeout: 90 * time.Second,
	}
	g.url, g.hc = scheme+"://"+target+method, &http.Client{Transport: g.tr}
	return g
}

func (g *grpcClient) close() { g.closeConns() }

// grpcStatus is a call's status other than OK.
type grpcStatus struct {
	Code    int
	Message string
}

var grpcCodeNames = [...]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
	"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

func (s *grpcStatus) Error() string {
	name := "Code(" + strconv.Itoa(s.Code) + ")"
	if s.Code >= 0 && s.Code < len(grpcCodeNames) {
		name = grpcCodeNames[s.Code]
	}
	return fmt.Sprintf("OTLP gRPC %s: %s", name, s.Message)
}

// gRPC status codes this client names.
const (
	codeCanceled          = 1
	codeUnknown           = 2
	codeDeadlineExceeded  = 4
	codePermissionDenied  = 7
	codeResourceExhausted = 8
	codeAborted           = 10
	codeOutOfRange        = 11
	codeUnimplemented     = 12
	codeInternal          = 13
	codeUnavailable       = 14
	codeDataLoss          = 15
	codeUnauthenticated   = 16
)

// The status codes worth retrying: the ones OTLP's specification names
// (Canceled, DeadlineExceeded, Aborted, OutOfRange, Unavailable,
// DataLoss), ResourceExhausted (which the specification retries only when
// the server says when; retried always, as the grpc-go client before this
// one was), and Unknown and Internal, which a broken connection or a
// proxy gives.
func (s *grpcStatus) retryable() bool {
	switch s.Code {
	case codeCanceled, codeUnknown, codeDeadlineExceeded, codeResourceExhausted, codeAborted,
		codeOutOfRange, codeInternal, codeUnavailable, codeDataLoss:
		return true
	}
	return false
}

// httpToGRPC maps the HTTP status of a response that is not gRPC's (a
// proxy's) to a gRPC code, as gRPC's HTTP/2 protocol says.
func httpToGRPC(status int) int {
	switch status {
	case http.StatusBadRequest:
		return codeInternal
	case http.StatusUnauthorized:
		return codeUnauthenticated
	case http.StatusForbidden:
		return codePermissionDenied
	case http.StatusNotFound:
		return codeUnimplemented
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return codeUnavailable
	}
	return codeUnknown
}

// maxResponse bounds the response message read.
const maxResponse = 4 << 20

// call sends msg (gzip-compressed if gz) with the metadata md and returns
// the response message. An error worth retrying is a *RetryError.
func (g *grpcClient) call(ctx context.Context, msg []byte, gz bool, md map[string]string) ([]byte, error) {
	flag := byte(0)
	if gz {
		msg, flag = gzipped(msg), 1
	}
	frame := make([]byte, 5, 5+len(msg))
	frame[0] = flag
	binary.BigEndian.PutUint32(frame[1:], uint32(len(msg)))
	frame = append(frame, msg...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(frame))
	if err != nil {
		return nil, err
	}
	for k, v := range md {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Te", "trailers")
	req.Header.Set("User-Agent", "clrprof-otlp")
	if gz {
		req.Header.Set("Grpc-Encoding", "gzip")
	}
	if d, ok := ctx.Deadline(); ok {
		ms := max(time.Until(d).Milliseconds(), 1)
		req.Header.Set("Grpc-Timeout", strconv.FormatInt(min(ms, 99999999), 10)+"m")
	}
	resp, err := g.hc.Do(req)
	if err != nil {
		// the connection may hang: make the next call dial anew
		g.closeConns()
		return nil, Retry(err, 0)
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponse+5))
	if resp.StatusCode != http.StatusOK {
		st := &grpcStatus{Code: httpToGRPC(resp.StatusCode), Message: "HTTP " + resp.Status}
		return nil, st.asError(resp.Header.Get("Retry-After"))
	}
	if rerr != nil {
		g.closeConns()
		return nil, Retry(rerr, 0)
	}
	// the status is in the trailers, or in the headers of a response
	// without a message (Trailers-Only)
	statusHdr := resp.Trailer
	if statusHdr.Get("Grpc-Status") == "" {
		statusHdr = resp.Header
	}
	code, err := strconv.Atoi(statusHdr.Get("Grpc-Status"))
	if err != nil {
		st := &grpcStatus{Code: codeInternal, Message: fmt.Sprintf("response without a grpc-status (%q)", statusHdr.Get("Grpc-Status"))}
		return nil, st.asError("")
	}
	if code != 0 {
		m, err := url.PathUnescape(statusHdr.Get("Grpc-Message"))
		if err != nil {
			m = statusHdr.Get("Grpc-Message")
		}
		st := &grpcStatus{Code: code, Message: m}
		return nil, st.asError(statusHdr.Get("Retry-After"))
	}
	if len(body) == 0 {
		return nil, nil
	}
	if len(body) < 5 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
		return nil, errors.New("OTLP gRPC: a response message that is cut short or too long")
	}
	out := body[5:]
	if body[0] == 1 {
		if !strings.EqualFold(resp.Header.Get("Grpc-Encoding"), "gzip") {
			return nil, fmt.Errorf("OTLP gRPC: a response compressed with %q", resp.Header.Get("Grpc-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(out))
		if err != nil {
			return nil, err
		}
		if out, err = io.ReadAll(io.LimitReader(zr, maxResponse)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *grpcStatus) asError(retryAfterHeader string) error {
	if !s.retryable() {
		return s
	}
	return Retry(s, retryAfter(retryAfterHeader, time.Now()))
}
