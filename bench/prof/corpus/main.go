// Command corpus is the profiler that collects the input of the IL and
// signature throughput benchmarks from a real runtime: for every method the
// JIT compiles (run the app with ReadyToRun disabled and the framework is in
// play too), its IL body (GetILFunctionBody), its MethodDefSig and, when the
// body has locals, its local-variable signature, each definition once. At
// Shutdown it writes them to the file named by BENCH_CORPUS (format: see
// bench.Corpus) and prints "gocorpus: Shutdown bodies=B methodSigs=M
// localSigs=L errors=E".
package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/clrprof/clrprof/bench"
	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/profiler"
)

type corpusprof struct {
	profiler.Base
	info   *profiler.Info
	mu     sync.Mutex
	seen   map[[2]uint64]bool
	sigs   map[[2]uint64]bool // (module, local signature token) seen
	corpus bench.Corpus
	errs   int
}

func (p *corpusprof) Initialize(info *profiler.Info) error {
	if os.Getenv("BENCH_CORPUS") == "" {
		fmt.Fprintln(os.Stderr, "gocorpus: BENCH_CORPUS is not set")
		return fmt.Errorf("gocorpus: BENCH_CORPUS is not set")
	}
	p.info = info
	p.seen = map[[2]uint64]bool{}
	p.sigs = map[[2]uint64]bool{}
	return info.SetEventMask(profiler.MonitorJITCompilation)
}

func (p *corpusprof) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	fi, err := p.info.GetFunctionInfo(f)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	k := [2]uint64{uint64(fi.ModuleID), uint64(fi.Token)}
	if p.seen[k] {
		return nil
	}
	p.seen[k] = true
	il, err := p.info.GetILFunctionBody(fi.ModuleID, fi.Token)
	if err != nil {
		return nil // runtime-implemented methods have no IL
	}
	p.corpus.Add(bench.KindBody, il)
	imp, tok, err := p.info.FunctionImport(f)
	if err != nil {
		p.errs++
		return nil
	}
	defer imp.Release()
	if props, err := imp.GetMethodProps(tok); err == nil {
		p.corpus.Add(bench.KindMethodSig, props.SigBlob)
	} else {
		p.errs++
	}
	body, err := ilrw.Decode(il)
	if err != nil || body.LocalVarSig == 0 {
		return nil
	}
	sk := [2]uint64{uint64(fi.ModuleID), uint64(body.LocalVarSig)}
	if p.sigs[sk] {
		return nil
	}
	p.sigs[sk] = true
	if sig, err := imp.GetSigFromToken(body.LocalVarSig); err == nil {
		p.corpus.Add(bench.KindLocalSig, sig)
	} else {
		p.errs++
	}
	return nil
}

func (p *corpusprof) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.Create(os.Getenv("BENCH_CORPUS"))
	if err == nil {
		_, err = p.corpus.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gocorpus: %v\n", err)
	}
	fmt.Fprintf(os.Stderr, "gocorpus: Shutdown bodies=%d methodSigs=%d localSigs=%d errors=%d\n",
		len(p.corpus.Bodies), len(p.corpus.MethodSigs), len(p.corpus.LocalSigs), p.errs)
	return nil
}

func init() { profiler.Register("{7F2C4A98-1E6B-4D35-A8C7-3B9E5D1F2A64}", &corpusprof{}) }

func main() {}
