// Command snapprof is the profiler of the snapshot timing test: from
// Initialize to Shutdown a goroutine calls Info.Snapshot every
// millisecond, checks each result's timing against the time the call
// took, and at Shutdown prints
//
//	snapprof: snapshots=N ok=K retried=R waited=W suspending=S held=H bad=B
//
// with R the snapshots that retried SuspendRuntime, W, S and H the totals
// of Waited, Suspending and Held, and B the snapshots whose timing did not add up
// (each also printed as "snapprof: bad ..."), then "skipped_all=S
// panics=P": every tenth snapshot (SnapshotThreads) walks no thread and
// S counts those whose stacks were all Skipped, and another tenth have a
// walk function that panics, P counting those that returned the panic as
// an error (up to five; one that met a suspension first does not count). Where Snapshot is not available it
// prints "snapprof: unavailable: ERR".
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

type snapprof struct {
	profiler.Base
	info       *profiler.Info
	stop, done chan struct{}

	n, ok, retried, bad      int
	skipOK, panicOK          int
	waited, suspending, held time.Duration
}

func (p *snapprof) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask(profiler.EnableStackSnapshot); err != nil {
		return err
	}
	if _, err := info.Snapshot(8); errors.Is(err, profiler.ErrNotAvailable) {
		fmt.Fprintf(os.Stderr, "snapprof: unavailable: %v\n", err)
		return nil
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.loop()
	return nil
}

func (p *snapprof) loop() {
	defer close(p.done)
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.one()
		}
	}
}

// one takes a snapshot and checks its timing: Waited, Suspending and
// Held are parts of the call's time that do not overlap; each retry
// sleeps, in Waited; a snapshot that succeeded
// suspended and held the runtime for some time, and Cost is Suspending
// and Held.
func (p *snapprof) one() {
	switch p.n % 10 {
	case 3:
		p.skipAll()
		return
	case 7:
		if p.panicOK < 5 {
			p.panicking()
			return
		}
	}
	t0 := time.Now()
	s, err := p.info.Snapshot(64)
	elapsed := time.Since(t0)
	p.n++
	if err == nil {
		p.ok++
	}
	if s.Retries > 0 {
		p.retried++
	}
	p.waited += s.Waited
	p.suspending += s.Suspending
	p.held += s.Held
	var why string
	switch {
	case s.Waited+s.Suspending+s.Held > elapsed:
		why = "waited+suspending+held longer than the call"
	case s.Cost() != s.Suspending+s.Held:
		why = "cost is not suspending+held"
	case err == nil && (s.Held <= 0 || s.Suspending <= 0):
		why = "succeeded without suspending or holding"
	case err == nil && len(s.Stacks) == 0:
		why = "no stacks"
	case s.Retries > 0 && s.Waited < time.Duration(s.Retries)*250*time.Microsecond:
		why = "retried without waiting"
	}
	if why != "" {
		p.bad++
		fmt.Fprintf(os.Stderr, "snapprof: bad %s: elapsed=%v waited=%v suspending=%v held=%v retries=%d err=%v\n", why, elapsed, s.Waited, s.Suspending, s.Held, s.Retries, err)
	}
}

// skipAll takes a snapshot that walks no thread: every stack is Skipped,
// without frames.
func (p *snapprof) skipAll() {
	p.n++
	calls := 0
	s, err := p.info.SnapshotThreads(64, func(profiler.ThreadID, uint32) bool { calls++; return false })
	if err != nil {
		return // a suspension in the way, as for any snapshot
	}
	for _, t := range s.Stacks {
		if !t.Skipped || len(t.Frames) != 0 || t.Err != nil {
			p.bad++
			fmt.Fprintf(os.Stderr, "snapprof: bad skipped thread %+v\n", t)
			return
		}
	}
	if calls != len(s.Stacks) || calls == 0 {
		p.bad++
		fmt.Fprintf(os.Stderr, "snapprof: bad walk calls %d for %d threads\n", calls, len(s.Stacks))
		return
	}
	p.skipOK++
}

// panicking takes a snapshot whose walk function panics: an error, and
// the runtime resumed (the app goes on, the next snapshots succeed).
func (p *snapprof) panicking() {
	p.n++
	_, err := p.info.SnapshotThreads(64, func(profiler.ThreadID, uint32) bool { panic("snapprof: walk") })
	switch {
	case err == nil:
		p.bad++
		fmt.Fprintf(os.Stderr, "snapprof: bad: a panicking walk gave no error\n")
	case strings.Contains(err.Error(), "panicked: snapprof: walk"):
		p.panicOK++
	}
}

func (p *snapprof) Shutdown() error {
	if p.stop == nil {
		return nil
	}
	close(p.stop)
	<-p.done
	fmt.Fprintf(os.Stderr, "snapprof: snapshots=%d ok=%d retried=%d waited=%v suspending=%v held=%v bad=%d skipped_all=%d panics=%d\n", p.n, p.ok, p.retried, p.waited, p.suspending, p.held, p.bad, p.skipOK, p.panicOK)
	return nil
}

func init() { profiler.Register("{4E8A1C37-92B5-4D60-A7F3-1B6C9D2E5F08}", &snapprof{}) }

func main() {}
