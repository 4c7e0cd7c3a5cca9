package capture

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clrprof/clrprof/heapsnap"
)

// SeriesOptions configure a Series.
type SeriesOptions struct {
	// Dir is where snapshot N is written, as heap-N.pb.gz and heap-N.txt
	// (default the working directory; created if missing).
	Dir string
	// Top is the number of lines per table of the reports (default 20).
	Top int
	// Logf is where the Series says what it did, one line per snapshot
	// taken, skipped or failed (default: stderr, prefixed "heapsnap: ").
	Logf func(format string, args ...any)
}

// A Series takes numbered snapshots with a Capturer and writes each into
// a directory: heap-N.pb.gz (pprof: objects/count, shallow/bytes and
// retained/bytes by type along the retention path) and heap-N.txt (the
// report; from the second on, with what grew since the one before and
// what holds the growth). Its triggers (Every, Above, OnSignal) run on
// goroutines of their own until Stop. Snapshots are taken one at a time:
// one asked for while another is taken is skipped and said so.
type Series struct {
	c    *Capturer
	opts SeriesOptions

	mu   sync.Mutex // serializes snapshots and their numbering
	n    int
	prev *heapsnap.Analysis

	atExit   bool // Start's Triggers.AtExit
	stopOnce sync.Once
	stop     chan struct{}
	sigMu    sync.Mutex
	sigs     []chan os.Signal
	wg       sync.WaitGroup
}

// NewSeries returns a Series that takes its snapshots with c.
func NewSeries(c *Capturer, opts SeriesOptions) (*Series, error) {
	if opts.Dir == "" {
		opts.Dir = "."
	}
	if opts.Top <= 0 {
		opts.Top = 20
	}
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "heapsnap: "+format+"\n", args...)
		}
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("heapsnap/capture: %w", err)
	}
	return &Series{c: c, opts: opts, stop: make(chan struct{})}, nil
}

// Triggers say when a Series takes snapshots.
type Triggers struct {
	Signal syscall.Signal // one whenever the process gets it (0: none; SIGUSR2 is the one .NET leaves free)
	Every  time.Duration  // one every interval (0: none)
	Above  uint64         // one when the GC heap in use first passes this many bytes, then at each doubling (0: none)
	AtExit bool           // one at Shutdown
}

// Start starts the triggers of t (Shutdown takes the one at exit).
func (s *Series) Start(t Triggers) {
	s.atExit = t.AtExit
	if t.Signal != 0 {
		s.OnSignal(t.Signal)
	}
	if t.Every > 0 {
		s.Every(t.Every)
	}
	if t.Above > 0 {
		s.Above(t.Above)
	}
}

// Shutdown stops the triggers (a snapshot one of them is taking finishes)
// and takes the snapshot at exit when Start's Triggers asked for it. Call
// it from the profiler's Shutdown, before the Capturer's.
func (s *Series) Shutdown() {
	s.Stop()
	if s.atExit {
		s.SnapshotWait("exit")
	}
}

// OnSignal takes a snapshot whenever the process gets sig (SIGUSR2 is
// the one the .NET runtime leaves free), until Stop. The reports give the
// signal's name (unix.SignalName: "SIGUSR2").
func (s *Series) OnSignal(sig syscall.Signal) {
	name := unix.SignalName(sig)
	if name == "" {
		name = sig.String()
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sig)
	s.sigMu.Lock()
	s.sigs = append(s.sigs, ch)
	s.sigMu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-ch:
				s.Snapshot(name)
			case <-s.stop:
				return
			}
		}
	}()
}

// Every takes a snapshot every d, until Stop.
func (s *Series) Every(d time.Duration) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				s.Snapshot("interval " + d.String())
			case <-s.stop:
				return
			}
		}
	}()
}

// Above takes a snapshot when the GC heap's size in use first reaches
// threshold bytes, then at each doubling; it looks once a second, until
// Stop.
func (s *Series) Above(threshold uint64) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-s.stop:
				return
			}
			if s.c.info == nil {
				continue
			}
			ranges, err := s.c.info.GetGenerationBounds()
			if err != nil {
				continue // during a collection the bounds are not available
			}
			var used uint64
			for _, r := range ranges {
				used += r.RangeLength
			}
			if used >= threshold {
				s.Snapshot(fmt.Sprintf("heap at %d bytes passed %d", used, threshold))
				threshold *= 2
			}
		}
	}()
}

// Stop stops the triggers and waits for them (a snapshot one of them is
// taking finishes first). Later calls do nothing.
func (s *Series) Stop() {
	s.stopOnce.Do(func() {
		close(s.stop)
		s.sigMu.Lock()
		for _, ch := range s.sigs {
			signal.Stop(ch)
		}
		s.sigMu.Unlock()
		s.wg.Wait()
	})
}

// Snapshot takes and writes one snapshot, why saying what asked for it;
// if one is being taken it is skipped (said so).
func (s *Series) Snapshot(why string) {
	if !s.mu.TryLock() {
		s.opts.Logf("snapshot (%s) skipped: one is being taken", why)
		return
	}
	defer s.mu.Unlock()
	s.take(why)
}

// SnapshotWait is Snapshot, but waits for a snapshot being taken to
// finish instead of skipping (for the one at exit).
func (s *Series) SnapshotWait(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.take(why)
}

// take runs with s.mu held.
func (s *Series) take(why string) {
	logf := s.opts.Logf
	snap, err := s.c.Take()
	if errors.Is(err, ErrNotStarted) {
		logf("snapshot (%s) skipped: the runtime has not finished starting", why)
		return
	}
	if errors.Is(err, ErrShutdown) {
		logf("snapshot (%s) skipped: the runtime is shutting down", why)
		return
	}
	if err != nil {
		logf("snapshot (%s) failed: %v", why, err)
		return
	}
	s.n++
	n := s.n
	snap.Meta["trigger"] = why
	st := s.c.LastStats()
	a := snap.Analyze()
	var rep bytes.Buffer
	fmt.Fprintf(&rep, "heap snapshot %d (%s): pause %v, built in %v\n", n, why, st.Pause.Round(time.Microsecond), st.Build.Round(time.Microsecond))
	if err := a.Report(&rep, s.opts.Top); err != nil {
		logf("report: %v", err)
	}
	if s.prev != nil {
		fmt.Fprintf(&rep, "\nSince snapshot %d:\n", n-1)
		if err := heapsnap.Diff(s.prev, a).Report(&rep, s.opts.Top); err != nil {
			logf("diff: %v", err)
		}
	}
	s.prev = a
	txt := filepath.Join(s.opts.Dir, fmt.Sprintf("heap-%d.txt", n))
	if err := os.WriteFile(txt, rep.Bytes(), 0o644); err != nil {
		logf("%v", err)
	}
	pb := filepath.Join(s.opts.Dir, fmt.Sprintf("heap-%d.pb.gz", n))
	f, err := os.Create(pb)
	if err == nil {
		err = a.Profile(time.Now()).Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		logf("%s: %v", pb, err)
	}
	logf("snapshot %d (%s): %d objects, %d bytes, pause %v: %s, %s", n, why, snap.NumObjects(), snap.TotalBytes(), st.Pause.Round(time.Microsecond), txt, pb)
}

// ParseSize reads a size like 512M, 2G, 64K or 100000 (bytes), as
// thresholds are written in environment variables.
func ParseSize(v string) (uint64, error) {
	mult, num := uint64(1), v
	switch {
	case len(num) > 0 && num[len(num)-1] == 'K':
		mult, num = 1<<10, num[:len(num)-1]
	case len(num) > 0 && num[len(num)-1] == 'M':
		mult, num = 1<<20, num[:len(num)-1]
	case len(num) > 0 && num[len(num)-1] == 'G':
		mult, num = 1<<30, num[:len(num)-1]
	}
	var n uint64
	if _, err := fmt.Sscanf(num, "%d", &n); err != nil || n == 0 || fmt.Sprint(n) != num {
		return 0, fmt.Errorf("want a positive size like 512M, got %q", v)
	}
	return n * mult, nil
}
