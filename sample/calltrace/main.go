// Command calltrace counts calls and measures their latency with the fast
// enter/leave hooks (Info.EnableELT): every call is recorded in C by an
// assembly stub into a per-thread buffer, and a goroutine replays the
// events on per-thread shadow stacks. At Shutdown it prints the functions
// called most:
//
//	calltrace: calls=N total=DUR avg=DUR NAME
//	calltrace: events=N dropped=N threads=N functions=N
//
// total is inclusive wall time (callees included). Frames that an
// exception unwinds end at the unwind; frames that leave by a tail call end
// at the tail call.
//
// Environment: CALLTRACE_FILTER (hook only functions whose name starts with
// this prefix, through the function ID mapper), CALLTRACE_TOP (lines
// printed, default 20).
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

const clsid = "{E7A3C5B9-4D21-4F6E-9B8A-1C3D5E7F9A02}"

type fnStats struct {
	calls int64
	total time.Duration
}

type frame struct {
	f     profiler.FunctionID
	start time.Duration
}

type calltrace struct {
	profiler.Base
	info   *profiler.Info
	rec    *profiler.ELTRecorder
	top    int
	names  map[profiler.FunctionID]string
	stats  map[profiler.FunctionID]*fnStats
	stacks map[uint32][]frame
}

func (p *calltrace) name(f profiler.FunctionID) string {
	if n, ok := p.names[f]; ok {
		return n
	}
	n, err := p.info.FunctionName(f)
	if err != nil {
		n = fmt.Sprintf("[function %#x]", uintptr(f))
	}
	p.names[f] = n
	return n
}

func (p *calltrace) Initialize(info *profiler.Info) error {
	p.info = info
	p.top = 20
	if v := os.Getenv("CALLTRACE_TOP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("CALLTRACE_TOP=%q: want a positive integer", v)
		}
		p.top = n
	}
	p.names = map[profiler.FunctionID]string{}
	p.stats = map[profiler.FunctionID]*fnStats{}
	p.stacks = map[uint32][]frame{}
	var filter func(profiler.FunctionID) bool
	if prefix := os.Getenv("CALLTRACE_FILTER"); prefix != "" {
		// Called while the runtime compiles a function, on its thread; the
		// name cache is not shared with the draining goroutine.
		filter = func(f profiler.FunctionID) bool {
			n, err := info.FunctionName(f)
			return err == nil && strings.HasPrefix(n, prefix)
		}
	}
	rec, err := info.EnableELT(profiler.ELTOptions{Batch: p.batch, Filter: filter, Unwinds: true, BufferEvents: 1 << 18})
	if errors.Is(err, profiler.ErrNotAvailable) {
		// Say so, and let the application run without the profiler.
		fmt.Fprintf(os.Stderr, "calltrace: unsupported: %v\n", err)
		return err
	}
	if err != nil {
		return err
	}
	p.rec = rec
	return nil
}

func (p *calltrace) batch(b profiler.ELTBatch) {
	tid := b.Thread.OSThreadID
	st := p.stacks[tid]
	for _, e := range b.Events {
		if e.Kind == profiler.ELTEnter {
			st = append(st, frame{e.Function, e.Time})
			continue
		}
		// Leave, tail call or unwind: end the top frame if it is this
		// function (an unwind may name a frame without hooks).
		if n := len(st); n > 0 && st[n-1].f == e.Function {
			s := p.stats[e.Function]
			if s == nil {
				s = &fnStats{}
				p.stats[e.Function] = s
			}
			s.calls++
			s.total += e.Time - st[n-1].start
			st = st[:n-1]
		}
	}
	p.stacks[tid] = st
}

func (p *calltrace) Shutdown() error {
	if p.rec == nil {
		return nil
	}
	p.rec.Close()
	ids := make([]profiler.FunctionID, 0, len(p.stats))
	for f := range p.stats {
		ids = append(ids, f)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, b := p.stats[ids[i]], p.stats[ids[j]]
		if a.calls != b.calls {
			return a.calls > b.calls
		}
		return a.total > b.total
	})
	for i, f := range ids {
		if i >= p.top {
			break
		}
		s := p.stats[f]
		fmt.Fprintf(os.Stderr, "calltrace: calls=%d total=%v avg=%v %s\n", s.calls, s.total, s.total/time.Duration(s.calls), p.name(f))
	}
	st := p.rec.Stats()
	fmt.Fprintf(os.Stderr, "calltrace: events=%d dropped=%d threads=%d functions=%d\n", st.Events, st.Dropped, st.Threads, len(p.stats))
	return nil
}

func init() { profiler.Register(clsid, &calltrace{}) }

func main() {}
