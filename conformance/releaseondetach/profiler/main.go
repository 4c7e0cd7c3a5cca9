// Command profiler is the releaseondetach scenario's profiler: attached to
// a running app, it sets an event mask allowed after attach, asks to
// detach as soon as the attach completes, and passes when the runtime,
// after ProfilerDetachSucceeded, releases the profiler object (Released,
// the Go form of upstream's destructor).
package main

import (
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type releaseondetach struct {
	profiler.Base
	info     *profiler.Info
	attached atomic.Bool
	detached atomic.Bool
}

func (p *releaseondetach) Initialize(*profiler.Info) error {
	check.Failf("loaded at start-up: this profiler only attaches")
	return profiler.E_FAIL
}

func (p *releaseondetach) InitializeForAttach(info *profiler.Info, clientData []byte) error {
	p.info = info
	p.attached.Store(true)
	check.Logf("initialize for attach (client data %q)", clientData)
	if err := info.SetAttachEventMask(profiler.MonitorModuleLoads, 0); err != nil {
		check.Failf("SetAttachEventMask: %v", err)
		return err
	}
	return nil
}

func (p *releaseondetach) ProfilerAttachComplete() error {
	if err := <-p.info.RequestDetach(0); err != nil {
		check.Failf("RequestDetach: %v", err)
	}
	return nil
}

func (p *releaseondetach) ProfilerDetachSucceeded() error {
	check.Logf("profiler detach succeeded")
	p.detached.Store(true)
	return nil
}

func (p *releaseondetach) Shutdown() error {
	check.Failf("Shutdown called: the profiler was not detached")
	return nil
}

// Released runs when the runtime drops its last reference to the profiler.
func (p *releaseondetach) Released() {
	var final []string
	if !p.attached.Load() {
		final = append(final, "released without having been attached")
	}
	if !p.detached.Load() {
		final = append(final, "released before ProfilerDetachSucceeded")
	}
	check.Done(final...)
}

func init() {
	profiler.Register("{E1A4C7B3-8D25-4F6E-A9B0-3C7D5E2F8A10}", &releaseondetach{})
}

func main() {}
