package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The build without exporters (-tags contprof_noexport) links none of
// their packages: that is what makes its library 17 MB smaller and the
// process's RSS about 12 MB smaller. The default build links them.
func TestNoExportDeps(t *testing.T) {
	heavy := []string{"google.golang.org/grpc", "connectrpc.com/connect", "github.com/grafana/pyroscope", "github.com/clrprof/clrprof/pprofbuild/export"}
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
	}
}
