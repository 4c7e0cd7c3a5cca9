package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The build without exporters (-tags contprof_noexport) links none of
// their packages: that is what makes its library 10.7 MB against 17.1
// (docs/cost.md, "Memory", gives what that does to RSS). The default build
// links them, but never Pyroscope's API module, its connect client and
// what its types import (gnostic's OpenAPI models, a YAML parser), nor
// grpc-go and protobuf's reflection: the push and export requests are
// encoded in pprofbuild/export and the gRPC call made through net/http,
// which took the library from 28 MB to 17.
func TestNoExportDeps(t *testing.T) {
	heavy := []string{"github.com/clrprof/clrprof/pprofbuild/export", "net/http"}
	never := []string{"connectrpc.com/connect", "github.com/grafana/pyroscope", "github.com/google/gnostic", "go.yaml.in/yaml",
		// the OTLP exporter writes protobuf with protowire and speaks gRPC
		// through net/http: neither grpc-go nor protobuf's reflection
		"google.golang.org/grpc", "google.golang.org/protobuf/internal/impl", "go.opentelemetry.io/proto", "github.com/grpc-ecosystem"}
	for _, c := range []struct {
		tags string
		want bool
	}{{"", true}, {"contprof_noexport", false}} {
		out, err := exec.Command("go", "list", "-tags", c.tags, "-deps", ".").Output()
		if err != nil {
			t.Fatalf("go list -tags %q -deps: %v", c.tags, err)
		}
		deps := "\n" + string(out)
		for _, h := range heavy {
			if got := strings.Contains(deps, "\n"+h); got != c.want {
				t.Errorf("-tags %q: links %s: %v, want %v", c.tags, h, got, c.want)
			}
		}
		for _, h := range never {
			if strings.Contains(deps, "\n"+h) {
				t.Errorf("-tags %q: links %s", c.tags, h)
			}
		}
	}
}
