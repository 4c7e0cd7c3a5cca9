// Command instrprof is the profiler of package instr's integration tests:
// it instruments the targets of INSTRPROF_TARGETS (comma-separated) with
// the integration InstrHelper.Hooks of InstrHelper.dll, placed beside the
// test app (the tests' stand-in for delivering the helper). With
// INSTRPROF_REJIT=1 it enables ReJIT; with INSTRPROF_ADD a second list of
// targets is added at run time, when the app's method
// Shop.Program::AddTargetsNow is first compiled (then the file named by
// INSTR_WAIT_FILE, which the app waits for, is created); with INSTRPROF_SINK=1
// what Begin and End throw goes to InstrHelper.Hooks::Failed; with
// INSTR_START_FILE set, the file it names is created when the app's Main
// is compiled and the ReJIT requests made so far were accepted (the app
// waits for it); with INSTRPROF_READY_AT=1 the helper counts as ready (Config.Ready,
// HelperReady) only from the compilation of AddTargetsNow on. It reports on stderr,
// lines starting "instrprof: ": at Shutdown each method by id and what the
// Instrumenter's report says. INSTRPROF_JITLOG=ASSEMBLY logs each
// JITCompilationStarted of a function of that assembly (FunctionID, token,
// name, size of its IL by GetILFunctionBody).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info *profiler.Info
	in   *instr.Instrumenter
	d    *instr.Delivery // attach with delivery
	add  []target.Target
	once sync.Once
	done chan struct{}
	// INSTRPROF_READY_AT: the helper counts as not ready until the app's
	// Shop.Program::AddTargetsNow is compiled.
	readyAt bool
	ready   atomic.Bool
	// INSTRPROF_NAMES=1: the name checks.
	namesMu    sync.Mutex
	jitNames   map[[2]uint64]string // (module, token) -> the profiler's name at JITCompilationStarted
	namesAgree int
	prepared   atomic.Int64 // INSTRPROF_COUNT_PREPARE: methods offered to Prepare that are no targets
}

var integ = instr.Integration{
	Assembly: metadata.AssemblyName{Name: "InstrHelper"},
	Type:     "InstrHelper.Hooks",
	Args:     true,
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "instrprof: "+format+"\n", args...)
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
	ts, err := target.ParseList(os.Getenv("INSTRPROF_TARGETS"))
	if err != nil {
		logf("bad targets: %v", err)
		return err
	}
	if p.add, err = target.ParseList(os.Getenv("INSTRPROF_ADD")); err != nil {
		logf("bad targets: %v", err)
		return err
	}
	cfg := instr.Config{Rules: []instr.Rule{{Targets: ts, Integration: integ}},
		ReJIT: os.Getenv("INSTRPROF_REJIT") == "1"}
	if os.Getenv("INSTRPROF_READY_AT") == "1" {
		p.readyAt = true
		cfg.Ready = p.ready.Load
	}
	if os.Getenv("INSTRPROF_SINK") == "1" {
		cfg.Errors = &instr.ErrorSink{Assembly: integ.Assembly, Type: integ.Type, Method: "Failed"}
	}
	if os.Getenv("INSTRPROF_TAIL") == "1" {
		cfg.Prepare = addTail
	}
	if os.Getenv("INSTRPROF_COUNT_PREPARE") != "" {
		// Count the methods Prepare is offered that are no targets; with
		// INSTRPROF_COUNT_PREPARE=quiet, Preparing says no more.
		next := cfg.Prepare
		cfg.Prepare = func(m *ilrw.Method) (bool, error) {
			if _, ok := p.in.Lookup(m.ModuleID, m.Token); !ok {
				p.prepared.Add(1)
			}
			if next != nil {
				return next(m)
			}
			return false, nil
		}
		if os.Getenv("INSTRPROF_COUNT_PREPARE") == "quiet" {
			cfg.Preparing = func() bool { return false }
		}
	}
	if os.Getenv("INSTRPROF_NAMES") == "1" {
		next := cfg.Prepare
		cfg.Prepare = func(m *ilrw.Method) (bool, error) {
			p.checkNames(m)
			if next != nil {
				return next(m)
			}
			return false, nil
		}
	}
	if p.in, err = instr.New(info, cfg); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

// addTail makes the test app's Shop.Calc::TailCaller tail-call (neither mcs
// nor Roslyn emits the prefix) and shortens the branches of Shop.Calc::Big (mcs
// emits long ones only), so that the wrap meets both.
func addTail(m *ilrw.Method) (bool, error) {
	switch m.Name() {
	case "Shop.Calc::TailCaller":
		ins := m.Body.Instructions
		for i := 0; i+1 < len(ins); i++ {
			if ins[i].Op == ilrw.OpCall && ins[i+1].Op == ilrw.OpRet {
				logf("prepare: tail. before the call of %s", m.Name())
				return true, m.Body.InsertBefore(ins[i], ilrw.I(ilrw.OpTail))
			}
		}
	case "Shop.Calc::Big":
		n, err := m.Body.ShortenBranches()
		short := 0
		for _, in := range m.Body.Instructions {
			if in.Op.Operand() == ilrw.ShortInlineBrTarget {
				short++
			}
		}
		logf("prepare: %d short branches in %s, %d made short here", short, m.Name(), n)
		return n > 0, err
	}
	return false, nil
}

// InitializeForAttach instruments the targets the client data lists
// (comma-separated) through ReJIT once the attach completes. Client data
// "deliver=PATH;TARGETS" delivers the helper read from PATH (an
// instr.Delivery: no file beside the app) and logs "helper delivered"
// once the wrap's ReJIT requests were accepted.
func (p *prof) InitializeForAttach(info *profiler.Info, clientData []byte) error {
	p.info = info
	data := string(clientData)
	var helper []byte
	if rest, ok := strings.CutPrefix(data, "deliver="); ok {
		path, targets, _ := strings.Cut(rest, ";")
		b, err := os.ReadFile(path)
		if err != nil {
			logf("helper: %v", err)
			return err
		}
		helper, data = b, targets
	}
	ts, err := target.ParseList(data)
	if err != nil {
		logf("bad targets: %v", err)
		return err
	}
	cfg := instr.Config{Rules: []instr.Rule{{Targets: ts, Integration: integ}}, ReJIT: true}
	var d *instr.Delivery
	if helper != nil {
		if d, err = instr.NewDelivery(info, helper); err != nil {
			logf("delivery: %v", err)
			return err
		}
		d.Configure(&cfg)
		p.d = d
	}
	if p.in, err = instr.New(info, cfg); err != nil {
		return err
	}
	if d != nil {
		d.OnLoaded(func() {
			p.in.HelperReady()
			p.in.WaitReJIT()
			logf("helper delivered; host %s; wrap requested", d.Host())
		})
	}
	logf("attached")
	return info.SetAttachEventMask(p.in.EventMask(), 0)
}

func (p *prof) ProfilerAttachComplete() error {
	go func() {
		err := p.in.InstrumentLoaded()
		r := p.in.Report()
		logf("instrumented loaded modules: %v; %d instrumented, %d pending, %d failed", err, len(r.Instrumented), len(r.Pending), len(r.Failed))
		for _, m := range r.Pending {
			logf("pending %s rejit=%v", m.Name, m.ReJIT)
		}
		if p.d != nil {
			logf("delivery: host %s, loaded %v, err %v", p.d.Host(), p.d.Loaded(), p.d.Err())
		}
	}()
	return nil
}

// checkNames compares, for a matched method, the name instr gives it with
// the names ilrw (m.Name) and profiler (FunctionNameParts) give it,
// converted by instr/target: the SDK's one spelling.
func (p *prof) checkNames(m *ilrw.Method) {
	im, ok := p.in.Lookup(m.ModuleID, m.Token)
	if !ok {
		return
	}
	asm := im.Name[:strings.IndexByte(im.Name, '!')]
	il := m.Name()
	sep := strings.LastIndex(il, "::")
	fromIL := target.Name(asm, target.TypeFromIL(il[:sep]), il[sep+2:])
	f, err := p.info.GetFunctionFromToken(m.ModuleID, m.Token)
	fromProf := "?"
	if err == nil {
		if parts, err := p.info.FunctionNameParts(f); err == nil {
			fromProf = target.Name(asm, target.TypeFromProfiler(parts.Class), parts.Method)
		}
	} else {
		// Generic code has no FunctionID for its definition: the
		// profiler's name is the one of the function being compiled.
		p.namesMu.Lock()
		fromProf = p.jitNames[[2]uint64{uint64(m.ModuleID), uint64(m.Token)}]
		p.namesMu.Unlock()
	}
	if fromIL != im.Name || fromProf != im.Name {
		logf("name mismatch: instr %s, ilrw %s (%s), profiler %s", im.Name, fromIL, il, fromProf)
		return
	}
	p.namesMu.Lock()
	p.namesAgree++
	p.namesMu.Unlock()
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if err := p.in.ModuleLoadFinished(m, hr); err != nil {
		logf("ModuleLoadFinished: %v", err)
	}
	return nil
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	if p.in != nil && os.Getenv("INSTRPROF_NAMES") == "1" {
		if fi, err := p.info.GetFunctionInfo(f); err == nil {
			if im, ok := p.in.Lookup(fi.ModuleID, fi.Token); ok {
				if parts, err := p.info.FunctionNameParts(f); err == nil {
					p.namesMu.Lock()
					if p.jitNames == nil {
						p.jitNames = map[[2]uint64]string{}
					}
					p.jitNames[[2]uint64{uint64(fi.ModuleID), uint64(fi.Token)}] = target.Name(im.Name[:strings.IndexByte(im.Name, '!')], target.TypeFromProfiler(parts.Class), parts.Method)
					p.namesMu.Unlock()
				}
			}
		}
	}
	if p.d != nil {
		// Attach with delivery: which methods of the app are compiled
		// (the test checks that none could host the loader at a first JIT).
		if fi, err := p.info.GetFunctionInfo(f); err == nil {
			if mi, err := p.info.GetModuleInfo2(fi.ModuleID); err == nil {
				if ai, err := p.info.GetAssemblyInfo(mi.AssemblyID); err == nil && ai.Name == "AttachApp" {
					if parts, err := p.info.FunctionNameParts(f); err == nil {
						logf("jit %s::%s", parts.Class, parts.Method)
					}
				}
			}
		}
	}
	if asm := os.Getenv("INSTRPROF_JITLOG"); asm != "" {
		p.jitlog(f, asm)
	}
	if start := os.Getenv("INSTR_START_FILE"); start != "" {
		if parts, err := p.info.FunctionNameParts(f); err == nil && parts.Method == "Main" {
			go func() {
				p.in.WaitReJIT()
				os.WriteFile(start, nil, 0o644)
			}()
		}
	}
	if p.readyAt && !p.ready.Load() {
		if parts, err := p.info.FunctionNameParts(f); err == nil && parts.Method == "AddTargetsNow" {
			p.ready.Store(true)
			p.in.HelperReady()
			logf("helper ready")
			go func() {
				p.in.WaitReJIT()
				if f := os.Getenv("INSTR_WAIT_FILE"); f != "" {
					os.WriteFile(f, nil, 0o644)
				}
			}()
		}
	}
	if len(p.add) > 0 {
		if parts, err := p.info.FunctionNameParts(f); err == nil && parts.Method == "AddTargetsNow" {
			p.once.Do(func() {
				p.done = make(chan struct{})
				go func() {
					defer close(p.done)
					err := p.in.AddRule(instr.Rule{Targets: p.add, Integration: integ})
					logf("added targets at run time: %v", err)
					if f := os.Getenv("INSTR_WAIT_FILE"); f != "" {
						os.WriteFile(f, nil, 0o644)
					}
				}()
			})
		}
	}
	return p.in.JITCompilationStarted(f, safe)
}

// jitlog logs, for a function of assembly asm being compiled, its
// FunctionID, MethodDef token, name and the size of the IL that
// GetILFunctionBody returns for the token (INSTRPROF_JITLOG=asm): "jitlog
// fid=0x... token=0x06000001 Type::Method il=N".
func (p *prof) jitlog(f profiler.FunctionID, asm string) {
	fi, err := p.info.GetFunctionInfo(f)
	if err != nil {
		return
	}
	mi, err := p.info.GetModuleInfo2(fi.ModuleID)
	if err != nil {
		return
	}
	ai, err := p.info.GetAssemblyInfo(mi.AssemblyID)
	if err != nil || ai.Name != asm {
		return
	}
	parts, err := p.info.FunctionNameParts(f)
	if err != nil {
		return
	}
	il, err := p.info.GetILFunctionBody(fi.ModuleID, fi.Token)
	logf("jitlog fid=%#x token=%#x %s::%s il=%d err=%v", uint64(f), uint32(fi.Token), parts.Class, parts.Method, len(il), err)
}

func (p *prof) ModuleUnloadStarted(m profiler.ModuleID) error {
	return p.in.ModuleUnloadStarted(m)
}

func (p *prof) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *prof) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

func (p *prof) ReJITError(m profiler.ModuleID, tok metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	return p.in.ReJITError(m, tok, f, hr)
}

func (p *prof) Shutdown() error {
	// The ends of task-returning calls Main did not wait for to the end
	// (TestAsyncThunk: Main returns once Run's task is complete).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	n, err := instr.WaitTaskEnds(ctx)
	cancel()
	logf("task ends pending=%d wait=%v", n, err)
	r := p.in.Report()
	for id := int32(0); ; id++ {
		m, ok := p.in.Method(id)
		if !ok {
			break
		}
		logf("method %d %s (%s) rejit=%v", m.ID, m.Name, strings.Join(m.Params, ", "), m.ReJIT)
	}
	for _, m := range r.Instrumented {
		logf("instrumented %s", m.Name)
	}
	for _, m := range r.Pending {
		logf("pending %s", m.Name)
	}
	for _, f := range r.Failed {
		logf("failed %s", f)
	}
	for _, t := range r.Unmatched {
		logf("unmatched %s", t)
	}
	if os.Getenv("INSTRPROF_COUNT_PREPARE") != "" {
		logf("prepare saw %d methods that are no targets", p.prepared.Load())
	}
	if os.Getenv("INSTRPROF_NAMES") == "1" {
		p.namesMu.Lock()
		logf("names agree for %d methods", p.namesAgree)
		p.namesMu.Unlock()
	}
	if p.d != nil {
		logf("delivery at shutdown: host %s, loaded %v, err %v", p.d.Host(), p.d.Loaded(), p.d.Err())
	}
	logf("summary instrumented=%d pending=%d failed=%d unmatched=%d without-body=%d",
		len(r.Instrumented), len(r.Pending), len(r.Failed), len(r.Unmatched), r.WithoutBody)
	return nil
}

func init() {
	profiler.Register("{3E6A1F20-9B4C-4D7E-8A15-6C2F0D9B7E41}", &prof{})
}

func main() {}
