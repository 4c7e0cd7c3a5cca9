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
// the report says so), HEAPSNAP_SPILL_AFTER (a snapshot of more objects is
// written to a temporary file in HEAPSNAP_DIR during the walk and read back
// after it, so that its memory does not grow with the heap during the
// pause; default 1000000, 0: never), HEAPSNAP_TOP (lines per table,
// default 20).
//
// Each snapshot induces a full blocking collection with the runtime's
// heap walk on: the application pauses for it (the report gives the
// pause). The runtime allows the walk only without background GC, which
// heapsnap therefore turns off when it loads (as DOTNET_gcConcurrent=0
// would): the application's full collections are blocking ones. A snapshot asked for while one is taken is skipped and said so.
// Messages go to stderr, prefixed "heapsnap: ".
//
// Attached to a running process (.NET Core 3.0 and later:
// diag.AttachProfiler, or dotnet-trace's and the diagnostics client's
// attach), heapsnap reads the same variables from the client data
// ("HEAPSNAP_DIR=/tmp/snaps HEAPSNAP_EXIT=0", space-separated; package
// heapsnap/capture, PrepareAtAttach).
//
// Build and run (the CLSID is heapsnap's):
//
//	go build -buildmode=c-shared -o libheapsnap.so ./sample/heapsnap
//	CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={3B9E4C2A-7D15-4E68-9A0F-5C2B8D1E6F47} \
//	CORECLR_PROFILER_PATH=$PWD/libheapsnap.so HEAPSNAP_DIR=/tmp/snaps dotnet app.dll
//	kill -USR2 <pid>
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/heapsnap/capture"
	"github.com/clrprof/clrprof/profiler"
)

const clsid = "{3B9E4C2A-7D15-4E68-9A0F-5C2B8D1E6F47}"

type heapsnapProfiler struct {
	*capture.Capturer
	series *capture.Series
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "heapsnap: "+format+"\n", args...)
}

// config reads the HEAPSNAP_* variables: from the environment, or after
// an attach from the client data ("HEAPSNAP_DIR=/tmp/snaps
// HEAPSNAP_INTERVAL=1m", space-separated), which win over it.
type config func(name string) string

func envConfig(name string) string { return os.Getenv(name) }

func clientConfig(data []byte) config {
	kv := map[string]string{}
	for _, f := range strings.Fields(string(data)) {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		}
	}
	return func(name string) string {
		if v, ok := kv[name]; ok {
			return v
		}
		return os.Getenv(name)
	}
}

func (get config) bool(name string, def bool) bool {
	switch get(name) {
	case "0", "false":
		return false
	case "1", "true":
		return true
	}
	return def
}

// capturer makes the Capturer of HEAPSNAP_DIR, HEAPSNAP_MAX_OBJECTS and
// HEAPSNAP_SPILL_AFTER.
func (get config) capturer() (*capture.Capturer, error) {
	opts := capture.Options{SpillDir: get("HEAPSNAP_DIR")}
	if opts.SpillDir == "" {
		opts.SpillDir = "."
	}
	if v := get("HEAPSNAP_MAX_OBJECTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("HEAPSNAP_MAX_OBJECTS=%q: want a positive integer", v)
		}
		opts.MaxObjects = n
	}
	if v := get("HEAPSNAP_SPILL_AFTER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("HEAPSNAP_SPILL_AFTER=%q: want a number of objects (0: never spill)", v)
		}
		if n == 0 {
			opts.SpillDir = ""
		}
		opts.SpillAfter = n
	}
	return capture.New(opts), nil
}

func (p *heapsnapProfiler) Initialize(info *profiler.Info) error {
	if err := p.Capturer.Initialize(info); err != nil {
		return err
	}
	return p.start(envConfig, p.PrepareAtStartup)
}

// InitializeForAttach: heapsnap attached to a running process
// (diag.AttachProfiler, .NET Core 3.0 and later) takes its settings from
// the client data (capture.Capturer.PrepareAtAttach).
func (p *heapsnapProfiler) InitializeForAttach(info *profiler.Info, clientData []byte) error {
	get := clientConfig(clientData)
	c, err := get.capturer()
	if err != nil {
		logf("%v; not attaching", err)
		return err
	}
	p.Capturer = c
	if err := p.Capturer.InitializeForAttach(info, clientData); err != nil {
		return err
	}
	if err := p.start(get, p.PrepareAtAttach); err != nil {
		return err
	}
	dir := get("HEAPSNAP_DIR")
	if dir == "" {
		dir = "."
	}
	logf("attached to pid %d: snapshots into %s", os.Getpid(), dir)
	return nil
}

func (p *heapsnapProfiler) start(get config, prepare func() error) error {
	opts := capture.SeriesOptions{Dir: get("HEAPSNAP_DIR"), Logf: logf}
	if v := get("HEAPSNAP_TOP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("heapsnap: HEAPSNAP_TOP=%q: want a positive integer", v)
		}
		opts.Top = n
	}
	trig := capture.Triggers{AtExit: get.bool("HEAPSNAP_EXIT", true)}
	if get.bool("HEAPSNAP_SIGNAL", true) {
		trig.Signal = syscall.SIGUSR2
	}
	if v := get("HEAPSNAP_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("heapsnap: HEAPSNAP_INTERVAL=%q: want a positive duration like 30s", v)
		}
		trig.Every = d
	}
	if v := get("HEAPSNAP_THRESHOLD"); v != "" {
		n, err := capture.ParseSize(v)
		if err != nil {
			return fmt.Errorf("heapsnap: HEAPSNAP_THRESHOLD: %w", err)
		}
		trig.Above = n
	}
	series, err := capture.NewSeries(p.Capturer, opts)
	if err != nil {
		return fmt.Errorf("heapsnap: HEAPSNAP_DIR: %w", err)
	}
	p.series = series
	// The runtime allows the heap walk later only when background
	// (concurrent) GC is off, which it turns off when a profiler asks for
	// the walk as it initializes or attaches.
	if err := prepare(); err != nil {
		logf("%v", err)
		return err
	}
	series.Start(trig)
	return nil
}

// Shutdown stops the triggers (one running finishes), then takes the exit
// snapshot.
func (p *heapsnapProfiler) Shutdown() error {
	if p.series != nil {
		p.series.Shutdown()
	}
	return p.Capturer.Shutdown()
}

func init() {
	c, err := config(envConfig).capturer()
	if err != nil {
		logf("%v; not loading", err)
		return
	}
	if err := profiler.Register(clsid, &heapsnapProfiler{Capturer: c}); err != nil {
		logf("%v", err)
	}
}

func main() {}
