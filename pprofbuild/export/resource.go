package export

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Attr is one resource attribute: a string or, for process.pid, an int64.
type Attr struct {
	Key   string
	Value any // string or int64
}

// Resource is what the profiles of one process are from, as OpenTelemetry
// resource attributes (semantic conventions' names), sorted by key.
type Resource []Attr

// Get returns the value of key, nil if absent.
func (r Resource) Get(key string) any {
	for _, a := range r {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

// ServiceName is service.name.
func (r Resource) ServiceName() string {
	s, _ := r.Get("service.name").(string)
	return s
}

// NewResource returns the resource of this process: the attributes of
// OTEL_RESOURCE_ATTRIBUTES (key=value pairs separated by commas, values
// percent-encoded as the OpenTelemetry specification says), service.name
// from OTEL_SERVICE_NAME (which wins) or else
// "unknown_service:<executable name>", and, unless the variables set
// them, process.pid, process.executable.name and .path,
// process.command_line, host.name and, from runtime (as
// pprofbuild.RuntimeVersion names it: ".NET 8.0.4", ".NET Core 3.1.23"),
// process.runtime.name (".NET", ".NET Core"), process.runtime.version
// ("8.0.4") and process.runtime.description. A malformed
// OTEL_RESOURCE_ATTRIBUTES is an error that names it.
func NewResource(runtime string) (Resource, error) {
	attrs := map[string]any{}
	if v := os.Getenv("OTEL_RESOURCE_ATTRIBUTES"); strings.TrimSpace(v) != "" {
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES=%q: %q is not key=value", v, kv)
			}
			dv, err := url.PathUnescape(strings.TrimSpace(val))
			if err != nil {
				return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES=%q: value of %s: %v", v, k, err)
			}
			attrs[k] = dv
		}
	}
	exe, _ := os.Executable()
	if s := os.Getenv("OTEL_SERVICE_NAME"); s != "" {
		attrs["service.name"] = s
	} else if _, ok := attrs["service.name"]; !ok {
		attrs["service.name"] = "unknown_service:" + filepath.Base(exe)
	}
	def := func(k string, v any) {
		if _, ok := attrs[k]; !ok {
			attrs[k] = v
		}
	}
	def("process.pid", int64(os.Getpid()))
	if exe != "" {
		def("process.executable.name", filepath.Base(exe))
		def("process.executable.path", exe)
	}
	if b, err := os.ReadFile("/proc/self/cmdline"); err == nil {
		def("process.command_line", strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")))
	}
	if h, err := os.Hostname(); err == nil {
		def("host.name", h)
	}
	if runtime != "" {
		def("process.runtime.description", runtime)
		if i := strings.LastIndexByte(runtime, ' '); i > 0 {
			def("process.runtime.name", runtime[:i])
			def("process.runtime.version", runtime[i+1:])
		}
	}
	r := make(Resource, 0, len(attrs))
	for k, v := range attrs {
		r = append(r, Attr{k, v})
	}
	sort.Slice(r, func(i, j int) bool { return r[i].Key < r[j].Key })
	return r, nil
}

func attrString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprint(v)
	}
}
