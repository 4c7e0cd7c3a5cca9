// Command capprof is the profiler of heapsnap/capture's integration tests
// (capture_integration_test.go), with the app testdata/app.cs.
// CAPPROF_MODE chooses what it does; it prints on stderr, in lines
// starting "capprof: ":
//
// Mode "early": Initialize calls PrepareAtStartup and starts a goroutine
// that calls Take at once; the first ModuleLoadFinished waits (at most
// 10 s) until that Take has returned, or has come to just before its
// first ForceGC (a hook, capture.SetBeforeForceGC, that then waits
// 300 ms), before the Capturer restores the mask; the goroutine prints
// "early: E" (Take's error, or "ok"). So a Take that looked at the mask
// before the restore induces its collection after it.
//
// Built with the tag capture_testhook (the hook exists only with it).
//
// Mode "duringgc": Initialize asks for MonitorGC for good instead of
// calling PrepareAtStartup (so the app's collections are seen); in the
// GarbageCollectionStarted of the app's first
// collection (app.cs calls GC.Collect), a goroutine calls Take; the
// callback returns once that Take has come to its first ForceGC (at most
// 10 s), so the Take asks for its collection while the app's is under
// way. The goroutine prints "duringgc: ok objects=N collections=C" or
// "duringgc: E".
//
// Mode "nowalk": GarbageCollectionStarted is not passed to the Capturer,
// which so never sees a collection start: no collection is walked.
//
// In every mode, Shutdown calls Take and prints "take: ok objects=N
// collections=C" or "take: error: E", then the Capturer's Shutdown, then
// Take again: "after shutdown: E".
package main

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/clrprof/clrprof/heapsnap/capture"
	"github.com/clrprof/clrprof/profiler"
)

const clsid = "{6A1D2E3F-4B5C-4D6E-8F70-91A2B3C4D5E6}"

type capprof struct {
	*capture.Capturer
	info      *profiler.Info
	mode      string
	earlyDone chan struct{}
	reached   chan struct{}
	once      sync.Once
	gcOnce    sync.Once
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "capprof: "+format+"\n", args...)
}

func (p *capprof) Initialize(info *profiler.Info) error {
	p.mode = os.Getenv("CAPPROF_MODE")
	p.info = info
	if err := p.Capturer.Initialize(info); err != nil {
		return err
	}
	if p.mode == "duringgc" {
		if err := info.SetEventMask(profiler.MonitorGC); err != nil {
			return err
		}
	} else if err := p.PrepareAtStartup(); err != nil {
		return err
	}
	switch p.mode {
	case "duringgc":
		p.reached = make(chan struct{})
		var reached sync.Once
		capture.SetBeforeForceGC(func() { reached.Do(func() { close(p.reached) }) })
	case "early":
		p.earlyDone, p.reached = make(chan struct{}), make(chan struct{})
		var reached sync.Once
		capture.SetBeforeForceGC(func() {
			reached.Do(func() {
				close(p.reached)
				time.Sleep(300 * time.Millisecond)
			})
		})
		go func() {
			_, err := p.Take()
			if err == nil {
				logf("early: ok")
			} else {
				logf("early: %v", err)
			}
			close(p.earlyDone)
		}()
	}
	return nil
}

func (p *capprof) ModuleLoadFinished(moduleID profiler.ModuleID, status profiler.HRESULT) error {
	if p.earlyDone != nil {
		p.once.Do(func() {
			select {
			case <-p.earlyDone:
			case <-p.reached:
			case <-time.After(10 * time.Second):
				logf("early: Take neither returned nor came to ForceGC within 10s")
			}
		})
	}
	if err := p.Capturer.ModuleLoadFinished(moduleID, status); err != nil {
		return err
	}
	return nil
}

func (p *capprof) GarbageCollectionStarted(generationCollected []bool, reason profiler.GCReason) error {
	switch p.mode {
	case "nowalk":
		return nil
	case "duringgc":
		if reason == profiler.GCInduced {
			p.gcOnce.Do(func() {
				returned := make(chan struct{})
				go func() {
					defer close(returned)
					s, err := p.Take()
					if err != nil {
						logf("duringgc: %v", err)
					} else {
						logf("duringgc: ok objects=%d collections=%d", s.NumObjects(), p.LastStats().Collections)
					}
				}()
				select {
				case <-p.reached:
				case <-returned:
				case <-time.After(10 * time.Second):
					logf("duringgc: Take did not come to ForceGC within 10s")
				}
			})
		}
	}
	return p.Capturer.GarbageCollectionStarted(generationCollected, reason)
}

func (p *capprof) Shutdown() error {
	s, err := p.Take()
	if err != nil {
		logf("take: error: %v", err)
	} else {
		logf("take: ok objects=%d collections=%d", s.NumObjects(), p.LastStats().Collections)
	}
	err = p.Capturer.Shutdown()
	_, after := p.Take()
	logf("after shutdown: %v", after)
	return err
}

func init() {
	if err := profiler.Register(clsid, &capprof{Capturer: capture.New(capture.Options{})}); err != nil {
		logf("%v", err)
	}
}

func main() {}
