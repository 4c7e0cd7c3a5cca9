package export

import (
	"testing"

	collectorv1 "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	"google.golang.org/protobuf/proto"
)

// Any bytes: parseResponse never panics, reads whatever the generated
// type reads, and reads it the same.
func FuzzParseResponse(f *testing.F) {
	for _, r := range []*collectorv1.ExportProfilesServiceResponse{
		{},
		{PartialSuccess: &collectorv1.ExportProfilesPartialSuccess{RejectedProfiles: 3, ErrorMessage: "bad sample"}},
		{PartialSuccess: &collectorv1.ExportProfilesPartialSuccess{ErrorMessage: "warning only"}},
		{PartialSuccess: &collectorv1.ExportProfilesPartialSuccess{RejectedProfiles: -1}},
	} {
		b, err := proto.Marshal(r)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x80})             // a length cut short
	f.Add([]byte{0x12, 0x01, 0x00, 0x0a}) // an unknown field, then a cut one
	f.Fuzz(func(t *testing.T, b []byte) {
		rejected, msg, err := parseResponse(b)
		var r collectorv1.ExportProfilesServiceResponse
		if perr := proto.Unmarshal(b, &r); perr == nil {
			if err != nil {
				t.Fatalf("the generated type reads %x, parseResponse does not: %v", b, err)
			}
			ps := r.GetPartialSuccess()
			if rejected != ps.GetRejectedProfiles() || msg != ps.GetErrorMessage() {
				t.Fatalf("%x: read %d %q, the generated type %d %q", b, rejected, msg, ps.GetRejectedProfiles(), ps.GetErrorMessage())
			}
		}
	})
}
