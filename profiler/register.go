package profiler

import (
	"context"
	"errors"
	"fmt"
	"github.com/clrprof/clrprof/internal/guid"
	"log/slog"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
)

// An Option configures Register.
type Option func(*options)

type options struct {
	logger      *slog.Logger
	followGoEnv bool
	sharedNames bool
	// chainPath, chainCLSID: WithChain.
	chainPath, chainCLSID string
}

// WithSharedGenericNames makes the names of shared generic class code
// (Info.FunctionName and friends) the canonical instantiation the code
// really is (Pair<int,System.__Canon>.Show) instead of the class's formal
// parameters (Pair<A,B>.Show) on runtimes before .NET 10 (from 10 on the
// runtime names the canonical class itself, and this option changes no
// name). Those runtimes name no class for such code, so
// the SDK records every canonical instantiation the runtime loads: while the
// event mask has MonitorClassLoads, every ClassLoadFinished and
// ClassUnloadStarted then reaches Go and asks the runtime about the class
// (GetClassIDInfo2), whether or not the profiler implements them. That
// costs a transition into Go per class load (in the JIT-heavy start-up
// benchmark, about a fifth more start-up time than a profiler that leaves
// those callbacks to the C shim), which is why it is not the default.
func WithSharedGenericNames() Option {
	return func(o *options) { o.sharedNames = true }
}

// sharedNames reports whether Register was given WithSharedGenericNames.
func sharedNames() bool {
	r := registered.Load()
	return r != nil && r.sharedNames
}

// WithLogger makes the package log through l instead of the default logger
// (stderr, or CLRPROF_LOG_FILE, at CLRPROF_LOG_LEVEL). A nil l is ignored.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// registration is what Register stored: one per process.
type registration struct {
	clsid uuid.UUID
	impl  Callback
	// newImpl, set by RegisterFactory, makes the value of each profiler
	// object after the first (which gets impl); implType is impl's type,
	// which every value must have.
	newImpl   func() Callback
	implType  reflect.Type
	firstUsed atomic.Bool
	// implemented[slot] reports whether impl really implements the callback
	// at that slot (see implementedSlots).
	implemented []bool
	// sharedNames: WithSharedGenericNames.
	sharedNames bool
	// chainPath, chainCLSID: WithChain.
	chainPath, chainCLSID string
}

var (
	registerMu sync.Mutex
	registered atomic.Pointer[registration]
)

// Callbacks that always reach Go, whatever the user implements: the
// dispatcher has work to do in them.
var alwaysGo = map[string]bool{
	"Initialize":          true,
	"Shutdown":            true,
	"InitializeForAttach": true,
	// The SDK answers it for a profiler that does not (notification.go).
	"LoadAsNotificationOnly": true,
	// The dispatcher releases its Info after a detach.
	"ProfilerDetachSucceeded": true,
	// The dispatcher drops the module's cached metadata reader
	// (importcache.go); the runtime reports it only with MonitorModuleLoads.
	"ModuleUnloadStarted": true,
}

// Callbacks that reach Go with WithSharedGenericNames: the dispatcher
// records the canonical instantiations of generic classes, for the names of
// shared code (canonical.go); the runtime reports them only with
// MonitorClassLoads.
var sharedNamesGo = map[string]bool{
	"ClassLoadFinished":  true,
	"ClassUnloadStarted": true,
}

// Register makes impl the profiler of this shared library, answering to the
// class ID clsid ("xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", with or without
// braces), which is what CORECLR_PROFILER must name. Call it once, from an
// init function of the main package.
//
// Only the callbacks impl really implements reach Go: a method impl gets
// from an embedded Base is answered S_OK by the C shim without a transition
// into Go. Initialize and Shutdown are always delivered.
//
// Register never panics; it returns (and logs) an error for a malformed
// CLSID, a nil impl, or a second call.
func Register(clsid string, impl Callback, opts ...Option) (err error) {
	return register("Register", clsid, impl, nil, opts)
}

func register(who, clsid string, impl Callback, newImpl func() Callback, opts []Option) (err error) {
	var o options
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("clrprof: %s: internal error: %v", who, r)
		}
		if err != nil {
			log := o.logger
			if log == nil {
				log = logger()
			}
			log.Error("Register failed; the runtime will not load this profiler", "err", err)
		}
	}()
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	log := o.logger
	if log == nil {
		log = logger()
	}

	id, err := parseCLSID(clsid)
	if err != nil {
		return err
	}
	if err := checkImpl(who, impl); err != nil {
		return err
	}

	registerMu.Lock()
	defer registerMu.Unlock()
	if prev := registered.Load(); prev != nil {
		return fmt.Errorf("clrprof: Register: a profiler is already registered (CLSID {%s}, %T); Register may be called once", strings.ToUpper(prev.clsid.String()), prev.impl)
	}
	implemented, warnings := implementedSlots(impl)
	if c, ok := impl.(*Composite); ok {
		implemented, warnings = c.implementedSlots(), nil
	}
	if o.logger != nil {
		userLogger.Store(o.logger)
	}
	r := &registration{clsid: id, impl: impl, implemented: implemented, newImpl: newImpl, implType: reflect.TypeOf(impl), sharedNames: o.sharedNames, chainPath: o.chainPath, chainCLSID: o.chainCLSID}
	registered.Store(r)
	setIdentity(r)
	applyImplemented(implemented, o.sharedNames)
	if !o.followGoEnv {
		resetGoSettings(log)
	}

	for _, w := range warnings {
		log.Warn(w)
	}
	if log.Enabled(context.Background(), slog.LevelDebug) {
		var names []string
		for slot, on := range implemented {
			if on {
				names = append(names, callbackMethods[slot].Name)
			}
		}
		log.Debug("registered", "clsid", "{"+strings.ToUpper(id.String())+"}", "type", fmt.Sprintf("%T", impl), "implements", strings.Join(names, ","))
	}
	return nil
}

// checkImpl refuses a nil profiler value.
func checkImpl(who string, impl Callback) error {
	if impl == nil {
		return fmt.Errorf("clrprof: %s: impl is nil", who)
	}
	if v := reflect.ValueOf(impl); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Errorf("clrprof: %s: impl is a nil %v", who, v.Type())
	}
	return nil
}

// applyImplemented tells the C shim which callbacks call into Go.
func applyImplemented(implemented []bool, sharedNames bool) {
	for slot, on := range implemented {
		name := callbackMethods[slot].Name
		setImpl(slot, on || alwaysGo[name] || (sharedNames && sharedNamesGo[name]))
	}
}

// parseCLSID accepts a GUID with or without braces.
func parseCLSID(s string) (uuid.UUID, error) {
	id, err := guid.Parse(s)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("clrprof: Register: invalid CLSID %q (%w)", s, err)
	}
	return id, nil
}

// ParseGUID reads a GUID (a CLSID, an IID) in registry form, with or
// without braces: "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}".
func ParseGUID(s string) (uuid.UUID, error) { return guid.Parse(s) }

// FormatGUID writes a GUID in registry form, upper case in braces, as
// CORECLR_PROFILER expects it.
func FormatGUID(u uuid.UUID) string { return guid.Format(u) }

// implementedSlots decides, for every callback slot, whether impl really
// implements that callback, and returns warnings about methods that look
// like callbacks but cannot be called.
//
// A callback of ICorProfilerCallbackN is implemented when impl satisfies
// CallbackN and the method is not the one promoted from Base: it is declared
// on impl's type itself (value or pointer receiver), or promoted from some
// other embedded type that declares it (even if that type embeds Base too),
// or promoted from an embedded interface (whose dynamic value decides, so we
// must call it).
func implementedSlots(impl Callback) (implemented []bool, warnings []string) {
	var c callbacks
	c.bind(impl)
	t := reflect.TypeOf(impl)
	implemented = make([]bool, len(callbackMethods))
	cv := reflect.ValueOf(&c).Elem()
	for slot, m := range callbackMethods {
		field := cv.FieldByName("cb" + strconv.Itoa(m.Version))
		if !field.IsValid() {
			continue
		}
		if field.IsNil() {
			if w := signatureWarning(t, field.Type(), m.Name, m.Version); w != "" {
				warnings = append(warnings, w)
			}
			continue
		}
		if _, ok := methodByName(t, m.Name); !ok {
			continue
		}
		implemented[slot] = declaringType(t, m.Name, 0) != baseType
	}
	return implemented, warnings
}

// signatureWarning explains why a method named like a callback of version
// version is not called: t has it with a signature other than iface's.
func signatureWarning(t, iface reflect.Type, name string, version int) string {
	m, ok := methodByName(t, name)
	if !ok {
		return ""
	}
	want, ok := methodByName(iface, name)
	if !ok || sameSignature(m.Type, want.Type) {
		return ""
	}
	got := m.Type
	in := make([]string, 0, got.NumIn())
	for i := 1; i < got.NumIn(); i++ { // skip the receiver
		in = append(in, got.In(i).String())
	}
	out := make([]string, 0, got.NumOut())
	for i := 0; i < got.NumOut(); i++ {
		out = append(out, got.Out(i).String())
	}
	return fmt.Sprintf("%v.%s has signature func(%s) (%s), want %v: %v does not implement Callback%s, so no callback of ICorProfilerCallback%s or later reaches it",
		t, name, strings.Join(in, ", "), strings.Join(out, ", "), want.Type, t, versionSuffix(version), versionSuffix(version))
}

// sameSignature compares a method type (receiver first) with an interface
// method type (no receiver).
func sameSignature(method, iface reflect.Type) bool {
	if method.NumIn() != iface.NumIn()+1 || method.NumOut() != iface.NumOut() || method.IsVariadic() != iface.IsVariadic() {
		return false
	}
	for i := 0; i < iface.NumIn(); i++ {
		if method.In(i+1) != iface.In(i) {
			return false
		}
	}
	for i := 0; i < iface.NumOut(); i++ {
		if method.Out(i) != iface.Out(i) {
			return false
		}
	}
	return true
}

var baseType = reflect.TypeFor[Base]()

// maxEmbedDepth bounds the walk through embedded fields (a struct can embed
// a pointer to itself).
const maxEmbedDepth = 32

// declaringType returns the type whose method name is the one t's method
// set holds: t itself (or its element type) if declared there, else the
// declaring type reached through embedded fields. An embedded interface type
// is returned as is. nil means it could not be traced.
func declaringType(t reflect.Type, name string, depth int) reflect.Type {
	if depth > maxEmbedDepth {
		return nil
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st == baseType || st.Kind() == reflect.Interface || st.Kind() != reflect.Struct || declaresDirectly(st, name) {
		// Only struct types have promoted methods; Base declares every
		// callback itself.
		return st
	}
	var best reflect.Type
	bestDepth := -1
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		if !f.Anonymous {
			continue
		}
		if d := methodDepth(f.Type, name, depth+1); d >= 0 && (bestDepth < 0 || d < bestDepth) {
			best, bestDepth = f.Type, d
		}
	}
	if best == nil {
		return nil
	}
	return declaringType(best, name, depth+1)
}

// methodDepth returns how many embedding levels below t the method name is
// declared (0: on t itself), or -1 if t does not have it.
func methodDepth(t reflect.Type, name string, depth int) int {
	if depth > maxEmbedDepth {
		return -1
	}
	st := t
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st == baseType {
		// Base declares every callback itself (with a value receiver):
		// known without asking reflect, whose Method builds a func type
		// for each receiver it is asked about and keeps it for good.
		if slotOf(name) >= 0 {
			return 0
		}
		return -1
	}
	if st.Kind() == reflect.Interface {
		if _, ok := methodByName(st, name); ok {
			return 0
		}
		return -1
	}
	_, okv := methodByName(st, name)
	_, okp := methodByName(reflect.PointerTo(st), name)
	if !okv && !okp {
		return -1
	}
	if st.Kind() != reflect.Struct || declaresDirectly(st, name) {
		return 0
	}
	best := -1
	for i := 0; i < st.NumField(); i++ {
		f := st.Field(i)
		if !f.Anonymous {
			continue
		}
		if d := methodDepth(f.Type, name, depth+1); d >= 0 && (best < 0 || d+1 < best) {
			best = d + 1
		}
	}
	return best
}

// declaresDirectly reports whether the non-pointer type t declares method
// name itself, with a value or a pointer receiver. The compiler implements a
// promoted method (and the pointer-receiver form of a value method) with a
// generated wrapper whose position is "<autogenerated>"; a declared method
// has a real source position.
func declaresDirectly(t reflect.Type, name string) bool {
	if m, ok := methodByName(t, name); ok && !isWrapper(m) {
		return true
	}
	if m, ok := methodByName(reflect.PointerTo(t), name); ok && !isWrapper(m) {
		return true
	}
	return false
}

func isWrapper(m reflect.Method) bool {
	f := runtime.FuncForPC(m.Func.Pointer())
	if f == nil {
		return false // cannot tell: count it as declared (the safe answer)
	}
	file, _ := f.FileLine(f.Entry())
	return file == "<autogenerated>"
}

// slotOf returns the slot of the callback method name, or -1.
func slotOf(name string) int {
	for slot, m := range callbackMethods {
		if m.Name == name {
			return slot
		}
	}
	return -1
}

// CheckCallbacks reports, as one error, every method of impl that is named
// like a runtime callback but has another signature, so that the runtime
// never calls it (a callback written against an older clrprof, or with a
// parameter type mistyped: FinalizeableObjectQueued(uint32, ObjectID)
// instead of FinalizeableObjectQueued(FinalizerFlags, ObjectID)). Register
// logs the same findings at load time; call CheckCallbacks from a unit test
// of your profiler package to catch them at build time instead, or assert
// the interface at compile time:
//
//	var _ profiler.Callback11 = (*prof)(nil)
//
// It returns nil when every such method has the runtime's signature.
func CheckCallbacks(impl Callback) error {
	if impl == nil {
		return errors.New("clrprof: CheckCallbacks: nil callback")
	}
	_, warnings := implementedSlots(impl)
	if len(warnings) == 0 {
		return nil
	}
	return errors.New("clrprof: " + strings.Join(warnings, "; "))
}
