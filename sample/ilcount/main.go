// Command ilcount is a sample profiler that counts the calls of every
// method of the application: it rewrites each method at its first JIT
// compilation so that it starts by incrementing its own counter, and
// prints the counts at shutdown.
//
// The counters live in C memory (profiler.HitCounters); the code added
// at entry increments one with an unmanaged calli, so counting costs a
// native call and never enters Go:
//
//	ldc.i8  <address of the method's counter>
//	conv.i
//	ldc.i8  <address of the native hit function>
//	conv.i
//	calli   unmanaged cdecl void(native int)
//
// Framework assemblies (System.*, Microsoft.*, mscorlib, netstandard) are
// left alone. Build and run:
//
//	go build -buildmode=c-shared -o libilcount.so ./sample/ilcount
//	CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={B5A4F2C1-6D3E-4A8B-9F07-2C1E5D4A3B69} \
//	CORECLR_PROFILER_PATH=$PWD/libilcount.so dotnet app.dll
//
// The counts go to stderr, one "ilcount: <calls> <method>" line per method
// that ran, most called first (ILCOUNT_OUT names a file to write instead).
package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/profiler"
)

// How many methods can be counted.
const capacity = 1 << 16

// The signature of the native hit function, for calli: unmanaged cdecl
// (0x01), one parameter, returns void (0x01), takes native int (0x18).
var hitSig = []byte{0x01, 0x01, 0x01, 0x18}

type ilcount struct {
	profiler.Base
	info     *profiler.Info
	counters *profiler.HitCounters
	rw       *ilrw.Rewriter

	mu    sync.Mutex
	names []string
	skip  map[profiler.ModuleID]bool
}

func (p *ilcount) Initialize(info *profiler.Info) error {
	c, err := profiler.NewHitCounters(capacity)
	if err != nil {
		return err
	}
	p.info, p.counters = info, c
	p.skip = map[profiler.ModuleID]bool{}
	p.rw = ilrw.NewRewriter(info, p.rewrite)
	// Inlining is off: a method inlined into its caller is never compiled
	// on its own, so it would not be rewritten and its calls not counted.
	return info.SetEventMask(profiler.MonitorJITCompilation | profiler.DisableInlining)
}

func (p *ilcount) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	return p.rw.JITCompilationStarted(f)
}

// framework reports whether a module belongs to the framework.
func (p *ilcount) framework(m profiler.ModuleID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.skip[m]; ok {
		return s
	}
	skip := true
	if mi, err := p.info.GetModuleInfo(m); err == nil {
		if ai, err := p.info.GetAssemblyInfo(mi.AssemblyID); err == nil {
			n := ai.Name
			skip = n == "mscorlib" || n == "netstandard" || strings.HasPrefix(n, "System") || strings.HasPrefix(n, "Microsoft")
		}
	}
	p.skip[m] = skip
	return skip
}

func (p *ilcount) rewrite(m *ilrw.Method) (bool, error) {
	if p.framework(m.ModuleID) {
		return false, nil
	}
	p.mu.Lock()
	id := len(p.names)
	if id >= p.counters.Len() {
		p.mu.Unlock()
		return false, nil
	}
	p.names = append(p.names, m.Name())
	p.mu.Unlock()
	sig, err := m.Module.SigToken(hitSig)
	if err != nil {
		return false, err
	}
	return true, m.Body.InsertAtEntry(
		ilrw.IInt(ilrw.OpLdcI8, int64(p.counters.Addr(id))), ilrw.I(ilrw.OpConvI),
		ilrw.IInt(ilrw.OpLdcI8, int64(profiler.HitFunc())), ilrw.I(ilrw.OpConvI),
		ilrw.IToken(ilrw.OpCalli, sig),
	)
}

func (p *ilcount) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	type count struct {
		name string
		n    int64
	}
	var cs []count
	for i, name := range p.names {
		if n := p.counters.Get(i); n > 0 {
			cs = append(cs, count{name, n})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].n != cs[j].n {
			return cs[i].n > cs[j].n
		}
		return cs[i].name < cs[j].name
	})
	var w io.Writer = os.Stderr
	if path := os.Getenv("ILCOUNT_OUT"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	st := p.rw.Stats()
	fmt.Fprintf(w, "ilcount: %d methods rewritten, %d errors\n", st.Rewritten, st.Errors)
	for _, c := range cs {
		fmt.Fprintf(w, "ilcount: %d %s\n", c.n, c.name)
	}
	return nil
}

func init() {
	profiler.Register("{B5A4F2C1-6D3E-4A8B-9F07-2C1E5D4A3B69}", &ilcount{})
}

func main() {}
