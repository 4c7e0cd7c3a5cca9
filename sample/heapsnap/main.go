// Command heapsnap is a profiler that takes heap snapshots of an
// application loaded unchanged: every live object with its type, size and
// references and the roots that hold them, analysed into what retains
// each byte (package heapsnap).
//
// Snapshot N (1, 2, ...) is written to HEAPSNAP_DIR as
//
//	heap-N.pb.gz  pprof, sample types objects/count, shallow/bytes and
//	              retained/bytes, one sample per type and retention path,
//	              the path from the root kind to the type as its stack
//	              (go tool pprof -http=: heap-N.pb.gz shows it as a flame graph)
//	heap-N.txt    the report: totals, types by retained size, the largest
//	              retainers with their paths; from snapshot 2 on, what grew
//	              since the one before and the paths that hold the growth
//
// When snapshots are taken:
//
//	SIGUSR2                 a snapshot whenever the process gets it (HEAPSNAP_SIGNAL=0: never)
//	at exit                 one when the runtime shuts down, SIGTERM included (HEAPSNAP_EXIT=0: not)
//	HEAPSNAP_INTERVAL=30s   one every interval (default none)
//	HEAPSNAP_THRESHOLD=512M one when the GC heap first passes this size, then at each
//	                        doubling (K, M, G suffixes; checked once a second; default none)
//
// Other variables: HEAPSNAP_DIR (default the working directory),
// HEAPSNAP_MAX_OBJECTS (refuse heaps with more objects, default 20000000:
// the report says so), HEAPSNAP_TOP (lines per table, default 20).
//
// Each snapshot induces a full blocking collection with the runtime's
// heap walk on: the application pauses for it (the report gives the
// pause). The runtime allows the walk only without background GC, which
// heapsnap therefore turns off when it loads (as DOTNET_gcConcurrent=0
// would): the application's full collections are blocking ones. A snapshot asked for while one is taken is skipped and said so.
// Messages go to stderr, prefixed "heapsnap: ".
//
// Build and run (the CLSID is heapsnap's):
//
//	go build -buildmode=c-shared -o libheapsnap.so ./sample/heapsnap
//	CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={3B9E4C2A-7D15-4E68-9A0F-5C2B8D1E6F47} \
//	CORECLR_PROFILER_PATH=$PWD/libheapsnap.so HEAPSNAP_DIR=/tmp/snaps dotnet app.dll
//	kill -USR2 <pid>
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/heapsnap"
	"github.com/clrprof/clrprof/heapsnap/capture"
	"github.com/clrprof/clrprof/profiler"
)

const clsid = "{3B9E4C2A-7D15-4E68-9A0F-5C2B8D1E6F47}"

type heapsnapProfiler struct {
	*capture.Capturer
	info *profiler.Info
	dir  string
	top  int

	mu   sync.Mutex // serializes snapshots and their numbering
	n    int
	prev *heapsnap.Analysis
	stop chan struct{}
	sig  chan os.Signal
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "heapsnap: "+format+"\n", args...)
}

func envBool(name string, def bool) bool {
	switch os.Getenv(name) {
	case "0", "false":
		return false
	case "1", "true":
		return true
	}
	return def
}

// parseSize reads 512M, 2G, 100000 (bytes).
func parseSize(s string) (uint64, error) {
	mult := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("want a positive size like 512M, got %q", s)
	}
	return n * mult, nil
}

func (p *heapsnapProfiler) Initialize(info *profiler.Info) error {
	p.info = info
	if err := p.Capturer.Initialize(info); err != nil {
		return err
	}
	p.dir = os.Getenv("HEAPSNAP_DIR")
	if p.dir == "" {
		p.dir = "."
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return fmt.Errorf("heapsnap: HEAPSNAP_DIR: %w", err)
	}
	p.top = 20
	if v := os.Getenv("HEAPSNAP_TOP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("heapsnap: HEAPSNAP_TOP=%q: want a positive integer", v)
		}
		p.top = n
	}
	// The heap walk is turned on only while a snapshot is taken. The
	// runtime allows that later only when background (concurrent) GC is
	// off, which it turns off when a profiler asks for the walk while it
	// initializes: so ask now, and stop at once.
	if err := p.PrepareAtStartup(); err != nil {
		return err
	}
	p.stop = make(chan struct{})
	if envBool("HEAPSNAP_SIGNAL", true) {
		p.sig = make(chan os.Signal, 1)
		signal.Notify(p.sig, syscall.SIGUSR2)
		go func() {
			for {
				select {
				case <-p.sig:
					p.snapshot("SIGUSR2")
				case <-p.stop:
					return
				}
			}
		}()
	}
	if v := os.Getenv("HEAPSNAP_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("heapsnap: HEAPSNAP_INTERVAL=%q: want a positive duration like 30s", v)
		}
		go p.every(d)
	}
	if v := os.Getenv("HEAPSNAP_THRESHOLD"); v != "" {
		n, err := parseSize(v)
		if err != nil {
			return fmt.Errorf("heapsnap: HEAPSNAP_THRESHOLD: %w", err)
		}
		go p.watch(n)
	}
	return nil
}

func (p *heapsnapProfiler) every(d time.Duration) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.snapshot("interval " + d.String())
		case <-p.stop:
			return
		}
	}
}

// watch takes a snapshot when the GC heap's size in use first reaches
// threshold, then at each doubling.
func (p *heapsnapProfiler) watch(threshold uint64) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-p.stop:
			return
		}
		ranges, err := p.info.GetGenerationBounds()
		if err != nil {
			continue // during a collection the bounds are not available
		}
		var used uint64
		for _, r := range ranges {
			used += r.RangeLength
		}
		if used >= threshold {
			p.snapshot(fmt.Sprintf("heap at %d bytes passed %d", used, threshold))
			threshold *= 2
		}
	}
}

// Shutdown takes the exit snapshot, then stops the triggers.
func (p *heapsnapProfiler) Shutdown() error {
	// no new triggers; one already running finishes, and the exit
	// snapshot waits for it
	close(p.stop)
	if p.sig != nil {
		signal.Stop(p.sig)
	}
	if envBool("HEAPSNAP_EXIT", true) {
		p.snapshot("exit")
	}
	return p.Capturer.Shutdown()
}

// snapshot takes and writes one snapshot; one asked for while another is
// taken is skipped (said so), except the exit snapshot, which waits.
func (p *heapsnapProfiler) snapshot(why string) {
	if why == "exit" {
		p.mu.Lock()
	} else if !p.mu.TryLock() {
		logf("snapshot (%s) skipped: one is being taken", why)
		return
	}
	defer p.mu.Unlock()
	s, err := p.Take()
	if errors.Is(err, capture.ErrNotStarted) {
		logf("snapshot (%s) skipped: the runtime has not finished starting", why)
		return
	}
	if errors.Is(err, capture.ErrShutdown) {
		logf("snapshot (%s) skipped: the runtime is shutting down", why)
		return
	}
	if err != nil {
		logf("snapshot (%s) failed: %v", why, err)
		return
	}
	p.n++
	n := p.n
	s.Meta["trigger"] = why
	st := p.LastStats()
	a := s.Analyze()
	var rep bytes.Buffer
	fmt.Fprintf(&rep, "heap snapshot %d (%s): pause %v, built in %v\n", n, why, st.Pause.Round(time.Microsecond), st.Build.Round(time.Microsecond))
	if err := a.Report(&rep, p.top); err != nil {
		logf("report: %v", err)
	}
	if p.prev != nil {
		fmt.Fprintf(&rep, "\nSince snapshot %d:\n", n-1)
		if err := heapsnap.Diff(p.prev, a).Report(&rep, p.top); err != nil {
			logf("diff: %v", err)
		}
	}
	p.prev = a
	txt := filepath.Join(p.dir, fmt.Sprintf("heap-%d.txt", n))
	if err := os.WriteFile(txt, rep.Bytes(), 0o644); err != nil {
		logf("%v", err)
	}
	pb := filepath.Join(p.dir, fmt.Sprintf("heap-%d.pb.gz", n))
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
	logf("snapshot %d (%s): %d objects, %d bytes, pause %v: %s, %s", n, why, s.NumObjects(), s.TotalBytes(), st.Pause.Round(time.Microsecond), txt, pb)
}

func init() {
	p := &heapsnapProfiler{Capturer: capture.New(capture.Options{})}
	if v := os.Getenv("HEAPSNAP_MAX_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			logf("HEAPSNAP_MAX_OBJECTS=%q: want a positive integer; not loading", v)
			return
		}
		p.Capturer = capture.New(capture.Options{MaxObjects: n})
	}
	if err := profiler.Register(clsid, p); err != nil {
		logf("%v", err)
	}
}

func main() {}
