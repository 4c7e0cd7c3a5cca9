// Command attachjit is a profiler to attach to a running .NET process
// (.NET Core 3.0 or later): it counts the functions the runtime JIT-compiles
// for a few seconds, detaches, writes a report, and leaves the process
// running as if nothing happened.
//
// Build it as a shared library and attach it with clrattach:
//
//	go build -buildmode=c-shared -o libattachjit.so ./sample/attachjit
//	go run ./cmd/clrattach -pid $PID -clsid {3B8E1D6F-2C4A-4F9B-A7E5-6D0C9B8A7F21} \
//		-path libattachjit.so -data "seconds=5 out=/tmp/jit.txt"
//
// (or call diag.AttachProfiler from a program). The client data is a list of
// key=value words:
//
//	seconds=N   how long to collect (default 10; fractions allowed)
//	out=FILE    write the report to FILE (default: the target's stderr)
//	top=N       list the N most compiled methods (default 20)
//
// On runtimes with tiered compilation a method that gets hot is compiled
// again, optimized: it shows with a count of 2 or more. The report is
// written when the collection time is over, just before the profiler asks
// the runtime to detach it ("detaching after Ns"), or at shutdown if the
// process ends first ("the process is exiting after Ns"): a detach can stay
// pending for a long time (or, on .NET Core 3.1, for ever) and a process
// that exits meanwhile calls neither ProfilerDetachSucceeded nor Shutdown,
// so waiting for the detach would lose the report. When the runtime
// confirms the detach, the profiler prints "attachjit: pid N detached" on
// the target's stderr. Attaching again later starts a fresh collection.
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

// CLSID is the class ID to give clrattach.
const CLSID = "{3B8E1D6F-2C4A-4F9B-A7E5-6D0C9B8A7F21}"

type config struct {
	duration time.Duration
	out      string
	top      int
}

// parseConfig reads the client data.
func parseConfig(data []byte) (config, error) {
	c := config{duration: 10 * time.Second, top: 20}
	for _, w := range strings.Fields(string(data)) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return c, fmt.Errorf("attachjit: client data word %q is not key=value", w)
		}
		switch k {
		case "seconds":
			s, err := strconv.ParseFloat(v, 64)
			if err != nil || s <= 0 || s > 24*3600 {
				return c, fmt.Errorf("attachjit: seconds=%q: want a positive number of seconds up to a day", v)
			}
			c.duration = time.Duration(s * float64(time.Second))
		case "out":
			c.out = v
		case "top":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return c, fmt.Errorf("attachjit: top=%q: want a count", v)
			}
			c.top = n
		default:
			return c, fmt.Errorf("attachjit: unknown client data key %q (want seconds, out, top)", k)
		}
	}
	return c, nil
}

// collection is one attach's worth of data.
type collection struct {
	cfg     config
	info    *profiler.Info
	start   time.Time
	mu      sync.Mutex
	counts  map[string]int
	total   int
	written bool
}

type attachjit struct {
	profiler.Base
	mu  sync.Mutex
	cur *collection
}

func (p *attachjit) current() *collection {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

func (p *attachjit) InitializeForAttach(info *profiler.Info, clientData []byte) error {
	cfg, err := parseConfig(clientData)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return err
	}
	if err := info.SetAttachEventMask(profiler.MonitorJITCompilation, 0); err != nil {
		return err
	}
	c := &collection{cfg: cfg, info: info, start: time.Now(), counts: map[string]int{}}
	p.mu.Lock()
	p.cur = c
	p.mu.Unlock()
	go func() {
		defer func() {
			if r := recover(); r != nil {
				fmt.Fprintln(os.Stderr, "attachjit: panic:", r)
			}
		}()
		time.Sleep(cfg.duration)
		p.mu.Lock()
		if p.cur == c {
			p.cur = nil // count nothing more
		}
		p.mu.Unlock()
		c.report("detaching")
		if err := <-info.RequestDetach(100 * time.Millisecond); err != nil {
			fmt.Fprintln(os.Stderr, "attachjit: detach refused; staying attached (without collecting):", err)
		}
	}()
	return nil
}

func (p *attachjit) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	c := p.current()
	if c == nil {
		return nil
	}
	name := methodName(c.info, f)
	c.mu.Lock()
	c.counts[name]++
	c.total++
	c.mu.Unlock()
	return nil
}

// methodName is Namespace.Type.Method from the metadata.
func methodName(info *profiler.Info, f profiler.FunctionID) string {
	imp, tok, err := info.FunctionImport(f)
	if err != nil {
		return fmt.Sprintf("<function %#x>", uint64(f))
	}
	defer imp.Release()
	m, err := imp.GetMethodProps(tok)
	if err != nil {
		return fmt.Sprintf("<method %v>", tok)
	}
	if m.Class.IsNil() {
		return m.Method
	}
	t, err := imp.GetTypeDefProps(m.Class)
	if err != nil {
		return "?." + m.Method
	}
	return t.TypeDef + "." + m.Method
}

func (p *attachjit) ProfilerDetachSucceeded() error {
	fmt.Fprintf(os.Stderr, "attachjit: pid %d detached\n", os.Getpid())
	return nil
}

func (p *attachjit) Shutdown() error {
	if c := p.current(); c != nil {
		c.report("the process is exiting")
	}
	return nil
}

// report writes the collection's summary once.
func (c *collection) report(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written {
		return
	}
	c.written = true
	var w io.Writer = os.Stderr
	if c.cfg.out != "" {
		f, err := os.Create(c.cfg.out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "attachjit:", err)
		} else {
			defer f.Close()
			w = f
		}
	}
	writeReport(w, os.Getpid(), why, time.Since(c.start), c.total, c.counts, c.cfg.top)
}

func writeReport(w io.Writer, pid int, why string, d time.Duration, total int, counts map[string]int, top int) {
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	fmt.Fprintf(w, "attachjit: pid %d, %s after %.1fs: %d JIT compilations of %d methods\n", pid, why, d.Seconds(), total, len(counts))
	for i, n := range names {
		if i == top {
			fmt.Fprintf(w, "  ... %d more\n", len(names)-top)
			break
		}
		fmt.Fprintf(w, "%8d  %s\n", counts[n], n)
	}
}

func init() {
	profiler.Register(CLSID, &attachjit{})
}

func main() {}
