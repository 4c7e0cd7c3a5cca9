// Package exporttest runs the real receiving code the tests of
// pprofbuild/export and sample/contprof ship profiles to, on loopback: a
// Pyroscope push server built from Pyroscope's generated connect handler
// (pushv1connect) decoding with github.com/google/pprof/profile, and the
// OpenTelemetry Collector's OTLP receiver (internal/otlpsink, built by
// `go build` in its own module). It also reduces profiles of either kind
// to comparable sample sets. Test scaffolding: only tests import it.
package exporttest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/google/pprof/profile"
	pushv1 "github.com/grafana/pyroscope/api/gen/proto/go/push/v1"
	"github.com/grafana/pyroscope/api/gen/proto/go/push/v1/pushv1connect"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
)

// Samples is a profile's samples of one sample type: value by
// "frame;frame;... (innermost first)|key=value,..." (labels sorted).
type Samples map[string]int64

// PprofSamples reduces sample type ti of p.
func PprofSamples(p *profile.Profile, ti int) Samples {
	s := Samples{}
	for _, smp := range p.Sample {
		var fr []string
		for _, l := range smp.Location {
			for _, ln := range l.Line {
				fr = append(fr, ln.Function.Name)
			}
		}
		var ls []string
		for k, vs := range smp.Label {
			for _, v := range vs {
				ls = append(ls, k+"="+v)
			}
		}
		for k, vs := range smp.NumLabel {
			for _, v := range vs {
				ls = append(ls, fmt.Sprintf("%s=%d", k, v))
			}
		}
		sort.Strings(ls)
		s[strings.Join(fr, ";")+"|"+strings.Join(ls, ",")] += smp.Value[ti]
	}
	return s
}

// Received is one profile a receiver accepted.
type Received struct {
	Labels     map[string]string // Pyroscope: the series' labels; OTLP: resource attributes and profile.name
	Pprof      *profile.Profile  // Pyroscope
	SampleType string            // OTLP: "type/unit"
	Start      time.Time
	Duration   time.Duration
	Comments   []string
	Samples    Samples // OTLP
	Links      int     // OTLP: samples with a link
}

// Pyroscope is a Pyroscope push server on loopback.
type Pyroscope struct {
	Addr string
	// Fault, when set, answers a request instead of the push handler:
	// it returns true if it answered.
	Fault func(w http.ResponseWriter, r *http.Request) bool

	mu       sync.Mutex
	got      []Received
	headers  []http.Header
	requests int
	srv      *http.Server
	ln       net.Listener
	t        testing.TB
}

type pushHandler struct{ p *Pyroscope }

func (h pushHandler) Push(ctx context.Context, req *connect.Request[pushv1.PushRequest]) (*connect.Response[pushv1.PushResponse], error) {
	var got []Received
	for _, s := range req.Msg.Series {
		ls := map[string]string{}
		for _, l := range s.Labels {
			ls[l.Name] = l.Value
		}
		for _, raw := range s.Samples {
			p, err := profile.ParseData(raw.RawProfile)
			if err != nil {
				return nil, connect.NewError(connect.CodeInvalidArgument, err)
			}
			got = append(got, Received{Labels: ls, Pprof: p, Start: time.Unix(0, p.TimeNanos), Duration: time.Duration(p.DurationNanos), Comments: p.Comments})
		}
	}
	h.p.mu.Lock()
	h.p.got = append(h.p.got, got...)
	h.p.headers = append(h.p.headers, req.Header().Clone())
	h.p.mu.Unlock()
	return connect.NewResponse(&pushv1.PushResponse{}), nil
}

// StartPyroscope starts a Pyroscope push server on 127.0.0.1 (addr "" for
// a free port), stopped at the test's end.
func StartPyroscope(t testing.TB, addr string) *Pyroscope {
	p := &Pyroscope{t: t}
	p.start(addr)
	t.Cleanup(p.Stop)
	return p
}

func (p *Pyroscope) start(addr string) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // a restart may find the port in TIME_WAIT briefly
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatal(err)
	}
	path, h := pushv1connect.NewPusherServiceHandler(pushHandler{p})
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests++
		f := p.Fault
		p.mu.Unlock()
		if f != nil && f(w, r) {
			return
		}
		if !strings.HasPrefix(r.URL.Path, path) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
	p.Addr = ln.Addr().String()
	p.ln = ln
	p.srv = &http.Server{Handler: mux}
	go p.srv.Serve(ln)
}

// URL is the server's base URL.
func (p *Pyroscope) URL() string { return "http://" + p.Addr }

// SetFault sets Fault.
func (p *Pyroscope) SetFault(f func(w http.ResponseWriter, r *http.Request) bool) {
	p.mu.Lock()
	p.Fault = f
	p.mu.Unlock()
}

// Stop stops the server (connections closed).
func (p *Pyroscope) Stop() {
	if p.srv != nil {
		p.srv.Close()
		p.srv = nil
	}
}

// Restart starts it again on the same address.
func (p *Pyroscope) Restart() { p.start(p.Addr) }

// Received returns the profiles accepted so far.
func (p *Pyroscope) Received() []Received {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Received(nil), p.got...)
}

// Headers returns the headers of the accepted requests.
func (p *Pyroscope) Headers() []http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]http.Header(nil), p.headers...)
}

// Requests counts the requests that reached the server.
func (p *Pyroscope) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

var (
	sinkOnce sync.Once
	sinkBin  string
	sinkErr  error
)

// sinkBinary builds internal/otlpsink once per test process, into the
// harness's cache directory under a hash of its sources and the Go
// version, so that the test processes of one run (and later runs) share
// it. The build sees neither GOFLAGS nor GOEXPERIMENT (task
// test-cgocheck2 sets it): the sink is a tool of the tests, not under
// test, and its dependency tree is large to build twice.
func sinkBinary() (string, error) {
	sinkOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "..", "otlpsink")
		h := sha256.New()
		fmt.Fprintln(h, runtime.Version())
		// Every source file: traces.go (sample/gotrace's traces signal)
		// too.
		srcs, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for i := range srcs {
			srcs[i] = filepath.Base(srcs[i])
		}
		for _, f := range append(srcs, "go.mod", "go.sum") {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				sinkErr = err
				return
			}
			h.Write(b)
		}
		out := filepath.Join(harness.CacheDir(), "otlpsink", hex.EncodeToString(h.Sum(nil))[:16])
		sinkBin = filepath.Join(out, "otlpsink")
		if _, err := os.Stat(sinkBin); err == nil {
			return
		}
		if err := os.MkdirAll(out, 0o755); err != nil {
			sinkErr = err
			return
		}
		tmp := fmt.Sprintf("%s.%d", sinkBin, os.Getpid())
		cmd := exec.Command("go", "build", "-o", tmp, ".")
		cmd.Dir = dir
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "GOEXPERIMENT=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "GOWORK=off", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			sinkErr = fmt.Errorf("building internal/otlpsink: %v\n%s", err, out)
			return
		}
		sinkErr = os.Rename(tmp, sinkBin)
	})
	return sinkBin, sinkErr
}

// Collector is the OpenTelemetry Collector's OTLP receiver on loopback.
type Collector struct {
	GRPCAddr, HTTPAddr string
	out                string
	discard            bool // trace requests dropped (StartDiscardingCollector)
	cmd                *exec.Cmd
	t                  testing.TB
}

// FreeAddr returns a loopback address with a port free right now.
func FreeAddr(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// StartCollector builds (once) and starts the OTLP receiver, stopped at
// the test's end. It makes the test an integration test: under -short it
// skips (see harness.Integration).
func StartCollector(t testing.TB) *Collector { return startCollector(t, false) }

// StartDiscardingCollector starts a receiver whose trace requests are
// decoded and dropped (TraceRequests has none): for benchmarks, which
// count spans at the sender and must not have the receiver writing them
// to disk.
func StartDiscardingCollector(t testing.TB) *Collector { return startCollector(t, true) }

func startCollector(t testing.TB, discard bool) *Collector {
	harness.Integration(t)
	c := &Collector{GRPCAddr: FreeAddr(t), HTTPAddr: FreeAddr(t), out: filepath.Join(t.TempDir(), "received.bin"), t: t, discard: discard}
	c.Start()
	t.Cleanup(c.Stop)
	return c
}

// Start starts the receiver (again), on the same addresses.
func (c *Collector) Start() {
	bin, err := sinkBinary()
	if err != nil {
		c.t.Fatal(err)
	}
	// A receiver killed while it wrote a request leaves it cut short at
	// the end of its file, and the next one would append after it, so
	// that the reader took the new records for the rest of the torn one
	// (TestGotraceCollectorRestart, once in a CI run: "proto: cannot parse
	// invalid wire-format data"). The sender got no answer for that
	// request and sends it again.
	for _, f := range []string{c.out, c.out + ".traces"} {
		if err := TruncateTorn(f); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := truncateTornLine(c.out + ".traces.headers"); err != nil {
		c.t.Fatal(err)
	}
	for try := 0; ; try++ {
		traces := c.out + ".traces"
		if c.discard {
			traces = "discard"
		}
		cmd := exec.Command(bin, "-grpc", c.GRPCAddr, "-http", c.HTTPAddr, "-out", c.out, "-traces", traces)
		cmd.Stderr = os.Stderr
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			c.t.Fatal(err)
		}
		ready := make(chan bool, 1)
		go func() {
			b := make([]byte, 6)
			n, _ := stdout.Read(b)
			ready <- string(b[:n]) == "ready\n"
		}()
		select {
		case ok := <-ready:
			if ok {
				c.cmd = cmd
				return
			}
		case <-time.After(30 * time.Second):
		}
		cmd.Process.Kill()
		cmd.Wait()
		if try == 20 {
			c.t.Fatal("otlpsink did not start")
		}
		time.Sleep(200 * time.Millisecond) // the port may still be held after a stop
	}
}

// TruncateTorn cuts a file of records (each a 4-byte big-endian length
// and that many bytes, as otlpsink writes them) after its last whole
// record. A file that does not exist is left so.
func TruncateTorn(path string) error {
	return truncateAt(path, func(b []byte) int {
		end := 0
		for len(b)-end >= 4 {
			n := int(binary.BigEndian.Uint32(b[end:]))
			if len(b)-end-4 < n {
				break
			}
			end += 4 + n
		}
		return end
	})
}

// truncateTornLine cuts a file of lines after its last newline.
func truncateTornLine(path string) error {
	return truncateAt(path, func(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 })
}

// truncateAt cuts the file at path to the length end gives for its
// contents, if that is shorter; a file that does not exist is left so.
func truncateAt(path string, end func([]byte) int) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if n := end(b); n < len(b) {
		return os.Truncate(path, int64(n))
	}
	return nil
}

// Stop stops the receiver (SIGKILL: it vanishes as a crashed one would).
func (c *Collector) Stop() {
	if c.cmd != nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
		c.cmd = nil
	}
}

// HTTPEndpoint is the URL the HTTP client posts to.
func (c *Collector) HTTPEndpoint() string {
	return "http://" + c.HTTPAddr + "/v1development/profiles"
}

// GRPCEndpoint is the gRPC endpoint URL.
func (c *Collector) GRPCEndpoint() string { return "http://" + c.GRPCAddr }

// Requests returns the export requests received so far.
func (c *Collector) Requests() ([]*collectorv1.ExportProfilesServiceRequest, error) {
	b, err := os.ReadFile(c.out)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*collectorv1.ExportProfilesServiceRequest
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b))
		if len(b) < 4+n {
			break // being written
		}
		r := &collectorv1.ExportProfilesServiceRequest{}
		if err := proto.Unmarshal(b[4:4+n], r); err != nil {
			return nil, err
		}
		out = append(out, r)
		b = b[4+n:]
	}
	return out, nil
}

// Received returns every profile of the requests received so far.
func (c *Collector) Received() ([]Received, error) {
	reqs, err := c.Requests()
	if err != nil {
		return nil, err
	}
	var out []Received
	for _, r := range reqs {
		out = append(out, FromOTLP(r)...)
	}
	return out, nil
}

func anyString(v *commonv1.AnyValue, strs []string) string {
	switch x := v.GetValue().(type) {
	case *commonv1.AnyValue_StringValueStrindex:
		return strs[x.StringValueStrindex]
	case *commonv1.AnyValue_StringValue:
		return x.StringValue
	case *commonv1.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonv1.AnyValue_ArrayValue:
		var ss []string
		for _, e := range x.ArrayValue.Values {
			ss = append(ss, anyString(e, strs))
		}
		return strings.Join(ss, "\n")
	}
	return v.String()
}

// FromOTLP reduces an export request to its profiles, reading the
// dictionary as the data model says: a sample's stack, its attributes as
// labels, and its link as trace_id and span_id labels.
func FromOTLP(r *collectorv1.ExportProfilesServiceRequest) []Received {
	d := r.GetDictionary()
	str := func(i int32) string { return d.StringTable[i] }
	var out []Received
	for _, rp := range r.ResourceProfiles {
		res := map[string]string{}
		for _, a := range rp.GetResource().GetAttributes() {
			k := a.Key
			if k == "" {
				k = d.StringTable[a.KeyStrindex]
			}
			res[k] = anyString(a.Value, d.StringTable)
		}
		for _, sp := range rp.ScopeProfiles {
			for _, p := range sp.Profiles {
				rc := Received{Labels: map[string]string{}, Samples: Samples{}}
				for k, v := range res {
					rc.Labels[k] = v
				}
				for _, ai := range p.AttributeIndices {
					a := d.AttributeTable[ai]
					if str(a.KeyStrindex) == "pprof.profile.comment" {
						if arr := a.Value.GetArrayValue(); arr != nil {
							for _, e := range arr.Values {
								rc.Comments = append(rc.Comments, anyString(e, d.StringTable))
							}
						} else {
							rc.Comments = append(rc.Comments, anyString(a.Value, d.StringTable))
						}
						continue
					}
					rc.Labels[str(a.KeyStrindex)] = anyString(a.Value, d.StringTable)
				}
				rc.SampleType = str(p.SampleType.TypeStrindex) + "/" + str(p.SampleType.UnitStrindex)
				rc.Start = time.Unix(0, int64(p.TimeUnixNano))
				rc.Duration = time.Duration(p.DurationNano)
				for _, s := range p.Samples {
					var fr []string
					for _, li := range d.StackTable[s.StackIndex].LocationIndices {
						for _, ln := range d.LocationTable[li].Lines {
							fr = append(fr, str(d.FunctionTable[ln.FunctionIndex].NameStrindex))
						}
					}
					var ls []string
					for _, ai := range s.AttributeIndices {
						a := d.AttributeTable[ai]
						if arr := a.Value.GetArrayValue(); arr != nil {
							for _, e := range arr.Values {
								ls = append(ls, str(a.KeyStrindex)+"="+anyString(e, d.StringTable))
							}
							continue
						}
						ls = append(ls, str(a.KeyStrindex)+"="+anyString(a.Value, d.StringTable))
					}
					if s.LinkIndex != 0 {
						l := d.LinkTable[s.LinkIndex]
						ls = append(ls, "trace_id="+hex.EncodeToString(l.TraceId), "span_id="+hex.EncodeToString(l.SpanId))
						rc.Links++
					}
					sort.Strings(ls)
					var v int64
					for _, x := range s.Values {
						v += x
					}
					rc.Samples[strings.Join(fr, ";")+"|"+strings.Join(ls, ",")] += v
				}
				out = append(out, rc)
			}
		}
	}
	return out
}

// Compare checks the copies of a profiler's run: dir holds the
// directory's profiles by kind; pyro what Pyroscope received (each
// profile once, its __name__ the kind (process_cpu for cpu), its time
// range and samples the
// directory's); otlp what the Collector received (each sample type of
// each non-empty profile once, profile.name the kind, same time range and
// samples). It returns what differs, and how many profiles it compared.
func Compare(dir map[string][]*profile.Profile, pyro, otlp []Received) (problems []string, n int) {
	type key struct {
		kind  string
		start int64
	}
	pyroBy := map[key][]Received{}
	for _, r := range pyro {
		name := r.Labels["__name__"]
		if name == "process_cpu" { // contprof's "cpu" at Pyroscope
			name = "cpu"
		}
		k := key{name, r.Start.UnixNano()}
		pyroBy[k] = append(pyroBy[k], r)
	}
	otlpBy := map[key][]Received{}
	for _, r := range otlp {
		k := key{r.Labels["profile.name"] + "/" + r.SampleType, r.Start.UnixNano()}
		otlpBy[k] = append(otlpBy[k], r)
	}
	bad := func(f string, a ...any) { problems = append(problems, fmt.Sprintf(f, a...)) }
	equal := func(a, b Samples) bool {
		if len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || w != v {
				return false
			}
		}
		return true
	}
	for kind, ps := range dir {
		for _, p := range ps {
			n++
			at := time.Unix(0, p.TimeNanos).UTC().Format(time.RFC3339Nano)
			got := pyroBy[key{kind, p.TimeNanos}]
			if len(got) != 1 {
				bad("%s at %s: %d copies at Pyroscope, want 1", kind, at, len(got))
			} else {
				if got[0].Duration != time.Duration(p.DurationNanos) {
					bad("%s at %s: Pyroscope's duration %v, the directory's %v", kind, at, got[0].Duration, time.Duration(p.DurationNanos))
				}
				for ti := range p.SampleType {
					if !equal(PprofSamples(got[0].Pprof, ti), PprofSamples(p, ti)) {
						bad("%s at %s: Pyroscope's samples of type %d differ from the directory's", kind, at, ti)
					}
				}
			}
			for ti, st := range p.SampleType {
				got := otlpBy[key{kind + "/" + st.Type + "/" + st.Unit, p.TimeNanos}]
				if len(p.Sample) == 0 { // not sent over OTLP
					if len(got) != 0 {
						bad("%s %s at %s: an empty profile sent over OTLP", kind, st.Type, at)
					}
					continue
				}
				if len(got) != 1 {
					bad("%s %s at %s: %d copies at the Collector, want 1", kind, st.Type, at, len(got))
					continue
				}
				if got[0].Duration != time.Duration(p.DurationNanos) {
					bad("%s %s at %s: the Collector's duration %v, the directory's %v", kind, st.Type, at, got[0].Duration, time.Duration(p.DurationNanos))
				}
				if !equal(got[0].Samples, PprofSamples(p, ti)) {
					bad("%s %s at %s: the Collector's samples differ from the directory's", kind, st.Type, at)
				}
			}
		}
	}
	if len(pyro) != n {
		bad("%d profiles in the directory, %d at Pyroscope", n, len(pyro))
	}
	return problems, n
}
