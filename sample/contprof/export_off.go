//go:build contprof_noexport

package main

import (
	"os"
	"time"
)

// Built with -tags contprof_noexport, contprof writes profiles to its
// directory alone: the exporters (Pyroscope's push API, OTLP over gRPC and
// HTTP) and what they link (net/http, TLS, HTTP/2) are left out of the
// library, which makes it 11 MB instead of 17 MB and its resident pages
// about 4.5 MiB fewer (docs/cost.md, "Memory"). A variable that
// asks for an exporter is reported, never ignored silently.

// exporter is never made in this build.
type exporter interface{ String() string }

func (p *contprof) configExport() {
	for _, v := range []string{"CONTPROF_PYROSCOPE_URL", "CONTPROF_OTLP"} {
		if s := os.Getenv(v); s != "" && s != "0" {
			logf("%s=%s: not exporting: this library was built with -tags contprof_noexport, without exporters; profiles go to the directory alone", v, s)
		}
	}
}

func (p *contprof) exportProfile(kind string, start time.Time, d time.Duration, b []byte) {}

func (p *contprof) flushExports() {}
