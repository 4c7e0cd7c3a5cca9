package profiler

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
)

const testCLSID = "5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73"

// Profiler types for the implemented-method detection. JIT and Module name
// the two callbacks the cases are about.

type onlyBase struct{ Base }

type valueRecv struct{ Base }

func (valueRecv) JITCompilationStarted(FunctionID, bool) error { return nil }

type ptrRecv struct{ Base }

func (*ptrRecv) ModuleLoadFinished(ModuleID, HRESULT) error { return nil }

// mixin is another user type that itself embeds Base and declares JIT.
type mixin struct{ Base }

func (mixin) JITCompilationStarted(FunctionID, bool) error { return nil }

type usesMixin struct{ mixin }

type usesMixinPtr struct{ *mixin }

// ownOverMixin declares JIT itself, shadowing mixin's.
type ownOverMixin struct{ mixin }

func (ownOverMixin) JITCompilationStarted(FunctionID, bool) error { return nil }

// baseShadowsMixin embeds Base at depth 1 and mixin's JIT sits at depth 2:
// by Go's rules Base's method is the one promoted, so JIT is not
// implemented.
type wrapsMixin struct{ mixin }
type baseShadowsMixin struct {
	Base
	wrapsMixin
}

type ptrBase struct{ *Base }

// viaInterface gets its methods from an embedded interface: its dynamic
// value decides what runs, so every Callback method counts as implemented.
type viaInterface struct{ Callback }

type generic[T any] struct {
	Base
	_ T
}

func (generic[T]) JITCompilationStarted(FunctionID, bool) error { return nil }

// wrongSig shadows Base's ThreadNameChanged with a different signature, so
// it implements Callback but no later version.
type wrongSig struct{ Base }

func (wrongSig) ThreadNameChanged(ThreadID) error             { return nil }
func (wrongSig) JITCompilationStarted(FunctionID, bool) error { return nil }
func (wrongSig) ProfilerAttachComplete() error                { return nil }
func (*wrongSig) ModuleLoadFinished(ModuleID, HRESULT) error  { return nil }
func (wrongSig) GarbageCollectionFinished() error             { return nil }

func TestImplementedDetection(t *testing.T) {
	type want struct{ jit, module bool }
	cases := []struct {
		name string
		impl Callback
		want want
	}{
		{"only Base", onlyBase{}, want{false, false}},
		{"pointer to only Base", &onlyBase{}, want{false, false}},
		{"own value receiver", valueRecv{}, want{true, false}},
		{"own value receiver, registered as pointer", &valueRecv{}, want{true, false}},
		{"own pointer receiver", &ptrRecv{}, want{false, true}},
		{"promoted from user type embedding Base", usesMixin{}, want{true, false}},
		{"promoted from user type embedded by pointer", usesMixinPtr{&mixin{}}, want{true, false}},
		{"own method shadows user mixin", ownOverMixin{}, want{true, false}},
		{"Base at depth 1 shadows mixin at depth 2", baseShadowsMixin{}, want{false, false}},
		{"embedded *Base", ptrBase{&Base{}}, want{false, false}},
		{"embedded interface", viaInterface{Base{}}, want{true, true}},
		{"generic type", generic[int]{}, want{true, false}},
		{"Base itself", Base{}, want{false, false}},
		{"wrong signature elsewhere", &wrongSig{}, want{true, true}},
	}
	jit, module := mustSlot(t, "JITCompilationStarted"), mustSlot(t, "ModuleLoadFinished")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := implementedSlots(c.impl)
			if got[jit] != c.want.jit || got[module] != c.want.module {
				t.Errorf("%T: JITCompilationStarted implemented=%v (want %v), ModuleLoadFinished implemented=%v (want %v)",
					c.impl, got[jit], c.want.jit, got[module], c.want.module)
			}
			// Nothing else is implemented by any of these types, except the
			// embedded interface (everything in Callback).
			for slot, on := range got {
				if slot == jit || slot == module || !on {
					continue
				}
				if _, isIface := c.impl.(viaInterface); isIface && callbackMethods[slot].Version == 1 {
					continue
				}
				if _, w := c.impl.(*wrongSig); w && callbackMethods[slot].Name == "GarbageCollectionFinished" {
					t.Errorf("GarbageCollectionFinished (Callback2) counted although wrongSig is not a Callback2")
					continue
				}
				t.Errorf("%T: %s unexpectedly counted as implemented", c.impl, callbackMethods[slot].Name)
			}
		})
	}
}

func TestImplementedDetectionWrongSignatureWarns(t *testing.T) {
	got, warnings := implementedSlots(&wrongSig{})
	if got[mustSlot(t, "ProfilerAttachComplete")] {
		t.Error("ProfilerAttachComplete (Callback3) counted although wrongSig is not a Callback3")
	}
	var found bool
	for _, w := range warnings {
		if strings.Contains(w, "ThreadNameChanged") && strings.Contains(w, "Callback2") {
			found = true
		}
		if strings.Contains(w, "GarbageCollectionFinished") || strings.Contains(w, "ProfilerAttachComplete") {
			t.Errorf("warning about a method whose signature is right: %s", w)
		}
	}
	if !found {
		t.Errorf("no warning naming ThreadNameChanged; got %q", warnings)
	}
	if _, w := implementedSlots(usesMixin{}); len(w) != 0 {
		t.Errorf("warnings for a correct type: %q", w)
	}
}

func TestRegisterSetsCFlags(t *testing.T) {
	resetRegistration(t)
	captureLog(t)
	if err := Register("{"+testCLSID+"}", &ptrRecv{}); err != nil {
		t.Fatal(err)
	}
	for slot, m := range callbackMethods {
		want := m.Name == "ModuleLoadFinished" || alwaysGo[m.Name]
		if got := getImpl(slot); got != want {
			t.Errorf("clrprof_impl[%s] = %v, want %v", m.Name, got, want)
		}
	}
}

func TestRegisterErrors(t *testing.T) {
	cases := []struct {
		name  string
		clsid string
		impl  Callback
		want  string
	}{
		{"empty CLSID", "", onlyBase{}, "invalid CLSID"},
		{"garbage CLSID", "not-a-guid", onlyBase{}, "invalid CLSID"},
		{"bad hex", "5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6EZZ", onlyBase{}, "invalid CLSID"},
		{"open brace only", "{" + testCLSID, onlyBase{}, "unbalanced braces"},
		{"no dashes", strings.ReplaceAll(testCLSID, "-", ""), onlyBase{}, "invalid CLSID"},
		{"urn form", "urn:uuid:" + testCLSID, onlyBase{}, "invalid CLSID"},
		{"nil impl", testCLSID, nil, "impl is nil"},
		{"typed nil pointer", testCLSID, (*ptrRecv)(nil), "nil *profiler.ptrRecv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resetRegistration(t)
			logs := captureLog(t)
			err := Register(c.clsid, c.impl)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Register(%q, %T) = %v, want error containing %q", c.clsid, c.impl, err, c.want)
			}
			if !strings.Contains(logs.String(), "Register failed") || !strings.Contains(logs.String(), c.want) {
				t.Errorf("error not logged; log:\n%s", logs)
			}
			if registered.Load() != nil {
				t.Error("a failed Register left a registration")
			}
		})
	}
}

func TestRegisterAcceptsBracesOrNot(t *testing.T) {
	for _, s := range []string{testCLSID, "{" + testCLSID + "}", strings.ToLower(testCLSID), " {" + testCLSID + "} "} {
		resetRegistration(t)
		captureLog(t)
		if err := Register(s, onlyBase{}); err != nil {
			t.Fatalf("Register(%q): %v", s, err)
		}
		if got := guidString(registered.Load().clsid); got != "{"+testCLSID+"}" {
			t.Errorf("Register(%q) stored %s", s, got)
		}
	}
}

func TestRegisterTwice(t *testing.T) {
	resetRegistration(t)
	logs := captureLog(t)
	if err := Register(testCLSID, onlyBase{}); err != nil {
		t.Fatal(err)
	}
	err := Register("11111111-2222-3333-4444-555555555555", &ptrRecv{})
	if err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Fatalf("second Register = %v, want already registered", err)
	}
	if !strings.Contains(logs.String(), "already registered") {
		t.Errorf("second Register not logged:\n%s", logs)
	}
	if _, ok := registered.Load().impl.(onlyBase); !ok {
		t.Error("second Register replaced the first")
	}
}

func TestRegisterWithLogger(t *testing.T) {
	resetRegistration(t)
	prev := userLogger.Load()
	t.Cleanup(func() { userLogger.Store(prev) })
	var b syncBuffer
	l := newTextLogger(&b)
	if err := Register(testCLSID, &wrongSig{}, WithLogger(l)); err != nil {
		t.Fatal(err)
	}
	if logger() != l {
		t.Error("WithLogger did not become the package logger")
	}
	if !strings.Contains(b.String(), "ThreadNameChanged") {
		t.Errorf("signature warning not logged through WithLogger's logger:\n%s", b.String())
	}
	// A failing Register logs through its own WithLogger too.
	var b2 syncBuffer
	if err := Register("bad", onlyBase{}, WithLogger(newTextLogger(&b2))); err == nil {
		t.Fatal("want error")
	}
	if !strings.Contains(b2.String(), "invalid CLSID") {
		t.Errorf("Register error not logged through WithLogger's logger:\n%s", b2.String())
	}
}

func TestRegisterNeverPanics(t *testing.T) {
	resetRegistration(t)
	captureLog(t)
	// A panicking option is the only way in; it must come back as an error.
	err := Register(testCLSID, onlyBase{}, func(*options) { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("Register with a panicking option = %v", err)
	}
	if registered.Load() != nil {
		t.Error("a panicking Register left a registration")
	}
}

// TestCompilerWrapperPositions pins the compiler behaviour Register's
// implemented-callback detection rests on (isWrapper): a method promoted
// from an embedded Base, and the pointer-receiver form of a value method,
// are compiler-generated wrappers whose position runtime.FuncForPC reports
// as "<autogenerated>", while a declared method has its source position. If
// a Go release changes this, this test names the change (and
// TestImplementedDetection fails with it).
func TestCompilerWrapperPositions(t *testing.T) {
	pos := func(m reflect.Method) string {
		f := runtime.FuncForPC(m.Func.Pointer())
		if f == nil {
			t.Fatalf("%s: runtime.FuncForPC found no function", m.Name)
		}
		file, _ := f.FileLine(f.Entry())
		return file
	}
	promoted, _ := reflect.TypeOf(onlyBase{}).MethodByName("JITCompilationStarted")
	if p := pos(promoted); p != "<autogenerated>" || !isWrapper(promoted) {
		t.Errorf("%s: a method promoted from Base is at %q, want \"<autogenerated>\": Register would count every Base method as implemented", runtime.Version(), p)
	}
	ptrForm, _ := reflect.TypeOf(&valueRecv{}).MethodByName("JITCompilationStarted")
	if p := pos(ptrForm); p != "<autogenerated>" || !isWrapper(ptrForm) {
		t.Errorf("%s: the pointer form of a value method is at %q, want \"<autogenerated>\"", runtime.Version(), p)
	}
	declared, _ := reflect.TypeOf(valueRecv{}).MethodByName("JITCompilationStarted")
	if p := pos(declared); !strings.HasSuffix(p, "register_test.go") || isWrapper(declared) {
		t.Errorf("%s: a declared method is at %q, want register_test.go: Register would miss implemented callbacks", runtime.Version(), p)
	}
}

// staleFinalizer has FinalizeableObjectQueued with the signature before
// its flags got their named type: it no longer implements Callback2.
type staleFinalizer struct{ Base }

func (*staleFinalizer) FinalizeableObjectQueued(uint32, ObjectID) error { return nil }

func TestCheckCallbacks(t *testing.T) {
	err := CheckCallbacks(&staleFinalizer{})
	if err == nil || !strings.Contains(err.Error(), "FinalizeableObjectQueued") || !strings.Contains(err.Error(), "FinalizerFlags") {
		t.Errorf("CheckCallbacks(stale FinalizeableObjectQueued) = %v, want an error naming it and the FinalizerFlags signature", err)
	}
	if err := CheckCallbacks(&wrongSig{}); err == nil || !strings.Contains(err.Error(), "ThreadNameChanged") {
		t.Errorf("CheckCallbacks(wrongSig) = %v, want ThreadNameChanged named", err)
	}
	if err := CheckCallbacks(usesMixin{}); err != nil {
		t.Errorf("CheckCallbacks(correct type) = %v", err)
	}
	if err := CheckCallbacks(nil); err == nil {
		t.Error("CheckCallbacks(nil) = nil")
	}
}

// declaringType and methodDepth take Base to declare every callback itself
// without asking reflect (whose answers cost a func type per receiver for
// good); this holds them to it.
func TestBaseDeclaresEveryCallback(t *testing.T) {
	for _, m := range callbackMethods {
		if !declaresDirectly(baseType, m.Name) {
			t.Errorf("Base does not declare %s itself", m.Name)
		}
		if d := methodDepth(baseType, m.Name, 0); d != 0 {
			t.Errorf("methodDepth(Base, %s) = %d, want 0", m.Name, d)
		}
	}
	if d := methodDepth(baseType, "NotACallback", 0); d != -1 {
		t.Errorf("methodDepth(Base, NotACallback) = %d, want -1", d)
	}
}
