package exporttest

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"

	tracecollv1 "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// TraceRequests returns the trace export requests the receiver accepted so
// far (sample/gotrace's tests; otlpsink's -traces file).
func (c *Collector) TraceRequests() ([]*tracecollv1.ExportTraceServiceRequest, error) {
	b, err := os.ReadFile(c.out + ".traces")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*tracecollv1.ExportTraceServiceRequest
	for len(b) >= 4 {
		n := int(binary.BigEndian.Uint32(b))
		if len(b) < 4+n {
			break // being written
		}
		r := &tracecollv1.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(b[4:4+n], r); err != nil {
			return nil, err
		}
		out = append(out, r)
		b = b[4+n:]
	}
	return out, nil
}

// TracesEndpoint is the base URL an OTLP/HTTP trace exporter is given
// (OTEL_EXPORTER_OTLP_ENDPOINT: it appends /v1/traces).
func (c *Collector) TracesEndpoint() string { return "http://" + c.HTTPAddr }

// TraceHeaders returns the request headers of the trace requests accepted
// so far, one "key=value key=value" line (sorted, keys lower-case) per
// request.
func (c *Collector) TraceHeaders() ([]string, error) {
	b, err := os.ReadFile(c.out + ".traces.headers")
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
