package export

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protowire"
)

// PyroscopeOptions configure a Pyroscope client.
type PyroscopeOptions struct {
	// URL is the server's base URL ("http://pyroscope:4040"); the client
	// posts to URL + "/push.v1.PusherService/Push". User information in
	// it ("https://user:password@host") is used as basic auth.
	URL string
	// BasicUser and BasicPassword, or BearerToken: the Authorization
	// header (none when all are empty).
	BasicUser, BasicPassword string
	BearerToken              string
	// TenantID is sent as X-Scope-OrgID (multi-tenant Pyroscope, Grafana
	// Cloud), when not empty.
	TenantID string
	// Headers are sent with every request.
	Headers map[string]string
	// Resource gives the series' labels: service_name (from
	// service.name) and every other attribute, its key with characters
	// other than letters, digits and '_' replaced by '_'
	// (process.runtime.version becomes process_runtime_version), except
	// process.command_line and process.executable.path.
	Resource Resource
	// Gzip compresses requests (Content-Encoding: gzip). The profiles
	// themselves are sent as given (pprofbuild.Write gzips them).
	Gzip bool
	// HTTPClient, if not nil, is used instead of a default one.
	HTTPClient *http.Client
	// Names maps a Profile.Name to the __name__ of its series, where
	// Pyroscope's convention differs ({"cpu": "process_cpu"}: Grafana's
	// default profile type is process_cpu:cpu:nanoseconds:cpu:nanoseconds);
	// a name not in it is used as it is.
	Names map[string]string
}

// Pyroscope is a client of Pyroscope's push API (POST
// /push.v1.PusherService/Push in the connect protocol's unary form, the
// message push.v1.PushRequest of github.com/grafana/pyroscope/api): one
// series per profile, labelled __name__ (Profile.Name), service_name and
// the resource's other attributes and the profile's own labels, whose one
// sample is the pprof bytes as raw profile.
//
// The request is encoded here (protowire) and sent with net/http rather
// than through the API module's generated connect client: that module's
// protobuf types import gnostic's OpenAPI models and a YAML parser, which
// made a profiler's library 3.3 MB larger and 2.4 MiB more of it resident
// in the profiled process (contprof on the shop, 2026-12-06). The tests
// send to the API module's own connect handler (internal/exporttest).
type Pyroscope struct {
	o      PyroscopeOptions
	url    string
	hc     *http.Client
	labels []labelPair
}

type labelPair struct{ name, value string }

// NewPyroscope returns a Pyroscope client; an unusable URL is an error.
func NewPyroscope(o PyroscopeOptions) (*Pyroscope, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("pyroscope URL %q: %v", o.URL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("pyroscope URL %q: want http://host:port or https://host:port", o.URL)
	}
	if u.User != nil && o.BasicUser == "" && o.BearerToken == "" {
		o.BasicUser = u.User.Username()
		o.BasicPassword, _ = u.User.Password()
	}
	u.User = nil
	base := strings.TrimSuffix(u.String(), "/")
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	if o.HTTPClient != nil {
		hc = o.HTTPClient
	}
	p := &Pyroscope{o: o, url: base, hc: hc}
	p.labels = append(p.labels, labelPair{"service_name", o.Resource.ServiceName()})
	for _, a := range o.Resource {
		switch a.Key {
		case "service.name", "process.command_line", "process.executable.path":
			continue
		}
		p.labels = append(p.labels, labelPair{LabelName(a.Key), attrString(a.Value)})
	}
	return p, nil
}

// LabelName makes k a Prometheus-style label name, as Pyroscope wants
// them: characters other than ASCII letters, digits and '_' become '_',
// and a leading digit gets a '_' before it.
func LabelName(k string) string {
	b := []byte(k)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

func (p *Pyroscope) String() string { return "pyroscope " + p.url }

// Send pushes batch in one request.
func (p *Pyroscope) Send(ctx context.Context, batch []*Profile) error {
	body := p.encode(batch)
	h := http.Header{}
	h.Set("Content-Type", "application/proto")
	h.Set("Connect-Protocol-Version", "1")
	if p.o.Gzip {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(body)
		w.Close()
		body = z.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	if dl, ok := ctx.Deadline(); ok {
		h.Set("Connect-Timeout-Ms", strconv.FormatInt(max(1, time.Until(dl).Milliseconds()), 10))
	}
	for k, v := range p.o.Headers {
		h.Set(k, v)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url+"/push.v1.PusherService/Push", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = h
	switch {
	case p.o.BearerToken != "":
		h.Set("Authorization", "Bearer "+p.o.BearerToken)
	case p.o.BasicUser != "" || p.o.BasicPassword != "":
		req.SetBasicAuth(p.o.BasicUser, p.o.BasicPassword)
	}
	if p.o.TenantID != "" {
		h.Set("X-Scope-OrgID", p.o.TenantID)
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return Retry(err, 0)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	code, text := connectError(resp, msg)
	err = fmt.Errorf("pyroscope: %s (HTTP %d): %s", code, resp.StatusCode, text)
	switch code {
	case "unavailable", "resource_exhausted", "deadline_exceeded", "aborted", "internal", "unknown", "canceled":
		return Retry(err, retryAfter(resp.Header.Get("Retry-After"), time.Now()))
	}
	return err
}

// encode writes batch as a push.v1.PushRequest: series (1) of
// RawProfileSeries, each with labels (1: types.v1.LabelPair, name 1 and
// value 2) and one sample (2: RawSample, raw_profile 1 and ID 2).
func (p *Pyroscope) encode(batch []*Profile) []byte {
	var req, series, msg []byte
	for _, pr := range batch {
		name := pr.Name
		if n, ok := p.o.Names[name]; ok {
			name = n
		}
		ls := append([]labelPair{{"__name__", name}}, p.labels...)
		for k, v := range pr.Labels {
			ls = append(ls, labelPair{LabelName(k), v})
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].name < ls[j].name })
		series = series[:0]
		for _, l := range ls {
			msg = protowire.AppendString(protowire.AppendTag(msg[:0], 1, protowire.BytesType), l.name)
			msg = protowire.AppendString(protowire.AppendTag(msg, 2, protowire.BytesType), l.value)
			series = protowire.AppendBytes(protowire.AppendTag(series, 1, protowire.BytesType), msg)
		}
		msg = protowire.AppendBytes(protowire.AppendTag(msg[:0], 1, protowire.BytesType), pr.Pprof)
		msg = protowire.AppendString(protowire.AppendTag(msg, 2, protowire.BytesType), uuid.NewString())
		series = protowire.AppendBytes(protowire.AppendTag(series, 2, protowire.BytesType), msg)
		req = protowire.AppendBytes(protowire.AppendTag(req, 1, protowire.BytesType), series)
	}
	return req
}

// connectError reads the code and message of a connect error response:
// its JSON body ({"code": "unavailable", "message": ...}), or, when the
// body is not one (a proxy's answer), the code the connect protocol gives
// the HTTP status.
func connectError(resp *http.Response, body []byte) (code, msg string) {
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/json" {
		var e struct{ Code, Message string }
		if json.Unmarshal(body, &e) == nil && e.Code != "" {
			return e.Code, e.Message
		}
	}
	msg = strings.TrimSpace(string(body))
	switch resp.StatusCode {
	case http.StatusBadRequest:
		return "internal", msg
	case http.StatusUnauthorized:
		return "unauthenticated", msg
	case http.StatusForbidden:
		return "permission_denied", msg
	case http.StatusNotFound:
		return "unimplemented", msg
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return "unavailable", msg
	}
	return "unknown", msg
}
