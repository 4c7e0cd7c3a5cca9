// Command profiler is the rejit scenario's profiler: it lets every inlining
// happen and records who inlined whom; when TriggerReJIT is compiled it asks
// for ReJIT of InlineeTarget with its inliners (inlining of it blocked from
// then on), rewriting each ldstr of every recompiled method to a string
// naming the method (through package ilrw); when TriggerRevert is compiled
// it reverts InlineeTarget. Each recompiled function must get a ReJIT ID,
// no function may have a null native code start, no ReJIT may fail, and
// the recompilations must be exactly InlineeTarget and its inliners.
package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type rejit struct {
	profiler.Base
	info *profiler.Info
	rw   *ilrw.Rewriter

	mu        sync.Mutex
	inliners  map[profiler.FunctionID]map[profiler.FunctionID]bool // inlinee → its inliners
	target    profiler.FunctionID
	targetMod profiler.ModuleID
	targetTok metadata.Token
	rejits    map[profiler.FunctionID]int
}

func (p *rejit) Initialize(info *profiler.Info) error {
	p.info = info
	p.rw = ilrw.NewRewriter(info, nil)
	p.inliners = map[profiler.FunctionID]map[profiler.FunctionID]bool{}
	p.rejits = map[profiler.FunctionID]int{}
	if err := info.SetEventMask(profiler.EnableReJIT | profiler.MonitorJITCompilation | profiler.MonitorCacheSearches); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

// appMethod is the bare name of f when it is a method of the app's class.
func (p *rejit) appMethod(f profiler.FunctionID) string {
	parts, err := p.info.FunctionNameParts(f)
	if err != nil || parts.Class != "ReJITApp" {
		return ""
	}
	return parts.Method
}

// rewrite replaces every string the method loads by one naming the method.
func rewrite(m *ilrw.Method) (bool, error) {
	name := m.Name()
	if i := strings.LastIndex(name, "::"); i >= 0 {
		name = name[i+2:]
	}
	changed := false
	for _, in := range m.Body.Instructions {
		if in.Op != ilrw.OpLdstr {
			continue
		}
		tok, err := m.Module.UserString("Hello from profiler rejit method '" + name + "'!")
		if err != nil {
			return false, err
		}
		in.Token, changed = tok, true
	}
	return changed, nil
}

func (p *rejit) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inliners[callee] == nil {
		p.inliners[callee] = map[profiler.FunctionID]bool{}
	}
	p.inliners[callee][caller] = true
	return true, nil
}

// checkCodeStarts is upstream's check for runtime issue 13404: no ReJIT
// version of a function has a null native code start.
func (p *rejit) checkCodeStarts(f profiler.FunctionID) {
	ids, err := p.info.GetReJITIDs(f)
	if err != nil {
		check.Failf("GetReJITIDs(%#x): %v", f, err)
		return
	}
	for _, id := range ids {
		starts, err := p.info.GetNativeCodeStartAddresses(f, id)
		if err != nil {
			check.Failf("GetNativeCodeStartAddresses(%#x, %d): %v", f, id, err)
			continue
		}
		for _, a := range starts {
			check.That(a != 0, "GetNativeCodeStartAddresses(%#x, %d): a null start", f, id)
		}
	}
}

func (p *rejit) seen(f profiler.FunctionID) {
	p.checkCodeStarts(f)
	switch p.appMethod(f) {
	case "InlineeTarget":
		fi, err := p.info.GetFunctionInfo(f)
		if err != nil {
			check.Failf("GetFunctionInfo(InlineeTarget): %v", err)
			return
		}
		p.mu.Lock()
		p.target, p.targetMod, p.targetTok = f, fi.ModuleID, fi.Token
		p.mu.Unlock()
	case "TriggerReJIT":
		p.mu.Lock()
		mod, tok := p.targetMod, p.targetTok
		p.mu.Unlock()
		if mod == 0 {
			check.Failf("TriggerReJIT compiled before InlineeTarget was seen")
			return
		}
		err := p.rw.RequestReJITWithInliners(profiler.ReJITBlockInlining|profiler.ReJITInliningCallbacks,
			mod, []metadata.Token{tok}, rewrite, rewrite)
		if err != nil {
			check.Failf("RequestReJITWithInliners: %v", err)
		}
	case "TriggerRevert":
		p.mu.Lock()
		mod, tok := p.targetMod, p.targetTok
		p.mu.Unlock()
		if err := p.rw.RequestRevert(mod, []metadata.Token{tok}); err != nil {
			check.Failf("RequestRevert: %v", err)
		}
	}
}

func (p *rejit) JITCompilationFinished(f profiler.FunctionID, hr profiler.HRESULT, safe bool) error {
	p.seen(f)
	return nil
}

func (p *rejit) JITCachedFunctionSearchFinished(f profiler.FunctionID, result profiler.JITCache) error {
	if result == profiler.CachedFunctionFound {
		p.checkCodeStarts(f)
	}
	return nil
}

func (p *rejit) ReJITCompilationStarted(f profiler.FunctionID, id profiler.ReJITID, safe bool) error {
	p.mu.Lock()
	p.rejits[f]++
	p.mu.Unlock()
	return nil
}

func (p *rejit) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	if err := p.rw.GetReJITParameters(m, tok, fc); err != nil {
		check.Failf("GetReJITParameters(%v): %v", tok, err)
		return err
	}
	return nil
}

func (p *rejit) ReJITCompilationFinished(f profiler.FunctionID, id profiler.ReJITID, hr profiler.HRESULT, safe bool) error {
	ids, err := p.info.GetReJITIDs(f)
	if err != nil {
		check.Failf("GetReJITIDs(%#x) after its ReJIT: %v", f, err)
	} else if len(ids) == 0 {
		check.Failf("GetReJITIDs(%#x): none for a function just recompiled", f)
	}
	return nil
}

func (p *rejit) ReJITError(m profiler.ModuleID, tok metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	check.Failf("ReJITError for %v (function %#x): %v", tok, f, hr)
	return nil
}

func (p *rejit) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	// The runtime recompiles the methods whose code holds an inlined copy
	// of the target: its inliners, or, for an inliner that was itself
	// inlined (InlineeChain1), the methods that inlined that one.
	want := map[profiler.FunctionID]bool{p.target: true}
	var roots func(f profiler.FunctionID, depth int)
	roots = func(f profiler.FunctionID, depth int) {
		if len(p.inliners[f]) == 0 || depth > 8 {
			want[f] = true
			return
		}
		for c := range p.inliners[f] {
			roots(c, depth+1)
		}
	}
	for f := range p.inliners[p.target] {
		roots(f, 0)
	}
	var final []string
	for f, n := range p.rejits {
		if !want[f] {
			final = append(final, fmt.Sprintf("%s (%#x) was recompiled %d times but neither is InlineeTarget nor inlined it", p.appMethod(f), f, n))
		}
	}
	for f := range want {
		if p.rejits[f] != 1 {
			final = append(final, fmt.Sprintf("%s (%#x) was recompiled %d times, want once", p.appMethod(f), f, p.rejits[f]))
		}
	}
	if len(want) < 3 {
		final = append(final, fmt.Sprintf("InlineeTarget is inlined into %d methods, want at least 2 (the JIT inlined less than the scenario needs)", len(want)-1))
	}
	names := []string{}
	for f := range want {
		names = append(names, p.appMethod(f))
	}
	check.Logf("rejit: recompiled %d functions, want %v", len(p.rejits), names)
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{7D3B9E21-5A4C-4F83-8B06-1E9C2D4A7F09}", &rejit{})
}

func main() {}
