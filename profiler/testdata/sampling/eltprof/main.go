// Command eltprof is the profiler of the ELT integration tests. Modes
// (ELTPROF_MODE):
//
//	fast  (default) the fast-path hooks (elt.NewRecorder); at Shutdown it
//	      prints, for every hooked function whose name starts with "Elt.",
//	      "eltprof: fn=NAME enter=N leave=N tail=N unwind=N", then
//	      "eltprof: stats events=N dropped=N threads=N order=N backwards=N"
//	      (order: events that do not fit a per-thread shadow stack;
//	      backwards: timestamps that decrease within a thread);
//	info  the WithInfo hooks: prints the decoded arguments of
//	      Elt.Info.Args and the return values of Elt.Info.Args/Ret;
//	count the C call counter (elt.NewCallCounter); at Shutdown it
//	      prints "eltprof: count fn=NAME calls=N incl=DUR" for every
//	      counted function whose name starts with "Elt.", then
//	      "eltprof: cstats threads=N functions=N refused=N lost=N
//	      overflow=N unmatched=N unwound=N unwinds=N unmapped=N";
//	      ELTPROF_STACKS=1 also prints "eltprof: stack F1<F2<..." for
//	      the first thread seen (sampling every 10 ms) inside
//	      Elt.Hot.Spin;
//	idle  loads and does nothing (a baseline).
//
// ELTPROF_FILTER=PREFIX hooks only functions whose name starts with PREFIX
// (through the function ID mapper); ELTPROF_UNWINDS=1 records unwinds;
// ELTPROF_TRACE=1 prints every event; ELTPROF_BUFFER=N sets the
// per-thread buffer size in events.
package main

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

type counts struct{ enter, leave, tail, unwind int }

type frame struct {
	f profiler.FunctionID
}

type eltprof struct {
	profiler.Base
	info  *profiler.Info
	rec   *elt.Recorder
	cc    *elt.CallCounter
	mu    sync.Mutex
	names map[profiler.FunctionID]string
	byFn  map[profiler.FunctionID]*counts
	stack map[uint32][]frame
	last  map[uint32]time.Duration
	order int
	back  int
}

func (p *eltprof) name(f profiler.FunctionID) string {
	p.mu.Lock()
	n, ok := p.names[f]
	p.mu.Unlock()
	if ok {
		return n
	}
	n, err := p.info.FunctionName(f)
	if err != nil {
		n = fmt.Sprintf("?%#x", f)
	}
	p.mu.Lock()
	p.names[f] = n
	p.mu.Unlock()
	return n
}

func (p *eltprof) filter() func(profiler.FunctionID) bool {
	prefix := os.Getenv("ELTPROF_FILTER")
	if prefix == "" {
		return nil
	}
	return func(f profiler.FunctionID) bool {
		return strings.HasPrefix(p.name(f), prefix)
	}
}

func (p *eltprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.names = map[profiler.FunctionID]string{}
	p.byFn = map[profiler.FunctionID]*counts{}
	p.stack = map[uint32][]frame{}
	p.last = map[uint32]time.Duration{}
	switch os.Getenv("ELTPROF_MODE") {
	case "idle":
		return nil
	case "count":
		cc, err := elt.NewCallCounter(info, elt.CallCountOptions{Filter: p.filter()})
		if err != nil {
			return unsupported(err)
		}
		p.cc = cc
		if os.Getenv("ELTPROF_STACKS") == "1" {
			go p.stacks()
		}
		return nil
	case "info":
		return unsupported(elt.EnableWithInfo(info, elt.CallOptions{
			Call:   p.call,
			Filter: p.filter(),
			Args:   true,
			Return: true,
			Frame:  true,
		}))
	}
	buf, _ := strconv.Atoi(os.Getenv("ELTPROF_BUFFER"))
	rec, err := elt.NewRecorder(info, elt.Options{
		BufferEvents: buf,
		Batch:        p.batch,
		Filter:       p.filter(),
		Unwinds:      os.Getenv("ELTPROF_UNWINDS") == "1",
	})
	if err != nil {
		return unsupported(err)
	}
	p.rec = rec
	return nil
}

func (p *eltprof) batch(b elt.Batch) {
	tid := b.Thread.OSThreadID
	st := p.stack[tid]
	if os.Getenv("ELTPROF_TRACE") == "1" {
		for _, e := range b.Events {
			fmt.Fprintf(os.Stderr, "eltprof: ev %d %v %#x %v\n", tid, e.Kind, e.Function, e.Time)
		}
	}
	for _, e := range b.Events {
		c := p.byFn[e.Function]
		if c == nil {
			c = &counts{}
			p.byFn[e.Function] = c
		}
		if last, ok := p.last[tid]; ok && e.Time < last {
			p.back++
		}
		p.last[tid] = e.Time
		switch e.Kind {
		case elt.Enter:
			c.enter++
			st = append(st, frame{e.Function})
		case elt.Leave, elt.Tailcall, elt.Unwind:
			switch e.Kind {
			case elt.Leave:
				c.leave++
			case elt.Tailcall:
				c.tail++
			default:
				c.unwind++
			}
			if len(st) > 0 && st[len(st)-1].f == e.Function {
				st = st[:len(st)-1]
			} else if e.Kind != elt.Unwind {
				// An unwind of a frame without hooks is expected; any
				// other mismatch is an ordering error.
				p.order++
			}
		}
	}
	p.stack[tid] = st
}

func (p *eltprof) call(c *elt.Call) {
	name := p.name(c.Function)
	switch {
	case c.Kind == elt.Enter && name == "Elt.Info.Args":
		args, err := c.Args()
		if err != nil || len(args) != 5 {
			fmt.Fprintf(os.Stderr, "eltprof: args error %v (%d)\n", err, len(args))
			return
		}
		a, e1 := args[0].Int32()
		b, e2 := args[1].Float64()
		f, e3 := args[2].Float32()
		d, e4 := args[3].Int64()
		e, e5 := args[4].Bool()
		fmt.Fprintf(os.Stderr, "eltprof: args %s %d %v %v %d %v errs=%v\n", name, a, b, f, d, e, firstErr(e1, e2, e3, e4, e5))
		if fr, err := c.Frame(); err != nil || fr == 0 {
			fmt.Fprintf(os.Stderr, "eltprof: frame error %v\n", err)
		}
	case c.Kind == elt.Leave && name == "Elt.Info.Args":
		r, err := c.Return()
		v, err2 := r.Int64()
		fmt.Fprintf(os.Stderr, "eltprof: ret %s %d errs=%v\n", name, v, firstErr(err, err2))
	case c.Kind == elt.Leave && name == "Elt.Info.Ret":
		r, err := c.Return()
		v, err2 := r.Float64()
		fmt.Fprintf(os.Stderr, "eltprof: ret %s %v errs=%v\n", name, v, firstErr(err, err2))
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// stacks prints the shadow stack of the first thread seen inside
// Elt.Hot.Spin (where the app's spin phase spends nearly all its time).
func (p *eltprof) stacks() {
	for i := 0; i < 400; i++ {
		time.Sleep(10 * time.Millisecond)
		for _, s := range p.cc.Stacks(64) {
			var names []string
			hot := false
			for _, f := range s.Functions {
				n := p.name(f)
				names = append(names, n)
				hot = hot || n == "Elt.Hot.Spin"
			}
			if hot {
				fmt.Fprintf(os.Stderr, "eltprof: stack %s\n", strings.Join(names, "<"))
				return
			}
		}
	}
}

func (p *eltprof) Shutdown() error {
	if p.cc != nil {
		p.cc.Close()
		var lines []string
		for _, c := range p.cc.Snapshot() {
			if n := p.name(c.Function); strings.HasPrefix(n, "Elt.") {
				lines = append(lines, fmt.Sprintf("eltprof: count fn=%s calls=%d incl=%v", n, c.Calls, c.Inclusive))
			}
		}
		sort.Strings(lines)
		for _, l := range lines {
			fmt.Fprintln(os.Stderr, l)
		}
		s := p.cc.Stats()
		fmt.Fprintf(os.Stderr, "eltprof: cstats threads=%d functions=%d refused=%d lost=%d overflow=%d unmatched=%d unwound=%d unwinds=%d unmapped=%d\n",
			s.Threads, s.Functions, s.Refused, s.Lost, s.Overflow, s.Unmatched, s.Unwound, s.Unwinds, s.Unmapped)
		return nil
	}
	if p.rec == nil {
		elt.DisableWithInfo()
		return nil
	}
	p.rec.Close()
	var lines []string
	prefix := "Elt."
	if v := os.Getenv("ELTPROF_PRINT"); v != "" {
		prefix = v
	}
	// Functions of one name (a runtime-async method's two compilations)
	// are summed.
	sum := map[string]*counts{}
	for f, c := range p.byFn {
		n := p.name(f)
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		t := sum[n]
		if t == nil {
			t = &counts{}
			sum[n] = t
		}
		t.enter += c.enter
		t.leave += c.leave
		t.tail += c.tail
		t.unwind += c.unwind
	}
	for n, c := range sum {
		lines = append(lines, fmt.Sprintf("eltprof: fn=%s enter=%d leave=%d tail=%d unwind=%d", n, c.enter, c.leave, c.tail, c.unwind))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(os.Stderr, l)
	}
	s := p.rec.Stats()
	fmt.Fprintf(os.Stderr, "eltprof: stats events=%d dropped=%d threads=%d order=%d backwards=%d functions=%d\n",
		s.Events, s.Dropped, s.Threads, p.order, p.back, len(p.byFn))
	return nil
}

func init() {
	profiler.Register("{3F6A2E10-8C4B-4D7E-9A15-6B2C8D0E4F71}", &eltprof{})
}

func main() {}

// unsupported reports an ErrNotAvailable from enabling the hooks on stderr
// ("eltprof: unsupported: ...") and returns err.
func unsupported(err error) error {
	if errors.Is(err, profiler.ErrNotAvailable) {
		fmt.Fprintf(os.Stderr, "eltprof: unsupported: %v\n", err)
	}
	return err
}
