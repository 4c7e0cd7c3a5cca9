package instr

/*
#include <stdlib.h>
#include <stdint.h>
*/
import "C"

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

//go:generate go run github.com/clrprof/clrprof/internal/cmd/csgen -out loader/Clrprof.Instr.Loader.dll loader/Loader.cs

// loaderDLL is the managed loader (loader/Loader.cs), the first assembly
// delivered.
//
//go:embed loader/Clrprof.Instr.Loader.dll
var loaderDLL []byte

// DeliveryEnv names the environment variable that turns delivery off when
// it is "0": no method is changed, the helper assemblies never reach the
// application, and every wrapped target is reported as not instrumented.
const DeliveryEnv = "CLRPROF_INSTR_DELIVERY"

// ErrDeliveryOff is Delivery.Err's answer when DeliveryEnv turned it off.
var ErrDeliveryOff = errors.New("instr: helper delivery turned off (" + DeliveryEnv + "=0)")

// A Delivery brings helper assemblies into the application without any
// file beside it and without the application referencing them.
//
// The helpers' bytes live in the profiler library (go:embed them). At the
// first compilation of a suitable method (see Prepare) the Delivery defines
// in that method's module a type holding two P/Invoke methods into the
// profiler library and a loader method, and calls the loader at the
// method's entry. The loader asks the library for the bytes of each
// assembly, loads them with Assembly.Load(byte[]) and starts
// Clrprof.Instr.Loader (an SDK assembly delivered first), which answers
// AppDomain.AssemblyResolve for them: the AssemblyRefs of rewritten methods
// and the helpers' references to each other then bind to the loaded
// assemblies. Nothing the loader does can throw into the application: its
// own code catches everything and reports failures to Err, and the call in
// the host method sits in a try/catch of its own.
//
// The same mechanism works on .NET Core 2.0, 2.1, 3.1 and .NET 5+ (tested on
// 2.0.0, 2.1.30, 3.1.23 and 8.0.4): each delivered assembly gets a load
// context of its own, so a helper may reference another version of an
// assembly the application uses (deliver that version too). A Delivery is
// turned off by DeliveryEnv=0. Use it through Configure:
//
//	d, err := instr.NewDelivery(info, helperDLL) // //go:embed Helper.dll
//	cfg := instr.Config{Rules: rules}
//	d.Configure(&cfg)
//	in, err := instr.New(info, cfg)
//	d.OnLoaded(in.HelperReady)
//
// After an attach no method may be compiled for the first time again:
// then Instrumenter.InstrumentLoaded (and AddRule) host the loader in the
// targets themselves, by a first ReJIT that adds only its call, and wrap
// them by a second once it ran (tested on 3.1.23 and 8.0.4).
//
// docs/instrumentation.md describes the whole path and its limits.
type Delivery struct {
	info   *profiler.Info
	blobs  []unsafe.Pointer // C copies: the loader, then the helpers
	sizes  []int
	off    bool
	loaded atomic.Bool
	// settled: the loader is injected, or Prepare gave up; Prepare wants
	// no more methods.
	settled atomic.Bool

	mu       sync.Mutex
	injected bool   // the loader call is in place
	host     string // the method that hosts it
	hostMod  profiler.ModuleID
	hostTok  metadata.Token
	tries    int
	err      error
	onLoaded []func()
	failures map[int32]*IntegrationError
	// rejitHosts: the modules whose methods recompiled by ReJIT call the
	// loader (deliver_rejit.go).
	rejitHosts map[profiler.ModuleID]rejitLoader
	// running: a loader asked for the assemblies; any other loader
	// (another host's) is told there are none.
	running atomic.Bool
}

// An IntegrationError counts the exceptions an integration threw for one
// instrumented method (reported by the wrap through
// Clrprof.Instr.Loader.Failed; the wrap drops them, the app never sees them).
type IntegrationError struct {
	ID    int32  // the instrumented method's id
	Count int64  // how many times
	Type  string // the full name of the first exception's type
}

// IntegrationErrors returns the integrations' exceptions per method, by id.
func (d *Delivery) IntegrationErrors() []IntegrationError {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]IntegrationError, 0, len(d.failures))
	for _, f := range d.failures {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// maxHostTries bounds how many methods Prepare tries to inject into when
// defining the loader fails.
const maxHostTries = 8

var current atomic.Pointer[Delivery]

// NewDelivery returns a Delivery of the given helper assemblies (their
// bytes, any order). There is one per process: a second call fails.
func NewDelivery(info *profiler.Info, helpers ...[]byte) (*Delivery, error) {
	d := &Delivery{info: info, off: os.Getenv(DeliveryEnv) == "0"}
	all := append([][]byte{loaderDLL}, helpers...)
	for i, b := range all {
		if len(b) == 0 {
			return nil, fmt.Errorf("instr: helper assembly %d is empty", i)
		}
		d.blobs = append(d.blobs, C.CBytes(b))
		d.sizes = append(d.sizes, len(b))
	}
	if !current.CompareAndSwap(nil, d) {
		return nil, errors.New("instr: a Delivery already exists in this process")
	}
	if d.off {
		d.err = ErrDeliveryOff
	}
	return d, nil
}

// Loaded reports whether the helper assemblies are loaded and resolvable:
// from then on, methods may reference them.
func (d *Delivery) Loaded() bool { return d.loaded.Load() }

// OnLoaded registers f to run, on its own goroutine, once the helpers are
// loaded (at once if they already are). The app goes on meanwhile: a
// short-lived app can reach the profiler's Shutdown before f has run, so a
// profiler whose Shutdown depends on f's work waits for it there.
func (d *Delivery) OnLoaded(f func()) {
	d.mu.Lock()
	if !d.loaded.Load() {
		d.onLoaded = append(d.onLoaded, f)
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	go f()
}

// Err says why the helpers are not loaded (turned off, the loader could
// not be defined, or it failed in the application, with the managed
// exception), nil when they are or nothing went wrong yet.
func (d *Delivery) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// Host returns the name of the method whose entry calls the loader
// (TYPE::METHOD, the type spelled as in a target), "" before one was
// chosen. Its call that runs the loader started before the helpers were
// loaded: a wrap of that method takes effect at its next call (through
// ReJIT, see Config.Ready).
func (d *Delivery) Host() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.host
}

// HostMethod returns the module and MethodDef of the loader's host (zeros
// before one was chosen).
func (d *Delivery) HostMethod() (profiler.ModuleID, metadata.Token) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hostMod, d.hostTok
}

// hostName turns ilrw's "Ns.Outer/Inner`1::Method" into the target
// spelling "Ns.Outer+Inner`1::Method".
func hostName(il string) string {
	i := strings.LastIndex(il, "::")
	if i < 0 {
		return il
	}
	return target.TypeFromIL(il[:i]) + il[i:]
}

func (d *Delivery) setErr(err error) {
	d.mu.Lock()
	d.err = err
	d.mu.Unlock()
}

func (d *Delivery) markLoaded() {
	d.mu.Lock()
	if d.loaded.Swap(true) {
		d.mu.Unlock()
		return
	}
	fs := d.onLoaded
	d.onLoaded = nil
	d.err = nil
	d.mu.Unlock()
	for _, f := range fs {
		go f()
	}
}

// frameworkAssembly reports whether an assembly belongs to the runtime's
// framework: the loader is never injected there. System.Private.CoreLib
// runs the runtime's own start-up (loading an assembly from there would
// recurse into the code being started), and the framework's other
// assemblies are shared by every app and usually precompiled.
func frameworkAssembly(name string) bool {
	switch name {
	case "System.Private.CoreLib", "mscorlib", "netstandard", "System", "Microsoft.VisualBasic", "WindowsBase":
		return true
	}
	return strings.HasPrefix(name, "System.") || strings.HasPrefix(name, "Microsoft.")
}

// Prepare is a RewriteFunc (plug it into Config.Prepare, or call it first
// from your own) that injects the loader into the first suitable method
// compiled for the first time: a method of an assembly that is not part of
// the framework (the application's own Main, in practice, or the first
// method of a library it calls first), in a module on disk (not dynamic,
// not resources only), and not a static constructor (which the runtime may
// run in the middle of another type's loading). It returns true for that
// one method and false for every other.
//
// The host method is compiled before its loader call runs: it must not
// itself reference the helpers (see Loaded). Methods compiled after the
// loader ran may.
func (d *Delivery) Prepare(m *ilrw.Method) (bool, error) {
	if d.off || m.ReJIT || d.loaded.Load() {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.injected || d.tries >= maxHostTries {
		return false, nil
	}
	if !d.suitable(m) {
		return false, nil
	}
	d.tries++
	if err := d.inject(m); err != nil {
		d.err = fmt.Errorf("instr: injecting the helper loader into %s: %w", m.Name(), err)
		if d.tries >= maxHostTries {
			d.settled.Store(true)
		}
		return false, d.err
	}
	d.settled.Store(true)
	d.injected, d.host, d.hostMod, d.hostTok = true, hostName(m.Name()), m.ModuleID, m.Token
	d.err = errors.New("instr: helper loader injected into " + d.host + " but not run yet")
	return true, nil
}

func (d *Delivery) suitable(m *ilrw.Method) bool {
	mi, err := d.info.GetModuleInfo2(m.ModuleID)
	if err != nil || mi.ModuleFlags&(profiler.ModuleDynamic|profiler.ModuleResource) != 0 {
		return false
	}
	ai, err := d.info.GetAssemblyInfo(mi.AssemblyID)
	if err != nil || ai.Name == "" || frameworkAssembly(ai.Name) || ai.Name == "Clrprof.Instr.Loader" {
		return false
	}
	// Never the loader itself: a Run whose entry calls Run recurses
	// without end (after an attach, Run is compiled while Prepare still
	// looks for a host, the ReJIT host not having run it yet).
	name := m.Name()
	return !strings.HasSuffix(name, "::.cctor") && !strings.HasPrefix(name, loaderTypeName+"::")
}

//export clrprof_instr_loader
func clrprof_instr_loader(op, i C.int32_t, data *unsafe.Pointer) (r C.int32_t) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	d := current.Load()
	if d == nil || d.off {
		return -1
	}
	switch op {
	case opCount:
		if d.running.Swap(true) {
			return 0 // another host's loader ran first
		}
		return C.int32_t(len(d.blobs))
	case opBlob:
		if i < 0 || int(i) >= len(d.blobs) || data == nil {
			return -1
		}
		*data = d.blobs[i]
		return C.int32_t(d.sizes[i])
	case opSymbol:
		if data == nil {
			return -1
		}
		*data = symbolLookup()
		return 0
	case opLoaded:
		d.markLoaded()
		return 0
	}
	return -1
}

//export clrprof_instr_fail
func clrprof_instr_fail(msg *C.char) {
	defer func() { _ = recover() }()
	if d := current.Load(); d != nil {
		d.setErr(fmt.Errorf("instr: the helper loader failed in the application: %s", C.GoString(msg)))
	}
}

//export clrprof_instr_failed
func clrprof_instr_failed(id C.int32_t, typ *C.char) {
	defer func() { _ = recover() }()
	d := current.Load()
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failures == nil {
		d.failures = map[int32]*IntegrationError{}
	}
	f := d.failures[int32(id)]
	if f == nil {
		f = &IntegrationError{ID: int32(id), Type: C.GoString(typ)}
		d.failures[int32(id)] = f
	}
	f.Count++
}

// The operations of clrprof_instr_loader, the loader's one P/Invoke shape:
// int32 (int32 op, int32 index, ref native int data).
const (
	opCount  = 0 // how many assemblies
	opBlob   = 1 // assembly index: its length, data = its bytes
	opSymbol = 2 // data = the address of the symbol lookup
	opLoaded = 3 // the loader started: the helpers are resolvable
)

// loaderAssembly names the delivered loader assembly (loader/Loader.cs).
var loaderAssembly = metadata.AssemblyName{Name: "Clrprof.Instr.Loader", Version: metadata.Version{Major: 1}}

// ErrorSink is the Config.Errors that counts what integrations throw into
// IntegrationErrors (Clrprof.Instr.Loader.Failed); nil when delivery is
// off, since the wrap could not resolve it then.
func (d *Delivery) ErrorSink() *ErrorSink {
	if d.off {
		return nil
	}
	return &ErrorSink{Assembly: loaderAssembly, Type: "Clrprof.Instr.Loader", Method: "Failed"}
}

// Configure sets what cfg needs for the helpers this Delivery brings:
// Prepare (the loader injection, run before any Prepare already set),
// Preparing, Ready, Errors when unset, and ReJIT (targets compiled before the helpers
// were loaded, the loader's host among them, are instrumented through
// ReJIT). Call (*Instrumenter).HelperReady from OnLoaded once the
// Instrumenter exists.
func (d *Delivery) Configure(cfg *Config) {
	prev := cfg.Prepare
	if prev != nil {
		cfg.Prepare = func(m *ilrw.Method) (bool, error) {
			c1, err := d.Prepare(m)
			if err != nil {
				return c1, err
			}
			c2, err := prev(m)
			return c1 || c2, err
		}
	} else {
		cfg.Prepare = d.Prepare
	}
	cfg.Ready = d.Loaded
	if cfg.Errors == nil {
		cfg.Errors = d.ErrorSink()
	}
	cfg.ReJIT = true
	cfg.delivery = d
	// Preparing: the Instrumenter offers methods that are not targets to
	// Prepare only while the loader still needs a host (else each would be
	// decoded for nothing), unless a Prepare of the caller's wants them.
	if prev == nil {
		cfg.Preparing = d.preparing
	} else if pp := cfg.Preparing; pp != nil {
		cfg.Preparing = func() bool { return d.preparing() || pp() }
	}
}

// preparing reports whether Prepare still looks for a host.
func (d *Delivery) preparing() bool {
	return !d.off && !d.loaded.Load() && !d.settled.Load()
}
