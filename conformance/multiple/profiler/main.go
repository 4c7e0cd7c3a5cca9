// Command profiler is the profiler of the multiple and multipledetach
// scenarios: one library loaded as several notification-only profilers at
// start-up and attached several more times, each load a profiler object
// with a state of its own (RegisterFactory). Each object asks for exception
// events and must see the app's exception once. With MULTIPLE_MODE=detach
// (upstream's test) each object then asks to detach (from a goroutine, as
// upstream does from a thread of its own) and the verdict comes when as
// many objects as MULTIPLE_EXPECTED says have detached; with
// MULTIPLE_MODE=shutdown they stay, and the verdict comes when the last of
// them shuts down.
package main

import (
	"os"
	"strconv"
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

var (
	expected                    = func() int64 { n, _ := strconv.Atoi(os.Getenv("MULTIPLE_EXPECTED")); return int64(n) }()
	detaching                   = os.Getenv("MULTIPLE_MODE") == "detach"
	objects, seen, detach, shut atomic.Int64
)

type multiple struct {
	profiler.Base
	info   *profiler.Info
	id     int64 // 1, 2, ... in the order the objects were initialized
	thrown atomic.Int64
}

func (p *multiple) start(info *profiler.Info, how string) error {
	p.info = info
	p.id = objects.Add(1)
	check.Logf("profiler object %d initialized (%s)", p.id, how)
	if err := info.SetEventMask(profiler.MonitorExceptions); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

func (p *multiple) Initialize(info *profiler.Info) error { return p.start(info, "start-up") }

func (p *multiple) InitializeForAttach(info *profiler.Info, _ []byte) error {
	return p.start(info, "attach")
}

func (p *multiple) LoadAsNotificationOnly() (bool, error) { return true, nil }

func (p *multiple) ExceptionThrown(profiler.ObjectID) error {
	if p.thrown.Add(1) != 1 {
		check.Failf("a profiler object saw the exception twice")
		return nil
	}
	seen.Add(1)
	if !detaching {
		return nil
	}
	go func() {
		if err := <-p.info.RequestDetach(0); err != nil {
			check.Failf("RequestDetach: %v", err)
			return
		}
		check.Logf("profiler object %d requested its detach", p.id)
	}()
	return nil
}

func (p *multiple) ProfilerDetachSucceeded() error {
	n := detach.Add(1)
	check.Logf("profiler object %d detached (%d of %d)", p.id, n, expected)
	if !detaching {
		check.Failf("profiler object %d detached without having asked to", p.id)
	}
	if n == expected {
		verdict()
	}
	return nil
}

func (p *multiple) Shutdown() error {
	n := shut.Add(1)
	check.Logf("profiler object %d shut down (%d of %d)", p.id, n, expected)
	if detaching {
		check.Failf("profiler object %d was shut down instead of detached (%d of %d detached)", p.id, detach.Load(), expected)
	}
	if n == expected {
		verdict()
	}
	return nil
}

// verdict checks that every object expected was initialized and saw the
// exception once.
func verdict() {
	var final []string
	if objects.Load() != expected {
		final = append(final, "objects initialized: "+strconv.FormatInt(objects.Load(), 10)+", want "+strconv.FormatInt(expected, 10))
	}
	if seen.Load() != expected {
		final = append(final, "objects that saw the exception: "+strconv.FormatInt(seen.Load(), 10)+", want "+strconv.FormatInt(expected, 10))
	}
	check.Done(final...)
}

func init() {
	profiler.RegisterFactory("{6F2B8D41-9C3E-4A57-B1D8-7E4F2A9C5B12}", func() profiler.Callback { return &multiple{} })
}

func main() {}
