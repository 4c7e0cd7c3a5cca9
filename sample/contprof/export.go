//go:build !contprof_noexport

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/clrprof/clrprof/pprofbuild/export"
)

// exporter is a profile exporter (pprofbuild/export); built with
// -tags contprof_noexport, a type that never exists (export_off.go).
type exporter = *export.Exporter

// configExport starts the exporters the environment asks for. One whose
// configuration is malformed is refused with a message naming the
// variable, and contprof runs on without it.
func (p *contprof) configExport() {
	flush, err := envInt("CONTPROF_FLUSH_TIMEOUT", 3, 0, 60)
	if err != nil {
		logf("%v; using 3", err)
		flush = 3
	}
	p.flushTimeout = time.Duration(flush) * time.Second
	pyroURL := os.Getenv("CONTPROF_PYROSCOPE_URL")
	otlpOn := os.Getenv("CONTPROF_OTLP")
	if pyroURL == "" && (otlpOn == "" || otlpOn == "0") {
		return
	}
	res, err := export.NewResource(p.runtime)
	if err != nil {
		logf("%v: not exporting; profiles go to the directory alone", err)
		return
	}
	opts := export.Options{Logf: func(f string, a ...any) { logf(f, a...) }}
	if pyroURL != "" {
		if e, err := newPyroscope(pyroURL, res, opts); err != nil {
			logf("%v: not exporting to Pyroscope", err)
		} else {
			p.exporters = append(p.exporters, e)
		}
	}
	switch otlpOn {
	case "", "0":
	case "1":
		o, timeout, err := export.OTLPOptionsFromEnv()
		if err != nil {
			logf("%v: not exporting over OTLP", err)
			break
		}
		o.Resource = res
		c, err := export.NewOTLP(o)
		if err != nil {
			logf("OTEL_EXPORTER_OTLP_ENDPOINT: %v: not exporting over OTLP", err)
			break
		}
		oo := opts
		oo.Timeout = timeout
		p.exporters = append(p.exporters, export.New(c, oo))
	default:
		logf("CONTPROF_OTLP=%q: want 1 (or 0): not exporting over OTLP", otlpOn)
	}
	for _, e := range p.exporters {
		logf("exporting to %s", e)
	}
}

// newPyroscope is the Pyroscope exporter of CONTPROF_PYROSCOPE_URL,
// CONTPROF_PYROSCOPE_AUTH ("user:password" for basic auth, else a bearer
// token) and CONTPROF_PYROSCOPE_TENANT (X-Scope-OrgID).
func newPyroscope(url string, res export.Resource, opts export.Options) (*export.Exporter, error) {
	o := export.PyroscopeOptions{URL: url, TenantID: os.Getenv("CONTPROF_PYROSCOPE_TENANT"), Resource: res,
		Names: map[string]string{"cpu": "process_cpu"}}
	if a := os.Getenv("CONTPROF_PYROSCOPE_AUTH"); a != "" {
		if strings.ContainsAny(a, "\r\n") {
			return nil, fmt.Errorf("CONTPROF_PYROSCOPE_AUTH: not a header value")
		}
		if u, pw, ok := strings.Cut(a, ":"); ok {
			o.BasicUser, o.BasicPassword = u, pw
		} else {
			o.BearerToken = a
		}
	}
	if strings.ContainsAny(o.TenantID, "\r\n") {
		return nil, fmt.Errorf("CONTPROF_PYROSCOPE_TENANT: not a header value")
	}
	c, err := export.NewPyroscope(o)
	if err != nil {
		return nil, fmt.Errorf("CONTPROF_PYROSCOPE_URL: %v", err)
	}
	return export.New(c, opts), nil
}

// exportProfile queues one profile on every exporter.
func (p *contprof) exportProfile(kind string, start time.Time, d time.Duration, b []byte) {
	for _, e := range p.exporters {
		e.Enqueue(&export.Profile{Name: kind, Start: start, End: start.Add(d), Pprof: b})
	}
}

// flushExports sends what the exporters hold, all at once, within
// CONTPROF_FLUSH_TIMEOUT, and says what each did.
func (p *contprof) flushExports() {
	if len(p.exporters) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.flushTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, e := range p.exporters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Shutdown(ctx)
		}()
	}
	wg.Wait()
	for _, e := range p.exporters {
		s := e.Stats()
		line := fmt.Sprintf("export to %s: sent=%d dropped=%d rejected=%d lost=%d retries=%d", e, s.Sent, s.Dropped, s.Rejected, s.Lost, s.Retries)
		if s.PartlyRejected > 0 {
			line += fmt.Sprintf(" partly-rejected=%d", s.PartlyRejected)
		}
		logf("%s", line)
	}
}
