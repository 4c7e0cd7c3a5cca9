package export_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/pprofbuild/export"
	"github.com/google/pprof/profile"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// testProfile is period n of profile kind: two sample types, a few
// stacks, one sample with span labels.
func testProfile(t testing.TB, kind string, n int) (*export.Profile, *profile.Profile) {
	start := t0.Add(time.Duration(n) * time.Minute)
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: kind, Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: kind, Unit: "nanoseconds"},
		Period:        52631578,
		TimeNanos:     start.UnixNano(),
		DurationNanos: int64(time.Minute),
		Comments:      []string{fmt.Sprintf("%s period %d", kind, n)},
	}
	fn := func(name string) *profile.Location {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, l)
		return l
	}
	main, work, sleep := fn("App.Main"), fn("App.Work"), fn(fmt.Sprintf("App.Sleep%d", n))
	p.Sample = []*profile.Sample{
		{Location: []*profile.Location{work, main}, Value: []int64{int64(10 + n), int64(10+n) * 1000}},
		{Location: []*profile.Location{sleep, main}, Value: []int64{3, 3000}, Label: map[string][]string{"thread": {"worker"}}},
		{Location: []*profile.Location{work, main}, Value: []int64{2, 2000}, Label: map[string][]string{
			"trace_id": {"0af7651916cd43dd8448eb211c80319c"}, "span_id": {"b7ad6b7169203331"}}},
		{Location: []*profile.Location{main}, Value: []int64{1, 7}, NumLabel: map[string][]int64{"bytes": {4096}}, NumUnit: map[string][]string{"bytes": {"bytes"}}},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return &export.Profile{Name: kind, Start: start, End: start.Add(time.Minute), Pprof: b.Bytes(), Labels: map[string]string{"period": fmt.Sprint(n)}}, p
}

var kinds = []string{"cpu", "wall", "exceptions"}

func logf(t testing.TB) func(string, ...any) {
	return func(f string, a ...any) { t.Logf(f, a...) }
}

func resource(t testing.TB) export.Resource {
	t.Setenv("OTEL_SERVICE_NAME", "exporttest")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,team=a%2Cb")
	r, err := export.NewResource(".NET 8.0.4")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type sent struct {
	ep *export.Profile
	pp *profile.Profile
}

// checkPyroscope checks that every profile arrived exactly once, with
// its labels, time range and samples.
func checkPyroscope(t *testing.T, got []exporttest.Received, want map[string]sent, res export.Resource) {
	t.Helper()
	seen := map[string]int{}
	for _, g := range got {
		name := g.Labels["__name__"]
		if name == "exception" { // PyroscopeOptions.Names
			name = "exceptions"
		}
		key := name + "/" + g.Labels["period"]
		seen[key]++
		w, ok := want[key]
		if !ok {
			t.Errorf("unexpected profile %s", key)
			continue
		}
		if g.Labels["service_name"] != "exporttest" || g.Labels["deployment_environment"] != "test" || g.Labels["team"] != "a,b" ||
			g.Labels["process_runtime_version"] != "8.0.4" || g.Labels["process_pid"] == "" || g.Labels["host_name"] == "" {
			t.Errorf("%s: labels %v", key, g.Labels)
		}
		if !g.Start.Equal(w.ep.Start) || g.Duration != w.ep.End.Sub(w.ep.Start) {
			t.Errorf("%s: time range %v+%v, want %v+%v", key, g.Start, g.Duration, w.ep.Start, w.ep.End.Sub(w.ep.Start))
		}
		for ti := range w.pp.SampleType {
			if a, b := exporttest.PprofSamples(g.Pprof, ti), exporttest.PprofSamples(w.pp, ti); !maps.Equal(a, b) {
				t.Errorf("%s: samples %v, want %v", key, a, b)
			}
		}
	}
	for k := range want {
		if seen[k] != 1 {
			t.Errorf("profile %s arrived %d times", k, seen[k])
		}
	}
}

func TestPyroscope(t *testing.T) {
	res := resource(t)
	srv := exporttest.StartPyroscope(t, "")
	c, err := export.NewPyroscope(export.PyroscopeOptions{URL: srv.URL(), BearerToken: "tok", TenantID: "tenant-1", Resource: res, Gzip: true,
		Names: map[string]string{"exceptions": "exception"}})
	if err != nil {
		t.Fatal(err)
	}
	e := export.New(c, export.Options{Logf: logf(t), MaxBatch: 4})
	want := map[string]sent{}
	for n := 1; n <= 3; n++ {
		for _, k := range kinds {
			ep, pp := testProfile(t, k, n)
			want[fmt.Sprintf("%s/%d", k, n)] = sent{ep, pp}
			e.Enqueue(ep)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	checkPyroscope(t, srv.Received(), want, res)
	renamed := 0
	for _, g := range srv.Received() {
		if g.Labels["__name__"] == "exception" {
			renamed++
		}
	}
	if renamed != 3 {
		t.Errorf("%d series named exception (PyroscopeOptions.Names), want 3", renamed)
	}
	for _, h := range srv.Headers() {
		if h.Get("Authorization") != "Bearer tok" || h.Get("X-Scope-OrgID") != "tenant-1" {
			t.Errorf("headers %v", h)
		}
	}
	if st := e.Stats(); st.Sent != 9 || st.Dropped+st.Lost+st.Rejected != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestPyroscopeBasicAuthFromURL(t *testing.T) {
	srv := exporttest.StartPyroscope(t, "")
	c, err := export.NewPyroscope(export.PyroscopeOptions{URL: "http://u:p%40ss@" + srv.Addr, Resource: resource(t)})
	if err != nil {
		t.Fatal(err)
	}
	ep, _ := testProfile(t, "cpu", 1)
	if err := c.Send(context.Background(), []*export.Profile{ep}); err != nil {
		t.Fatal(err)
	}
	r := http.Request{Header: srv.Headers()[0]}
	if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p@ss" {
		t.Errorf("basic auth %q %q %v", u, p, ok)
	}
}

// checkOTLP checks that every profile and sample type arrived exactly
// once, with the resource, name, time range and samples (links for the
// span labels).
func checkOTLP(t *testing.T, got []exporttest.Received, want map[string]sent) {
	t.Helper()
	seen := map[string]int{}
	for _, g := range got {
		key := g.Labels["profile.name"] + "/" + periodOf(g)
		w, ok := want[key]
		if !ok {
			t.Errorf("unexpected profile %s (%v)", key, g.Labels)
			continue
		}
		ti := -1
		for i, st := range w.pp.SampleType {
			if st.Type+"/"+st.Unit == g.SampleType {
				ti = i
			}
		}
		if ti < 0 {
			t.Errorf("%s: sample type %s", key, g.SampleType)
			continue
		}
		seen[key+"/"+g.SampleType]++
		if g.Labels["service.name"] != "exporttest" || g.Labels["team"] != "a,b" || g.Labels["process.runtime.version"] != "8.0.4" ||
			g.Labels["process.runtime.name"] != ".NET" || g.Labels["host.name"] == "" || g.Labels["process.pid"] == "" {
			t.Errorf("%s: resource %v", key, g.Labels)
		}
		if !g.Start.Equal(w.ep.Start) || g.Duration != w.ep.End.Sub(w.ep.Start) {
			t.Errorf("%s: time range %v+%v", key, g.Start, g.Duration)
		}
		if !reflect.DeepEqual(g.Comments[:len(w.pp.Comments)], w.pp.Comments) {
			t.Errorf("%s: comments %q", key, g.Comments)
		}
		wantS := exporttest.PprofSamples(w.pp, ti)
		wantS2 := exporttest.Samples{}
		for k, v := range wantS { // the exporter adds the profile's labels to every sample
			stack, ls, _ := strings.Cut(k, "|")
			l := []string{"period=" + periodOf(g)}
			if ls != "" {
				l = append(l, strings.Split(ls, ",")...)
			}
			sort.Strings(l)
			wantS2[stack+"|"+strings.Join(l, ",")] += v
		}
		if !maps.Equal(g.Samples, wantS2) {
			t.Errorf("%s %s: samples\n%v\nwant\n%v", key, g.SampleType, g.Samples, wantS2)
		}
		if g.Links != 1 {
			t.Errorf("%s: %d samples with a link, want 1", key, g.Links)
		}
	}
	for k, w := range want {
		for _, st := range w.pp.SampleType {
			if n := seen[k+"/"+st.Type+"/"+st.Unit]; n != 1 {
				t.Errorf("%s %s/%s arrived %d times", k, st.Type, st.Unit, n)
			}
		}
	}
}

func periodOf(g exporttest.Received) string {
	for k := range g.Samples {
		_, ls, _ := strings.Cut(k, "|")
		for _, l := range strings.Split(ls, ",") {
			if v, ok := strings.CutPrefix(l, "period="); ok {
				return v
			}
		}
	}
	return "?"
}

// TestPyroscopeErrors: the receiver's connect errors and a proxy's plain
// answers are told apart as the connect protocol says: a profile the
// receiver refuses (invalid_argument, from Pyroscope's own handler) is not
// retried; a 503 without a connect body is (unavailable), as is a 429,
// whose Retry-After is kept.
func TestPyroscopeErrors(t *testing.T) {
	srv := exporttest.StartPyroscope(t, "")
	c, err := export.NewPyroscope(export.PyroscopeOptions{URL: srv.URL(), Resource: resource(t)})
	if err != nil {
		t.Fatal(err)
	}
	bad := &export.Profile{Name: "cpu", Pprof: []byte("not a profile")}
	err = c.Send(context.Background(), []*export.Profile{bad})
	var re *export.RetryError
	if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "invalid_argument") {
		t.Errorf("a refused profile: %v (retry %v)", err, re)
	}
	for _, tc := range []struct {
		status int
		after  string
		want   time.Duration
	}{{http.StatusServiceUnavailable, "", 0}, {http.StatusTooManyRequests, "7", 7 * time.Second}} {
		srv.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
			if tc.after != "" {
				w.Header().Set("Retry-After", tc.after)
			}
			http.Error(w, "proxy says no", tc.status)
			return true
		})
		ep, _ := testProfile(t, "cpu", 1)
		err := c.Send(context.Background(), []*export.Profile{ep})
		if !errors.As(err, &re) || re.After != tc.want || !strings.Contains(err.Error(), "unavailable") {
			t.Errorf("HTTP %d: %v (retry %+v)", tc.status, err, re)
		}
	}
}
