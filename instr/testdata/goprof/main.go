// Command goprof is the profiler of package instr's Go hook tests: it
// hooks the targets of GOPROF_TARGETS (comma-separated) with Go hooks
// that print every call ("GOHOOK enter|exit ...") except those of methods
// named Hot, which it counts; hooks of methods named Panicky panic. At
// Shutdown it prints the counts, the recovered panics and the report,
// lines starting "goprof: ". GOPROF_EMPTY=1 installs empty hooks instead
// (the benchmark's Go row). With GOPROF_STORM=1 a goroutine sends SIGRTMIN,
// the runtime's GC-suspension activation signal, with tgkill to every
// thread that ran a hook of Hot, every 10µs (at most 512 queued).
// GOPROF_DEFERRED=1 makes the hooks deferred (GoHooks.Deferred; with
// GOPROF_TIMESTAMPS=1 also timed): Shutdown flushes them and prints the
// counts. GOPROF_NOARGS=1 asks for no arguments (the entries without
// them). Rec's hooks check, per thread, that each Exit pairs with the
// last Enter not yet exited (state, return value with the arguments,
// times).
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	in *instr.Instrumenter

	names    sync.Map // int32 -> string
	seq      atomic.Uint64
	hot      atomic.Int64
	hotSum   atomic.Int64
	hotExit  atomic.Int64
	badState atomic.Int64
	threads  sync.Map // uint64 -> bool
	signals  atomic.Int64
	stop     chan struct{}

	recMu    sync.Mutex
	recStack map[uint64][]recFrame // per thread: the Rec calls entered
	recEnter int64
	recExit  int64
	recBad   int64
	timed    atomic.Int64 // hooks that got a Time
	badTime  atomic.Int64 // exits earlier than their enter, or a Time missing
	enterAt  sync.Map     // state -> time.Time
	startAt  sync.Map     // state -> time.Time, read at Enter (or its delivery)
	// hooks that got a Call, Return or Value other than instr's
	// constructors make of what their methods return (remade)
	remadeBad atomic.Int64
}

type recFrame struct {
	state uint64
	d, i  int64
	at    time.Time
}

// storm sends SIGRTMIN to the threads seen until stop is closed.
func (p *prof) storm() {
	pid := os.Getpid()
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		if queuedSignals() < 512 {
			p.threads.Range(func(k, _ any) bool {
				if syscall.Tgkill(pid, int(k.(uint64)), syscall.Signal(34)) == nil {
					p.signals.Add(1)
				}
				return true
			})
		}
		time.Sleep(10 * time.Microsecond)
	}
}

func queuedSignals() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigQ:"); ok {
			n, _, _ := strings.Cut(strings.TrimSpace(v), "/")
			q, _ := strconv.Atoi(n)
			return q
		}
	}
	return 0
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "goprof: "+format+"\n", args...)
}

func (p *prof) name(id int32) string {
	if n, ok := p.names.Load(id); ok {
		return n.(string)
	}
	m, _ := p.in.Method(id)
	n := m.Name[strings.LastIndex(m.Name, "::")+2:]
	p.names.Store(id, n)
	return n
}

func (p *prof) enter(c *instr.Call) uint64 {
	n := p.name(c.Method())
	switch n {
	case "Hot":
		p.hot.Add(1)
		p.threads.Store(c.Thread(), true)
		if len(c.Args()) == 0 {
			return c.Thread()<<1 | 1 // GOPROF_NOARGS=1: the exit checks its thread's mark
		}
		p.hotSum.Add(c.Args()[0].Int())
		return uint64(c.Args()[0].Int()) + 1
	case "Panicky":
		panic("enter hook panicked")
	case "Rec":
		s := p.seq.Add(1)
		f := recFrame{state: s, d: -1, at: c.Time()} // d -1: no arguments (GOPROF_NOARGS=1)
		if len(c.Args()) == 2 {
			f.d, f.i = c.Args()[0].Int(), c.Args()[1].Int()
		}
		p.recMu.Lock()
		p.recEnter++
		p.recStack[c.Thread()] = append(p.recStack[c.Thread()], f)
		p.recMu.Unlock()
		p.checkTime(c.Time())
		return s
	}
	var sb strings.Builder
	var args []instr.Value // nil as c.Args() is without arguments
	for i, a := range c.Args() {
		if i > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%s:%s:%s", a.Kind, a.Type, show(a))
		args = append(args, remade(a))
	}
	m := instr.NewCall(instr.CallFields{Method: c.Method(), Thread: c.Thread(), Args: args, Time: c.Time()})
	if m.Method() != c.Method() || m.Thread() != c.Thread() || !slices.Equal(m.Args(), c.Args()) || m.Time() != c.Time() {
		p.remadeBad.Add(1)
		logf("remade call %s: %+v, got %+v", n, m, c)
	}
	s := p.seq.Add(1)
	p.checkTime(c.Time())
	p.enterAt.Store(s, c.Time())
	p.startAt.Store(s, time.Now())
	fmt.Fprintf(os.Stderr, "GOHOOK enter %s state=%d args=[%s]\n", n, s, sb.String())
	return s
}

func (p *prof) exit(r *instr.Return) {
	n := p.name(r.Method())
	switch n {
	case "Hot":
		p.hotExit.Add(1)
		if r.State()&1 == 1 && r.State()>>1 == r.Thread() {
			return // GOPROF_NOARGS=1
		}
		if r.Value().Int()/3+1 != int64(r.State()) {
			p.badState.Add(1)
		}
		return
	case "Panicky":
		var m map[string]int
		m["x"]++ // a nil map write: a runtime panic
	case "Rec":
		p.recMu.Lock()
		defer p.recMu.Unlock()
		p.recExit++
		st := p.recStack[r.Thread()]
		if len(st) == 0 {
			p.recBad++
			return
		}
		f := st[len(st)-1]
		p.recStack[r.Thread()] = st[:len(st)-1]
		if f.state != r.State() || f.d >= 0 && r.Value().Int() != f.i+f.d || r.Exception() || r.Time().Before(f.at) {
			p.recBad++
		}
		p.checkTime(r.Time())
		return
	}
	p.checkTime(r.Time())
	if at, ok := p.enterAt.Load(r.State()); ok && r.Time().Before(at.(time.Time)) {
		p.badTime.Add(1)
	}
	if m := instr.NewReturn(instr.ReturnFields{Method: r.Method(), Thread: r.Thread(), State: r.State(), Value: remade(r.Value()),
		Exception: r.Exception(), ExceptionType: r.ExceptionType(), ExceptionTypeTruncated: r.ExceptionTypeTruncated(),
		Async: r.Async(), Canceled: r.Canceled(), Time: r.Time()}); *m != *r {
		p.remadeBad.Add(1)
		logf("remade return %s: %+v, got %+v", n, m, r)
	}
	exc := r.ExceptionType()
	if r.ExceptionTypeTruncated() {
		exc += "~trunc"
	}
	fmt.Fprintf(os.Stderr, "GOHOOK exit %s state=%d ret=%s:%s exc=%v:%s\n", n, r.State(), r.Value().Kind, show(r.Value()), r.Exception(), exc)
	// The call's duration: with Timestamps the times the SDK read, else
	// the times the hooks ran (synchronous: in the call).
	var us int64 = -1
	if at, ok := p.enterAt.Load(r.State()); ok && !at.(time.Time).IsZero() && !r.Time().IsZero() {
		us = r.Time().Sub(at.(time.Time)).Microseconds()
	} else if at, ok := p.startAt.Load(r.State()); ok {
		us = time.Since(at.(time.Time)).Microseconds()
	}
	fmt.Fprintf(os.Stderr, "GOHOOK took %s state=%d async=%v canceled=%v us=%d\n", n, r.State(), r.Async(), r.Canceled(), us)
}

// remade is v made again with instr's constructors from what its methods
// and fields say (the enums by the app's declarations: Hooked.Color is a
// byte).
func remade(v instr.Value) instr.Value {
	switch v.Kind {
	case instr.KindVoid:
		return instr.VoidValue()
	case instr.KindInt:
		return instr.IntValue(v.Type, v.Int())
	case instr.KindUint:
		return instr.UintValue(v.Type, v.Uint())
	case instr.KindFloat:
		return instr.FloatValue(v.Type, v.Float())
	case instr.KindBool:
		return instr.BoolValue(v.Bool())
	case instr.KindChar:
		return instr.CharValue(uint16(v.Char()))
	case instr.KindString:
		switch {
		case v.IsNull():
			return instr.NullStringValue()
		case v.Truncated():
			return instr.TruncatedStringValue(v.Str())
		}
		return instr.StringValue(v.Str())
	case instr.KindEnum:
		if v.Type == "Hooked.Color" {
			return instr.UnsignedEnumValue(v.Type, v.Uint())
		}
		return instr.EnumValue(v.Type, v.Int())
	}
	return instr.ObjectValue(v.Type)
}

// show formats a value, long strings by their length.
func show(v instr.Value) string {
	if v.Kind == instr.KindString && len(v.Str()) > 100 {
		return fmt.Sprintf("<%d units trunc=%v>", len(v.Str()), v.Truncated())
	}
	if v.Truncated() {
		return v.String() + "~trunc"
	}
	return v.String()
}

// checkTime counts the hooks that got a time, and with
// GOPROF_TIMESTAMPS=1 those that did not.
func (p *prof) checkTime(t time.Time) {
	if !t.IsZero() {
		p.timed.Add(1)
	} else if os.Getenv("GOPROF_TIMESTAMPS") == "1" {
		p.badTime.Add(1)
	}
}

func (p *prof) Initialize(info *profiler.Info) error {
	ts, err := target.ParseList(os.Getenv("GOPROF_TARGETS"))
	if err != nil {
		logf("bad targets: %v", err)
		return err
	}
	hooks := &instr.GoHooks{Enter: p.enter, Exit: p.exit, Args: os.Getenv("GOPROF_NOARGS") != "1"}
	if os.Getenv("GOPROF_DEFERRED") == "1" {
		hooks.Deferred = true
		hooks.Timestamps = os.Getenv("GOPROF_TIMESTAMPS") == "1"
	}
	p.recStack = map[uint64][]recFrame{}
	if os.Getenv("GOPROF_EMPTY") == "1" {
		hooks = &instr.GoHooks{Enter: func(*instr.Call) uint64 { return 0 }, Exit: func(*instr.Return) {}}
	}
	if os.Getenv("GOPROF_STORM") == "1" {
		p.stop = make(chan struct{})
		go p.storm()
	}
	if p.in, err = instr.New(info, instr.Config{Rules: []instr.Rule{{Targets: ts, Go: hooks,
		EndAtReturn: os.Getenv("GOPROF_ENDATRETURN") == "1"}}}); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if err := p.in.ModuleLoadFinished(m, hr); err != nil {
		logf("ModuleLoadFinished: %v", err)
	}
	return nil
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *prof) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *prof) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

func (p *prof) Shutdown() error {
	if p.stop != nil {
		close(p.stop)
		logf("storm signals=%d", p.signals.Load())
	}
	if os.Getenv("GOPROF_DEFERRED") == "1" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := instr.FlushDeferred(ctx)
		cancel()
		st := instr.DeferredStats()
		logf("deferred delivered=%d dropped=%d flush=%v", st.Delivered, st.Dropped, err)
	}
	logf("rec enter=%d exit=%d bad=%d", p.recEnter, p.recExit, p.recBad)
	logf("time timed=%d bad=%d", p.timed.Load(), p.badTime.Load())
	logf("remade bad=%d", p.remadeBad.Load())
	r := p.in.Report()
	threads := 0
	p.threads.Range(func(any, any) bool { threads++; return true })
	logf("hot enter=%d exit=%d sum=%d badstate=%d threads=%d", p.hot.Load(), p.hotExit.Load(), p.hotSum.Load(), p.badState.Load(), threads)
	for _, hp := range instr.GoHookPanics() {
		logf("panics %s %d %q", hp.Method, hp.Count, hp.First)
	}
	for _, f := range r.Failed {
		logf("failed %s", f)
	}
	logf("summary instrumented=%d pending=%d failed=%d", len(r.Instrumented), len(r.Pending), len(r.Failed))
	return nil
}

func init() {
	profiler.Register("{3E6A1F20-9B4C-4D7E-8A15-6C2F0D9B7E41}", &prof{})
}

func main() {}
