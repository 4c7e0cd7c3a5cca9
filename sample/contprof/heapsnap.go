package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/heapsnap/capture"
	"github.com/clrprof/clrprof/profiler"
)

// With CONTPROF_HEAPSNAP set, heap snapshots (package heapsnap: every
// live object, what retains each byte) are taken beside the profiles, by
// a member composed with contprof (profiler.Compose) that owns its own
// event mask. Off by default: being able to take one turns background GC
// off for the life of the process (the runtime allows the heap walk only
// then), and each one pauses the app for a full blocking collection.
var _ = os.Getenv("CONTPROF_HEAPSNAP") != "" && addWith(func() profiler.Callback {
	// the Capturer exists before Compose binds the member's methods
	return &heapsnapMember{Capturer: capture.New(capture.Options{SpillDir: heapsnapDir()})}
})

// heapsnapMember takes the snapshots CONTPROF_HEAPSNAP asks for: a comma
// list of triggers, "signal" (SIGUSR2), "exit", "every=DURATION" (every=10m),
// "above=SIZE" (above=1G: when the GC heap first passes SIZE, then at each
// doubling). They go to CONTPROF_HEAPSNAP_DIR (default CONTPROF_DIR/heapsnap,
// or contprof/heapsnap) as heap-N.pb.gz and heap-N.txt, as sample/heapsnap
// writes them.
type heapsnapMember struct {
	*capture.Capturer
	series *capture.Series
}

// heapsnapDir is where the snapshots go (and large ones spill while they
// are taken).
func heapsnapDir() string {
	if dir := os.Getenv("CONTPROF_HEAPSNAP_DIR"); dir != "" {
		return dir
	}
	base := os.Getenv("CONTPROF_DIR")
	if base == "" {
		base = "contprof"
	}
	return filepath.Join(base, "heapsnap")
}

func heapsnapLogf(format string, args ...any) { logf("heapsnap "+format, args...) }

func (m *heapsnapMember) Initialize(info *profiler.Info) error {
	if err := m.Capturer.Initialize(info); err != nil {
		return err
	}
	var trig capture.Triggers
	for _, t := range strings.Split(os.Getenv("CONTPROF_HEAPSNAP"), ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(t), "=")
		var err error
		switch name {
		case "signal":
			trig.Signal = syscall.SIGUSR2
		case "exit":
			trig.AtExit = true
		case "every":
			trig.Every, err = time.ParseDuration(val)
			if err == nil && trig.Every <= 0 {
				err = fmt.Errorf("not positive")
			}
		case "above":
			trig.Above, err = capture.ParseSize(val)
		default:
			err = fmt.Errorf("unknown trigger")
		}
		if err != nil {
			err = fmt.Errorf("CONTPROF_HEAPSNAP: %q: %v (want a comma list of signal, exit, every=10m, above=1G): no heap snapshots", t, err)
			logf("%v", err)
			return err
		}
	}
	series, err := capture.NewSeries(m.Capturer, capture.SeriesOptions{Dir: heapsnapDir(), Logf: heapsnapLogf})
	if err != nil {
		logf("CONTPROF_HEAPSNAP_DIR: %v: no heap snapshots", err)
		return err
	}
	m.series = series
	if err := m.PrepareAtStartup(); err != nil {
		logf("heapsnap: %v: no heap snapshots", err)
		return err
	}
	series.Start(trig)
	return nil
}

func (m *heapsnapMember) Shutdown() error {
	m.series.Shutdown()
	return m.Capturer.Shutdown()
}
