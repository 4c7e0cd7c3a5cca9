// Command ilprof is the profiler of package ilrw's integration tests. It
// reports on stderr, lines starting "ilprof: ". ILPROF_MODE selects what
// it does:
//
//	roundtrip  decode and re-encode the body of every method compiled
//	           (with Decode and Encode, and again with one reused
//	           Decoder and AppendEncode), recompute its max stack, dump
//	           it with token names; print
//	           counts at Shutdown (and the dump of the method named by
//	           ILPROF_DUMP); ILPROF_SAVE names a directory to save a few
//	           real bodies in (seeds for the fuzz tests).
//	rewrite    add entry and exit hooks (class Hooks of the test app) to
//	           every method of namespace Subjects, ticks before the calls
//	           of loops, and replace calls of Subjects.Greeter::Original.
//	rejit      when Program::RequestRejit is compiled, ReJIT
//	           Program::Greeting to return another string; when
//	           Program::RequestRevert is compiled, revert it.
//	rejitinl   the same with RequestReJITWithInliners (inlining blocked):
//	           Program::Greeting is inlined into Program::Caller, which
//	           the runtime must recompile too (with its own IL).
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info *profiler.Info
	mode string
	rw   *ilrw.Rewriter

	mu      sync.Mutex
	modules map[profiler.ModuleID]*ilrw.Module
	seen    map[[2]uint64]bool
	rt      rtStats
	saved   int
	dec     ilrw.Decoder // reused for every body, under mu
	buf     []byte
	notes   []string

	// rewrite mode
	tinyPromoted, replaced int

	// rejit mode
	greetModule profiler.ModuleID
	greetToken  metadata.Token
}

type rtStats struct {
	bodies, bytes, tiny, fat, eh, clauses, mismatches, decodeErrors int
	reuseMismatches                                                 int // ilrw.Decoder + AppendEncode
	stackEqual, stackLower, stackHigher, stackErrors, dumpTokens    int
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "ilprof: "+format+"\n", args...)
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
	p.modules = map[profiler.ModuleID]*ilrw.Module{}
	p.seen = map[[2]uint64]bool{}
	logf("Initialize mode=%s", p.mode)
	switch p.mode {
	case "roundtrip":
		return info.SetEventMask(profiler.MonitorJITCompilation)
	case "rewrite":
		p.rw = ilrw.NewRewriter(info, p.rewrite)
		// A method inlined into its caller is never compiled on its own, so
		// it would escape the rewrite.
		return info.SetEventMask(profiler.MonitorJITCompilation | profiler.DisableInlining)
	case "rejit", "rejitinl":
		p.rw = ilrw.NewRewriter(info, nil)
		return info.SetEventMask(profiler.MonitorJITCompilation | profiler.EnableReJIT)
	}
	return fmt.Errorf("ilprof: unknown ILPROF_MODE %q", p.mode)
}

func (p *prof) module(id profiler.ModuleID) (*ilrw.Module, error) {
	if m := p.modules[id]; m != nil {
		return m, nil
	}
	m, err := ilrw.OpenModule(p.info, id, false)
	if err != nil {
		return nil, err
	}
	p.modules[id] = m
	return m, nil
}

func (p *prof) note(format string, args ...any) {
	if len(p.notes) < 20 {
		p.notes = append(p.notes, fmt.Sprintf(format, args...))
	}
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	switch p.mode {
	case "roundtrip":
		return p.roundTrip(f)
	case "rewrite":
		if err := p.rw.JITCompilationStarted(f); err != nil {
			p.mu.Lock()
			p.note("rewrite error: %v", err)
			p.mu.Unlock()
		}
		return nil
	case "rejit", "rejitinl":
		return p.rejitTrigger(f)
	}
	return nil
}

func (p *prof) roundTrip(f profiler.FunctionID) error {
	fi, err := p.info.GetFunctionInfo(f)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	k := [2]uint64{uint64(fi.ModuleID), uint64(fi.Token)}
	if p.seen[k] {
		return nil // another instantiation of the same definition
	}
	p.seen[k] = true
	il, err := p.info.GetILFunctionBody(fi.ModuleID, fi.Token)
	if err != nil {
		return nil // no IL (runtime-implemented methods)
	}
	mod, err := p.module(fi.ModuleID)
	if err != nil {
		p.note("module: %v", err)
		return nil
	}
	p.rt.bodies++
	p.rt.bytes += len(il)
	b, err := ilrw.Decode(il)
	if err != nil {
		p.rt.decodeErrors++
		p.note("decode %s: %v", mod.TokenName(fi.Token), err)
		return nil
	}
	if b.Fat {
		p.rt.fat++
	} else {
		p.rt.tiny++
	}
	if len(b.Clauses) > 0 {
		p.rt.eh++
		p.rt.clauses += len(b.Clauses)
	}
	if dir := os.Getenv("ILPROF_SAVE"); dir != "" && p.saved < 40 && (len(b.Clauses) > 0 || strings.Contains(b.Dump(nil), "switch")) {
		// Real bodies with EH sections or switches, as fuzzing seeds.
		os.WriteFile(fmt.Sprintf("%s/body%02d", dir, p.saved), il, 0o644)
		p.saved++
	}
	out, err := b.Encode()
	if err != nil || !bytes.Equal(out, il) {
		p.rt.mismatches++
		p.note("mismatch %s: %v\n  in  %x\n  out %x", mod.TokenName(fi.Token), err, il, out)
	}
	// The same through the reusing API, whose memory held the last body.
	if rb, err := p.dec.Decode(il); err != nil {
		p.rt.reuseMismatches++
		p.note("Decoder.Decode %s: %v", mod.TokenName(fi.Token), err)
	} else if p.buf, err = rb.AppendEncode(p.buf[:0]); err != nil || !bytes.Equal(p.buf, il) {
		p.rt.reuseMismatches++
		p.note("reuse mismatch %s: %v\n  in  %x\n  out %x", mod.TokenName(fi.Token), err, il, p.buf)
	}
	orig := int(b.MaxStack)
	n, err := b.ComputeMaxStack(mod)
	switch {
	case err != nil:
		p.rt.stackErrors++
		p.note("max stack %s: %v", mod.TokenName(fi.Token), err)
	case !b.Fat:
		// A tiny header says nothing: its max stack is 8 by definition.
	case n == orig:
		p.rt.stackEqual++
	case n < orig:
		p.rt.stackLower++
	default:
		p.rt.stackHigher++
		p.note("max stack %s: computed %d, compiler %d", mod.TokenName(fi.Token), n, orig)
	}
	d := b.Dump(mod)
	p.rt.dumpTokens += strings.Count(d, "::")
	if want := os.Getenv("ILPROF_DUMP"); want != "" && mod.TokenName(fi.Token) == want {
		for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
			logf("dump %s", l)
		}
	}
	return nil
}

// rewrite is the RewriteFunc of the rewrite mode.
func (p *prof) rewrite(m *ilrw.Method) (bool, error) {
	name := m.Name()
	if !strings.HasPrefix(name, "Subjects.") || name == "Subjects.Greeter::Original" || strings.HasSuffix(name, "::ToString") {
		return false, nil
	}
	mod := m.Module
	find := func(typ, meth string) (metadata.Token, error) { return mod.FindMethod(typ, meth) }
	enter, err := find("Hooks", "Enter")
	if err != nil {
		return false, err
	}
	exit, err := find("Hooks", "Exit")
	if err != nil {
		return false, err
	}
	sig, err := m.ILSig() // as the body sees it (runtime async: T, not Task<T>)
	if err != nil {
		return false, err
	}
	wasTiny := !m.Body.Fat
	b := m.Body
	if strings.Contains(name, "::Loop") {
		// mcs never emits short branches; make them short as an optimising
		// compiler would, so that the ticks below push some out of reach.
		if _, err := b.ShortenBranches(); err != nil {
			return false, err
		}
		tick, err := find("Hooks", "Tick")
		if err != nil {
			return false, err
		}
		var calls []*ilrw.Instruction
		for _, in := range b.Instructions {
			if in.Op == ilrw.OpCall || in.Op == ilrw.OpCallvirt {
				calls = append(calls, in)
			}
		}
		for _, in := range calls {
			if err := b.InsertBefore(in, ilrw.IToken(ilrw.OpCall, tick)); err != nil {
				return false, err
			}
		}
	}
	orig, err := find("Subjects.Greeter", "Original")
	if err != nil {
		return false, err
	}
	repl, err := find("Hooks", "Replacement")
	if err != nil {
		return false, err
	}
	n := b.ReplaceCalls(orig, repl)
	str, err := mod.UserString(name)
	if err != nil {
		return false, err
	}
	err = b.WrapExit(mod, sig, func(ex ilrw.Exit) ([]*ilrw.Instruction, error) {
		ld, err := ex.LoadReturnAsObject(mod)
		if err != nil {
			return nil, err
		}
		ins := []*ilrw.Instruction{ilrw.IToken(ilrw.OpLdstr, str)}
		ins = append(ins, ld...)
		return append(ins, ilrw.IToken(ilrw.OpCall, exit)), nil
	})
	if err != nil {
		return false, err
	}
	if err := b.InsertAtEntry(ilrw.IToken(ilrw.OpLdstr, str), ilrw.IToken(ilrw.OpCall, enter)); err != nil {
		return false, err
	}
	p.mu.Lock()
	if wasTiny {
		p.tinyPromoted++
	}
	p.replaced += n
	p.mu.Unlock()
	return true, nil
}

// rejitTrigger watches the compilation of the app's marker methods.
func (p *prof) rejitTrigger(f profiler.FunctionID) error {
	fi, err := p.info.GetFunctionInfo(f)
	if err != nil {
		return err
	}
	mod, err := ilrw.OpenModule(p.info, fi.ModuleID, false)
	if err != nil {
		return err
	}
	name := mod.TokenName(fi.Token)
	var greet metadata.Token
	if name == "Program::RequestRejit" || name == "Program::RequestRevert" {
		greet, err = mod.FindMethod("Program", "Greeting")
	}
	mod.Release()
	if err != nil {
		return err
	}
	switch name {
	case "Program::RequestRejit":
		rw := func(m *ilrw.Method) (bool, error) {
			s, err := m.Module.UserString("rewritten by ReJIT")
			if err != nil {
				return false, err
			}
			n := 0
			for _, in := range m.Body.Instructions {
				if in.Op == ilrw.OpLdstr {
					in.Token = s
					n++
				}
			}
			return n > 0, nil
		}
		go func() {
			if p.mode == "rejitinl" {
				err := p.rw.RequestReJITWithInliners(profiler.ReJITBlockInlining, fi.ModuleID, []metadata.Token{greet}, rw, nil)
				logf("RequestReJITWithInliners: %v", err)
				return
			}
			logf("RequestReJIT: %v", p.rw.RequestReJIT(fi.ModuleID, []metadata.Token{greet}, rw))
		}()
	case "Program::RequestRevert":
		go func() {
			logf("RequestRevert: %v", p.rw.RequestRevert(fi.ModuleID, []metadata.Token{greet}))
		}()
	}
	return nil
}

func (p *prof) GetReJITParameters(m profiler.ModuleID, t metadata.Token, fc *profiler.FunctionControl) error {
	err := p.rw.GetReJITParameters(m, t, fc)
	logf("GetReJITParameters %v: %v", t, err)
	return err
}

func (p *prof) ReJITError(m profiler.ModuleID, t metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	logf("ReJITError %v: %v", t, hr)
	return nil
}

func (p *prof) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.mode {
	case "roundtrip":
		s := p.rt
		logf("roundtrip bodies=%d bytes=%d tiny=%d fat=%d withEH=%d clauses=%d mismatches=%d decodeErrors=%d reuseMismatches=%d",
			s.bodies, s.bytes, s.tiny, s.fat, s.eh, s.clauses, s.mismatches, s.decodeErrors, s.reuseMismatches)
		logf("maxstack equal=%d lower=%d higher=%d errors=%d dumpTokens=%d", s.stackEqual, s.stackLower, s.stackHigher, s.stackErrors, s.dumpTokens)
	case "rewrite", "rejit", "rejitinl":
		s := p.rw.Stats()
		logf("rewriter rewritten=%d skipped=%d rejitted=%d errors=%d widened=%d tinyPromoted=%d replaced=%d",
			s.Rewritten, s.Skipped, s.ReJITted, s.Errors, s.Widened, p.tinyPromoted, p.replaced)
	}
	for _, n := range p.notes {
		logf("note %s", n)
	}
	for _, m := range p.modules {
		m.Release()
	}
	p.modules = nil
	return nil
}

func init() {
	profiler.Register("{3E0B7C52-8A41-4F2D-9B6E-1C5D7A9F0E24}", &prof{mode: os.Getenv("ILPROF_MODE")})
}

func main() {}
