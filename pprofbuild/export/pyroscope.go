package export

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/google/uuid"
	pushv1 "github.com/grafana/pyroscope/api/gen/proto/go/push/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/push/v1/pushv1connect"
	typesv1 "github.com/grafana/pyroscope/api/gen/proto/go/types/v1"
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
// /push.v1.PusherService/Push, the connect protocol, the protobuf types
// of github.com/grafana/pyroscope/api): one series per profile, labelled
// __name__ (Profile.Name), service_name and the resource's other
// attributes and the profile's own labels, whose one sample is the pprof
// bytes as raw profile.
type Pyroscope struct {
	o      PyroscopeOptions
	url    string
	client pushv1connect.PusherServiceClient
	labels []*typesv1.LabelPair
}

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
		c := *o.HTTPClient
		hc = &c
	}
	if hc.Transport == nil {
		hc.Transport = http.DefaultTransport
	}
	// connect drops the response's headers when the error body is not
	// its own (a proxy's 429): keep Retry-After on the way.
	hc.Transport = retryAfterTransport{hc.Transport}
	var opts []connect.ClientOption
	if o.Gzip {
		opts = append(opts, connect.WithSendGzip())
	}
	p := &Pyroscope{o: o, url: base, client: pushv1connect.NewPusherServiceClient(hc, base, opts...)}
	p.labels = append(p.labels, &typesv1.LabelPair{Name: "service_name", Value: o.Resource.ServiceName()})
	for _, a := range o.Resource {
		switch a.Key {
		case "service.name", "process.command_line", "process.executable.path":
			continue
		}
		p.labels = append(p.labels, &typesv1.LabelPair{Name: LabelName(a.Key), Value: attrString(a.Value)})
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
	req := &pushv1.PushRequest{}
	for _, pr := range batch {
		name := pr.Name
		if n, ok := p.o.Names[name]; ok {
			name = n
		}
		ls := append([]*typesv1.LabelPair{{Name: "__name__", Value: name}}, p.labels...)
		for k, v := range pr.Labels {
			ls = append(ls, &typesv1.LabelPair{Name: LabelName(k), Value: v})
		}
		sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
		req.Series = append(req.Series, &pushv1.RawProfileSeries{
			Labels:  ls,
			Samples: []*pushv1.RawSample{{RawProfile: pr.Pprof, ID: uuid.NewString()}},
		})
	}
	creq := connect.NewRequest(req)
	h := creq.Header()
	for k, v := range p.o.Headers {
		h.Set(k, v)
	}
	switch {
	case p.o.BearerToken != "":
		h.Set("Authorization", "Bearer "+p.o.BearerToken)
	case p.o.BasicUser != "" || p.o.BasicPassword != "":
		r := http.Request{Header: http.Header{}}
		r.SetBasicAuth(p.o.BasicUser, p.o.BasicPassword)
		h.Set("Authorization", r.Header.Get("Authorization"))
	}
	if p.o.TenantID != "" {
		h.Set("X-Scope-OrgID", p.o.TenantID)
	}
	var ra retryAfterValue
	_, err := p.client.Push(context.WithValue(ctx, retryAfterKey{}, &ra), creq)
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return Retry(err, 0)
	}
	switch ce.Code() {
	case connect.CodeUnavailable, connect.CodeResourceExhausted, connect.CodeDeadlineExceeded,
		connect.CodeAborted, connect.CodeInternal, connect.CodeUnknown, connect.CodeCanceled:
		v := ce.Meta().Get("Retry-After")
		if v == "" {
			v = ra.get()
		}
		return Retry(err, retryAfter(v, time.Now()))
	}
	return err
}

type retryAfterKey struct{}

type retryAfterValue struct {
	mu sync.Mutex
	v  string
}

func (r *retryAfterValue) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v
}

// retryAfterTransport keeps the Retry-After header of a response for the
// request's retryAfterValue.
type retryAfterTransport struct{ rt http.RoundTripper }

func (t retryAfterTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(r)
	if resp != nil {
		if v := resp.Header.Get("Retry-After"); v != "" {
			if ra, ok := r.Context().Value(retryAfterKey{}).(*retryAfterValue); ok {
				ra.mu.Lock()
				ra.v = v
				ra.mu.Unlock()
			}
		}
	}
	return resp, err
}
