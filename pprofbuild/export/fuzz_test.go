package export_test

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/pprofbuild/export"
	"github.com/google/pprof/profile"
	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/protobuf/proto"
)

// Any bytes: Request never panics; for a pprof profile with samples it
// gives one OTLP profile per sample type whose values add up to the
// pprof's, every index within its table.
func FuzzOTLPRequest(f *testing.F) {
	for _, k := range kinds {
		ep, _ := testProfile(f, k, 1)
		f.Add(ep.Pprof)
	}
	f.Add([]byte{})
	f.Add([]byte("not pprof"))
	c, err := export.NewOTLP(export.OTLPOptions{Endpoint: "http://127.0.0.1:1/v1development/profiles"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		reqb, err := c.Request([]*export.Profile{{Name: "x", Pprof: b}})
		var req collectorv1.ExportProfilesServiceRequest
		if uerr := proto.Unmarshal(reqb, &req); uerr != nil {
			t.Fatalf("the request does not decode: %v", uerr)
		}
		pp, perr := profile.ParseData(b)
		if perr != nil {
			if err == nil {
				t.Fatalf("no error for bytes pprof does not parse (%v)", perr)
			}
			return
		}
		if err != nil {
			t.Fatalf("error for a pprof profile: %v", err)
		}
		d := req.Dictionary
		ps := req.ResourceProfiles[0].ScopeProfiles[0].Profiles
		want := len(pp.SampleType)
		if len(pp.Sample) == 0 {
			want = 0
		}
		if len(ps) != want {
			t.Fatalf("%d OTLP profiles for %d sample types", len(ps), len(pp.SampleType))
		}
		str := func(i int32) {
			if i < 0 || int(i) >= len(d.StringTable) {
				t.Fatalf("string index %d of %d", i, len(d.StringTable))
			}
		}
		for ti, op := range ps {
			str(op.SampleType.TypeStrindex)
			var sum, wantSum int64
			for _, s := range pp.Sample {
				if ti < len(s.Value) {
					wantSum += s.Value[ti]
				}
			}
			for _, s := range op.Samples {
				if int(s.StackIndex) >= len(d.StackTable) || int(s.LinkIndex) >= len(d.LinkTable) {
					t.Fatalf("stack %d of %d, link %d of %d", s.StackIndex, len(d.StackTable), s.LinkIndex, len(d.LinkTable))
				}
				for _, li := range d.StackTable[s.StackIndex].LocationIndices {
					if int(li) >= len(d.LocationTable) {
						t.Fatalf("location %d of %d", li, len(d.LocationTable))
					}
					for _, ln := range d.LocationTable[li].Lines {
						if int(ln.FunctionIndex) >= len(d.FunctionTable) {
							t.Fatalf("function %d of %d", ln.FunctionIndex, len(d.FunctionTable))
						}
						str(d.FunctionTable[ln.FunctionIndex].NameStrindex)
					}
				}
				for _, ai := range s.AttributeIndices {
					if int(ai) >= len(d.AttributeTable) {
						t.Fatalf("attribute %d of %d", ai, len(d.AttributeTable))
					}
				}
				for _, v := range s.Values {
					sum += v
				}
			}
			if sum != wantSum {
				t.Fatalf("type %d: values add up to %d, pprof's to %d", ti, sum, wantSum)
			}
		}
	})
}

// Any string: ParseHeaders never panics, and what it accepts has keys
// and values fit for a header.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"a=b", "api-key=secret,tenant=t%201", "=x", "a", "a=%zz", "k=v=w,,", "a b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := export.ParseHeaders(s)
		if err != nil {
			return
		}
		for k, v := range m {
			if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
				t.Fatalf("accepted %q: %q=%q", s, k, v)
			}
		}
	})
}
