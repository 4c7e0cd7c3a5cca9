package export_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrprof/clrprof/pprofbuild/export"
	"github.com/google/pprof/profile"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // the server reads gzip requests
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// The request is protobuf's canonical encoding: decoded by the generated
// types and encoded again (deterministically) it gives the same bytes,
// so every field has the number and wire type ProtoVersion's .proto
// gives it.
func TestOTLPRequestCanonical(t *testing.T) {
	res := append(resource(t), export.Attr{Key: "empty", Value: ""})
	c, err := export.NewOTLP(export.OTLPOptions{Endpoint: "http://127.0.0.1:1/v1development/profiles", Resource: res})
	if err != nil {
		t.Fatal(err)
	}
	var batch []*export.Profile
	for i, k := range kinds {
		ep, pp := testProfile(t, k, i+1)
		// a mapping with a build ID, a line with a column, multi-valued labels
		pp.Mapping = []*profile.Mapping{{ID: 1, Start: 0x1000, Limit: 0x9000, Offset: 0x200, File: "/lib/x.so", BuildID: "abc123"}}
		for _, l := range pp.Location {
			l.Mapping = pp.Mapping[0]
			l.Address = 0x1000 + l.ID
			if len(l.Line) > 0 {
				l.Line[0].Column = 7
			}
		}
		pp.Sample[0].Label = map[string][]string{"tags": {"a", "b"}}
		pp.Sample[0].NumLabel = map[string][]int64{"n": {-1, 2}}
		var b bytes.Buffer
		if err := pp.Write(&b); err != nil {
			t.Fatal(err)
		}
		ep.Pprof = b.Bytes()
		batch = append(batch, ep)
	}
	b, err := c.Request(batch)
	if err != nil {
		t.Fatal(err)
	}
	var req collectorv1.ExportProfilesServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	again, err := proto.MarshalOptions{Deterministic: true}.Marshal(&req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, again) {
		t.Fatalf("encoded %d bytes; the generated types encode what they decoded of them as %d bytes", len(b), len(again))
	}
	d := req.Dictionary
	ps := req.ResourceProfiles[0].ScopeProfiles[0].Profiles
	if len(ps) != 2*len(kinds) {
		t.Fatalf("%d profiles", len(ps))
	}
	var build, neg, arr bool
	for _, a := range d.AttributeTable {
		switch key := d.StringTable[a.KeyStrindex]; key {
		case "process.executable.build_id.gnu":
			build = a.Value.GetStringValue() == "abc123"
		case "n":
			vs := a.Value.GetArrayValue().GetValues()
			neg = len(vs) == 2 && vs[0].GetIntValue() == -1 && vs[1].GetIntValue() == 2
		case "tags":
			vs := a.Value.GetArrayValue().GetValues()
			arr = len(vs) == 2 && vs[1].GetStringValue() == "b"
		}
	}
	var empty bool // a oneof member is written even when it holds ""
	for _, kv := range req.ResourceProfiles[0].Resource.Attributes {
		if kv.Key == "empty" {
			_, empty = kv.Value.GetValue().(*commonv1.AnyValue_StringValue)
		}
	}
	if !build || !neg || !arr || !empty {
		t.Errorf("attributes: build ID %v, negative ints %v, string array %v, empty string %v", build, neg, arr, empty)
	}
	if p := ps[0]; p.TimeUnixNano != uint64(batch[0].Start.UnixNano()) || p.DurationNano != uint64(time.Minute) || len(p.ProfileId) != 16 {
		t.Errorf("profile 0: time %d, duration %d, id %x", p.TimeUnixNano, p.DurationNano, p.ProfileId)
	}
	if got := req.ResourceProfiles[0].ScopeProfiles[0].Scope.GetName(); got != export.ScopeName {
		t.Errorf("scope %q", got)
	}
}

// A ProfilesService served by grpc-go, answering as answer says.
type profilesServer struct {
	collectorv1.UnimplementedProfilesServiceServer
	mu     sync.Mutex
	answer func(ctx context.Context, req *collectorv1.ExportProfilesServiceRequest) (*collectorv1.ExportProfilesServiceResponse, error)
	md     []metadata.MD
	dl     []time.Duration
}

func (s *profilesServer) Export(ctx context.Context, req *collectorv1.ExportProfilesServiceRequest) (*collectorv1.ExportProfilesServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	d, _ := ctx.Deadline()
	s.mu.Lock()
	s.md = append(s.md, md)
	s.dl = append(s.dl, time.Until(d))
	s.mu.Unlock()
	return s.answer(ctx, req)
}

func startGRPC(t *testing.T, s *profilesServer) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	collectorv1.RegisterProfilesServiceServer(srv, s)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return "http://" + ln.Addr().String()
}

// The gRPC client against grpc-go's server: metadata, compression and
// deadline as sent, a partial success, statuses worth retrying (with the
// trailer retry-after) and not.
func TestOTLPGRPCStatus(t *testing.T) {
	s := &profilesServer{}
	ep := startGRPC(t, s)
	c, err := export.NewOTLP(export.OTLPOptions{Protocol: export.ProtocolGRPC, Endpoint: ep, Gzip: true,
		Resource: resource(t), Headers: map[string]string{"X-Tenant": "t1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	batch := func() []*export.Profile {
		p, _ := testProfile(t, "cpu", 1)
		return []*export.Profile{p}
	}
	send := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return c.Send(ctx, batch())
	}

	var got *collectorv1.ExportProfilesServiceRequest
	s.answer = func(_ context.Context, req *collectorv1.ExportProfilesServiceRequest) (*collectorv1.ExportProfilesServiceResponse, error) {
		got = req
		return &collectorv1.ExportProfilesServiceResponse{PartialSuccess: &collectorv1.ExportProfilesPartialSuccess{RejectedProfiles: 2, ErrorMessage: "bad sample"}}, nil
	}
	err = send()
	var pe *export.PartialError
	if !errors.As(err, &pe) || pe.Rejected != 2 || pe.Message != "bad sample" {
		t.Errorf("partial success: %v", err)
	}
	if got == nil || len(got.ResourceProfiles[0].ScopeProfiles[0].Profiles) != 2 {
		t.Fatalf("request %v", got)
	}
	// grpc-go keeps grpc-encoding from the metadata; that it read the
	// request at all says it took the gzip the client named
	md := s.md[0]
	if fmt.Sprint(md.Get("otlp-profiles-development-version")) != "["+export.DevelopmentVersion+"]" || fmt.Sprint(md.Get("x-tenant")) != "[t1]" {
		t.Errorf("metadata %v", md)
	}
	if s.dl[0] <= 0 || s.dl[0] > 5*time.Second {
		t.Errorf("deadline at the server %v, want within the caller's 5 s", s.dl[0])
	}

	for _, tc := range []struct {
		code  codes.Code
		retry bool
		after time.Duration
	}{
		{codes.InvalidArgument, false, 0},
		{codes.Unauthenticated, false, 0},
		{codes.Unavailable, true, 3 * time.Second},
		{codes.ResourceExhausted, true, 0},
	} {
		s.answer = func(ctx context.Context, _ *collectorv1.ExportProfilesServiceRequest) (*collectorv1.ExportProfilesServiceResponse, error) {
			if tc.after > 0 {
				grpc.SetTrailer(ctx, metadata.Pairs("retry-after", "3"))
			}
			return nil, status.Error(tc.code, "said 100% ünicode")
		}
		err := send()
		var re *export.RetryError
		if errors.As(err, &re) != tc.retry || (tc.retry && re.After != tc.after) {
			t.Errorf("%v: %#v, want retry %v after %v", tc.code, err, tc.retry, tc.after)
		}
		if err == nil || !strings.Contains(err.Error(), tc.code.String()) || !strings.Contains(err.Error(), "said 100% ünicode") {
			t.Errorf("%v: %v", tc.code, err)
		}
	}
}

// What is not a gRPC server: an HTTP/2 server answering with HTTP
// statuses (a proxy), or with a 200 that carries no grpc-status.
func TestOTLPGRPCNotGRPC(t *testing.T) {
	var mu sync.Mutex
	var answer func(w http.ResponseWriter)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		answer(w)
	}))
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	defer srv.Close()
	c, err := export.NewOTLP(export.OTLPOptions{Protocol: export.ProtocolGRPC, Endpoint: srv.URL, Resource: resource(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, _ := testProfile(t, "cpu", 1)
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		retry  bool
	}{
		{"503", func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) }, true},
		{"404", func(w http.ResponseWriter) { w.WriteHeader(http.StatusNotFound) }, false},
		{"200 without status", func(w http.ResponseWriter) { w.Header().Set("Content-Type", "application/grpc") }, true},
		{"200 with a cut message", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Trailer", "Grpc-Status")
			w.Write([]byte{0, 0, 0, 0, 9, 1})
			w.Header().Set("Grpc-Status", "0")
		}, false},
	} {
		mu.Lock()
		answer = tc.answer
		mu.Unlock()
		err := c.Send(context.Background(), []*export.Profile{p})
		var re *export.RetryError
		if err == nil || errors.As(err, &re) != tc.retry {
			t.Errorf("%s: %v, want an error, retry %v", tc.name, err, tc.retry)
		}
	}
}
