// Command calltrace counts calls and measures their inclusive time with
// the fast enter/leave hooks, counting in C (elt.NewCallCounter): each
// hook finds the function's counter by the number the SDK's function ID
// mapper gave it, counts the call and keeps a shadow stack per thread; no
// event is buffered, so none can be dropped however fast the application
// calls. At Shutdown it prints the functions called most:
//
//	calltrace: calls=N total=DUR avg=DUR NAME
//	calltrace: summary calls=N functions=N threads=N lost=N refused=N unmapped=N overflow=N unmatched=N unwound=N unwinds=N suspended=N resumed=N inlined=N memory=BYTES
//
// calls counts every entry of the function (exact for the functions with
// hooks); total is inclusive wall time (callees included) of the calls
// that returned, a recursive call counted once, in its outermost call.
// Frames that an exception unwinds end at the unwind; frames that leave by
// a tail call end at the tail call.
//
// The JIT inlines small methods into their callers: an inlined call has no
// hooks, so it is not counted. calltrace does not turn inlining off (that
// would change the code it measures); it reports, from the JITInlining
// callback, every function the JIT inlined somewhere, whose count is then
// a lower bound: "calltrace: inlined=N functions were inlined at some call
// sites (their inlined calls are not counted)", and in CALLTRACE_OUT one
// "inlined NAME" line each. CALLTRACE_NOINLINE=1 turns inlining off
// (DisableInlining). The JIT also compiles a method's recursive call in
// tail position as a jump back to its start, without hooks; the runtime
// setting DOTNET_TailCallLoopOpt=0 turns that off, and calltrace says so
// when it is not set. With both, every call of a JIT-compiled method is
// counted (the mcs soak checks this against sample/ilcount, method by
// method).
//
// Runtime async (.NET 11's libraries, apps built with it; .NET 10 with
// DOTNET_RuntimeAsync=1): a runtime-async method's enter hook runs on its
// call and again on every resumption (on whichever thread resumes it),
// and it gets no leave when it suspends. calltrace still counts calls, not
// resumptions (summary: resumed=N enters that were resumptions,
// suspended=N frames closed because they had left the stack), and such a
// method's total is the time its frames were on a thread, without the
// time it was suspended (see docs/runtime-async.md).
//
// If any call could not be counted (lost, refused or unmapped are not 0)
// it says so in a "calltrace: WARNING" line with what to change.
//
// Environment: CALLTRACE_FILTER (hook only functions whose name starts with
// this prefix, through the function ID mapper), CALLTRACE_TOP (lines
// printed, default 20), CALLTRACE_OUT (a file to write every function's
// count to: "CALLS TOTAL_NS NAME" lines, then the inlined functions),
// CALLTRACE_NOINLINE.
package main

import (
	"bufio"
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

const clsid = "{E7A3C5B9-4D21-4F6E-9B8A-1C3D5E7F9A02}"

type calltrace struct {
	profiler.Base
	info *profiler.Info
	cc   *elt.CallCounter
	top  int

	mu      sync.Mutex
	inlined map[profiler.FunctionID]bool
}

func (p *calltrace) name(f profiler.FunctionID) string {
	n, err := p.info.FunctionName(f)
	if err != nil {
		n = fmt.Sprintf("[function %#x]", uintptr(f))
	}
	return n
}

func (p *calltrace) Initialize(info *profiler.Info) error {
	p.info = info
	p.top = 20
	p.inlined = map[profiler.FunctionID]bool{}
	if v := os.Getenv("CALLTRACE_TOP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("CALLTRACE_TOP=%q: want a positive integer", v)
		}
		p.top = n
	}
	var filter func(profiler.FunctionID) bool
	if prefix := os.Getenv("CALLTRACE_FILTER"); prefix != "" {
		// Called while the runtime compiles a function, on its thread.
		filter = func(f profiler.FunctionID) bool {
			n, err := info.FunctionName(f)
			return err == nil && strings.HasPrefix(n, prefix)
		}
	}
	cc, err := elt.NewCallCounter(info, elt.CallCountOptions{Filter: filter})
	if errors.Is(err, profiler.ErrNotAvailable) {
		// Say so, and let the application run without the profiler.
		fmt.Fprintf(os.Stderr, "calltrace: unsupported: %v\n", err)
		return err
	}
	if err != nil {
		return err
	}
	p.cc = cc
	// JITInlining needs MonitorJITCompilation.
	add := profiler.MonitorJITCompilation
	if os.Getenv("CALLTRACE_NOINLINE") == "1" {
		add |= profiler.DisableInlining
	}
	m, err := info.GetEventMask()
	if err != nil {
		return err
	}
	return info.SetEventMask(m | add)
}

// JITInlining records the callee: its inlined calls have no hooks.
func (p *calltrace) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	p.mu.Lock()
	p.inlined[callee] = true
	p.mu.Unlock()
	return true, nil
}

func (p *calltrace) Shutdown() error {
	if p.cc == nil {
		return nil
	}
	p.cc.Close()
	snap := p.cc.Snapshot()
	st := p.cc.Stats()
	var total uint64
	for _, f := range snap {
		total += f.Calls
	}
	for i, f := range snap {
		if i >= p.top {
			break
		}
		fmt.Fprintf(os.Stderr, "calltrace: calls=%d total=%v avg=%v %s\n", f.Calls, f.Inclusive, f.Inclusive/time.Duration(f.Calls), p.name(f.Function))
	}
	p.mu.Lock()
	inlined := make([]profiler.FunctionID, 0, len(p.inlined))
	for f := range p.inlined {
		inlined = append(inlined, f)
	}
	p.mu.Unlock()
	fmt.Fprintf(os.Stderr, "calltrace: summary calls=%d functions=%d threads=%d lost=%d refused=%d unmapped=%d overflow=%d unmatched=%d unwound=%d unwinds=%d suspended=%d resumed=%d inlined=%d memory=%d\n",
		total, len(snap), st.Threads, st.Lost, st.Refused, st.Unmapped, st.Overflow, st.Unmatched, st.Unwound, st.Unwinds, st.Suspended, st.Resumed, len(inlined), st.MemoryBytes)
	if len(inlined) > 0 {
		fmt.Fprintf(os.Stderr, "calltrace: inlined=%d functions were inlined at some call sites (their inlined calls are not counted; CALLTRACE_NOINLINE=1 counts every call)\n", len(inlined))
	}
	if os.Getenv("DOTNET_TailCallLoopOpt") != "0" && os.Getenv("COMPlus_TailCallLoopOpt") != "0" {
		fmt.Fprintf(os.Stderr, "calltrace: note: recursive calls in tail position that the JIT compiled as loops have no hooks and are not counted; DOTNET_TailCallLoopOpt=0 makes the JIT call them\n")
	}
	if st.Lost > 0 || st.Refused > 0 || st.Unmapped > 0 {
		fmt.Fprintf(os.Stderr, "calltrace: WARNING: not every call was counted: %d calls lost (no memory for a thread's counters), %d functions without hooks (the function table was full), %d calls with an unknown ID; the counts above are lower bounds\n",
			st.Lost, st.Refused, st.Unmapped)
	}
	if path := os.Getenv("CALLTRACE_OUT"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		for _, c := range snap {
			fmt.Fprintf(w, "%d %d %s\n", c.Calls, c.Inclusive.Nanoseconds(), p.name(c.Function))
		}
		names := make([]string, 0, len(inlined))
		for _, fn := range inlined {
			names = append(names, p.name(fn))
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "inlined %s\n", n)
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return nil
}

func init() { profiler.Register(clsid, &calltrace{}) }

func main() {}
