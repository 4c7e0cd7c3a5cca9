package export_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/pprofbuild/export"
)

func TestNewResource(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.version=1.2, team = a%2Cb%3Dc ,host.name=override")
	r, err := export.NewResource(".NET Core 3.1.23")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	for k, want := range map[string]any{
		"service.name":                "unknown_service:" + filepath.Base(exe),
		"service.version":             "1.2",
		"team":                        "a,b=c",
		"host.name":                   "override", // the variables win over what the process says
		"process.pid":                 int64(os.Getpid()),
		"process.executable.name":     filepath.Base(exe),
		"process.runtime.name":        ".NET Core",
		"process.runtime.version":     "3.1.23",
		"process.runtime.description": ".NET Core 3.1.23",
	} {
		if got := r.Get(k); got != want {
			t.Errorf("%s = %#v, want %#v", k, got, want)
		}
	}
	if cl, _ := r.Get("process.command_line").(string); !strings.Contains(cl, filepath.Base(exe)) {
		t.Errorf("process.command_line %q", cl)
	}
	t.Setenv("OTEL_SERVICE_NAME", "svc")
	if r, _ := export.NewResource(""); r.ServiceName() != "svc" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", r.ServiceName())
	}
	for _, bad := range []string{"novalue", "=x", "a=%zz"} {
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", bad)
		if _, err := export.NewResource(""); err == nil || !strings.Contains(err.Error(), "OTEL_RESOURCE_ATTRIBUTES") {
			t.Errorf("%q: error %v, want one naming OTEL_RESOURCE_ATTRIBUTES", bad, err)
		}
	}
}

func TestLabelName(t *testing.T) {
	for in, want := range map[string]string{"service.name": "service_name", "k8s.pod-name": "k8s_pod_name", "9lives": "_9lives", "ok_1": "ok_1"} {
		if got := export.LabelName(in); got != want {
			t.Errorf("LabelName(%q) = %q, want %q", in, got, want)
		}
	}
}
