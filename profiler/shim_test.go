//go:build clrprof_testhooks

package profiler

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
)

// counting is a profiler whose JIT and module callbacks count calls and
// behave as the test says.
type counting struct {
	Base
	inits, jits, modules, shutdowns atomic.Int32
	infoVersion                     atomic.Int32
	jitBehaviour                    func() error
	initErr                         error
	blockedInJIT                    atomic.Int32
}

func (c *counting) Initialize(info *Info) error {
	c.inits.Add(1)
	c.infoVersion.Store(int32(info.Version()))
	return c.initErr
}

func (c *counting) Shutdown() error { c.shutdowns.Add(1); return nil }

func (c *counting) JITCompilationStarted(FunctionID, bool) error {
	c.jits.Add(1)
	c.blockedInJIT.Store(int32(sigBlocked(sigRTMin())))
	if c.jitBehaviour != nil {
		return c.jitBehaviour()
	}
	return nil
}

func (c *counting) ModuleLoadFinished(ModuleID, HRESULT) error { c.modules.Add(1); return nil }

// load registers impl and loads it the way the runtime does: class factory,
// CreateInstance for ICorProfilerCallback11, Initialize with a fake info
// object implementing ICorProfilerInfo..ICorProfilerInfo<versions>.
func load(t testing.TB, impl Callback, versions int) (obj comObject, hr HRESULT) {
	t.Helper()
	resetRegistration(t)
	if err := Register(testCLSID, impl); err != nil {
		t.Fatal(err)
	}
	obj, hr = testCreate(uuid.MustParse(testCLSID), 10, false)
	if hr != S_OK || obj == nil {
		t.Fatalf("CreateInstance: %v", hr)
	}
	info := testFakeInfo(versions)
	t.Cleanup(func() { testFree(info) })
	return obj, testInitialize(obj, info)
}

func TestLifecycle(t *testing.T) {
	logs := captureLog(t)
	p := &counting{}
	obj, hr := load(t, p, 11)
	if hr != S_OK {
		t.Fatalf("Initialize = %v", hr)
	}
	if p.inits.Load() != 1 || p.infoVersion.Load() != 11 {
		t.Fatalf("Initialize calls %d, info version %d; want 1, 11", p.inits.Load(), p.infoVersion.Load())
	}
	if !strings.Contains(logs.String(), "infoVersion=11") {
		t.Errorf("info version not logged:\n%s", logs)
	}
	for i := range 3 {
		if hr := testJITStarted(obj, uintptr(i)); hr != S_OK {
			t.Fatalf("JITCompilationStarted = %v", hr)
		}
	}
	testModuleLoaded(obj, 1)
	if p.jits.Load() != 3 || p.modules.Load() != 1 {
		t.Fatalf("jits %d modules %d, want 3 1", p.jits.Load(), p.modules.Load())
	}
	if hr := testShutdown(obj); hr != S_OK {
		t.Fatalf("Shutdown = %v", hr)
	}
	if p.shutdowns.Load() != 1 {
		t.Fatal("Shutdown not delivered")
	}
	// After Shutdown nothing reaches the user, and C answers by itself.
	if hr := testJITStarted(obj, 9); hr != S_OK || p.jits.Load() != 3 {
		t.Errorf("callback after Shutdown: hr %v, jits %d (want S_OK, 3)", hr, p.jits.Load())
	}
	if getImpl(mustSlot(t, "JITCompilationStarted")) {
		t.Error("clrprof_impl still set after Shutdown")
	}
	if hr := testShutdown(obj); hr != S_OK || p.shutdowns.Load() != 1 {
		t.Errorf("second Shutdown: hr %v, shutdowns %d", hr, p.shutdowns.Load())
	}
	h := testHandle(obj)
	if lookupDispatcher(h) == nil {
		t.Fatal("handle gone before the last Release")
	}
	if n := testRelease(obj); n != 0 {
		t.Fatalf("last Release returned %d", n)
	}
	if lookupDispatcher(h) != nil {
		t.Error("handle still valid after the last Release")
	}
}

func TestCallbackErrorsBecomeHRESULTs(t *testing.T) {
	captureLog(t)
	p := &counting{}
	obj, hr := load(t, p, 3)
	if hr != S_OK {
		t.Fatal(hr)
	}
	defer testRelease(obj)
	cases := []struct {
		ret  error
		want HRESULT
	}{
		{nil, S_OK},
		{E_INVALIDARG, E_INVALIDARG},
		{fmt.Errorf("wrapped: %w", E_NOINTERFACE), E_NOINTERFACE},
		{errors.New("plain"), E_FAIL},
		{S_FALSE, S_FALSE},
	}
	for _, c := range cases {
		p.jitBehaviour = func() error { return c.ret }
		if got := testJITStarted(obj, 1); got != c.want {
			t.Errorf("callback returning %v: runtime saw %v, want %v", c.ret, got, c.want)
		}
	}
}

func TestPanicInCallbackIsRecovered(t *testing.T) {
	logs := captureLog(t)
	p := &counting{jitBehaviour: func() error { panic("kaboom in JIT") }}
	obj, hr := load(t, p, 11)
	if hr != S_OK {
		t.Fatal(hr)
	}
	defer testRelease(obj)
	if got := testJITStarted(obj, 1); got != E_FAIL {
		t.Fatalf("panicking callback returned %v, want E_FAIL", got)
	}
	out := logs.String()
	for _, want := range []string{"panic in JITCompilationStarted", "kaboom in JIT", "goroutine", "shim_test.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	// The profiler keeps working after a panic.
	p.jitBehaviour = nil
	if got := testJITStarted(obj, 2); got != S_OK || p.jits.Load() != 2 {
		t.Errorf("after a panic: hr %v, jits %d", got, p.jits.Load())
	}
}

type panickyInit struct{ Base }

func (panickyInit) Initialize(*Info) error { panic("init exploded") }

func TestPanicInInitialize(t *testing.T) {
	logs := captureLog(t)
	obj, hr := load(t, panickyInit{}, 11)
	defer testRelease(obj)
	if hr != E_FAIL {
		t.Fatalf("Initialize = %v, want E_FAIL", hr)
	}
	if !strings.Contains(logs.String(), "init exploded") {
		t.Errorf("panic not logged:\n%s", logs)
	}
	if d := lookupDispatcher(testHandle(obj)); d == nil || !d.done.Load() {
		t.Error("dispatcher not marked done after a failed Initialize")
	}
}

func TestInitializeError(t *testing.T) {
	captureLog(t)
	p := &counting{initErr: fmt.Errorf("no thanks: %w", E_NOTIMPL)}
	obj, hr := load(t, p, 11)
	defer testRelease(obj)
	if hr != E_NOTIMPL {
		t.Fatalf("Initialize = %v, want E_NOTIMPL", hr)
	}
	if testJITStarted(obj, 1); p.jits.Load() != 0 {
		t.Error("callback reached the user after a failed Initialize")
	}
}

func TestInitializeWithoutInfo(t *testing.T) {
	logs := captureLog(t)
	p := &counting{}
	obj, hr := load(t, p, 0) // the fake answers no ICorProfilerInfoN
	defer testRelease(obj)
	if hr.Succeeded() {
		t.Fatalf("Initialize = %v, want a failure", hr)
	}
	if p.inits.Load() != 0 {
		t.Error("user's Initialize called without an Info")
	}
	if !strings.Contains(logs.String(), "ICorProfilerInfo") {
		t.Errorf("not logged:\n%s", logs)
	}
}

type attacher struct {
	Base
	data []byte
}

func (a *attacher) InitializeForAttach(_ *Info, clientData []byte) error {
	a.data = append([]byte(nil), clientData...)
	return nil
}

func TestInitializeForAttach(t *testing.T) {
	captureLog(t)
	info := testFakeInfo(11)
	defer testFree(info)

	a := &attacher{}
	resetRegistration(t)
	if err := Register(testCLSID, a); err != nil {
		t.Fatal(err)
	}
	obj, _ := testCreate(uuid.MustParse(testCLSID), 10, false)
	if hr := testInitializeForAttach(obj, info, []byte("hello")); hr != S_OK {
		t.Fatalf("InitializeForAttach = %v", hr)
	}
	if string(a.data) != "hello" {
		t.Errorf("client data %q", a.data)
	}
	testRelease(obj)

	// A profiler without InitializeForAttach refuses to attach.
	resetRegistration(t)
	if err := Register(testCLSID, &counting{}); err != nil {
		t.Fatal(err)
	}
	obj, _ = testCreate(uuid.MustParse(testCLSID), 10, false)
	defer testRelease(obj)
	if hr := testInitializeForAttach(obj, info, nil); hr != CORPROF_E_PROFILER_NOT_ATTACHABLE {
		t.Fatalf("InitializeForAttach without an implementation = %v", hr)
	}
}

// nilBase gets every callback but Initialize and Shutdown from a nil *Base:
// if one of them reached Go it would panic (nil dereference), and the
// runtime would see E_FAIL instead of the S_OK the C shim answers.
type nilBase struct{ *Base }

func (nilBase) Initialize(*Info) error { return nil }
func (nilBase) Shutdown() error        { return nil }

func TestUnimplementedCallbackStaysInC(t *testing.T) {
	logs := captureLog(t)
	obj, hr := load(t, nilBase{}, 11)
	if hr != S_OK {
		t.Fatal(hr)
	}
	defer testRelease(obj)
	jit := mustSlot(t, "JITCompilationStarted")
	if getImpl(jit) {
		t.Fatal("JITCompilationStarted marked as calling Go")
	}
	if hr := testJITStarted(obj, 1); hr != S_OK {
		t.Errorf("unimplemented callback = %v, want S_OK from C", hr)
	}
	// The same call forced through Go fails, so the check above can fail.
	setImpl(jit, true)
	if hr := testJITStarted(obj, 1); hr != E_FAIL {
		t.Errorf("forced through Go = %v, want E_FAIL", hr)
	}
	if !strings.Contains(logs.String(), "nil pointer dereference") {
		t.Errorf("forced call did not panic in Go:\n%s", logs)
	}
}

func TestActivationSignalBlockedWhileInGo(t *testing.T) {
	captureLog(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p := &counting{}
	obj, hr := load(t, p, 11)
	if hr != S_OK {
		t.Fatal(hr)
	}
	defer testRelease(obj)
	rt := sigRTMin()
	if sigBlocked(rt) != 0 {
		t.Fatalf("SIGRTMIN (%d) blocked before the callback", rt)
	}
	testJITStarted(obj, 1)
	if p.blockedInJIT.Load() != 1 {
		t.Errorf("SIGRTMIN not blocked inside the Go callback (sigismember = %d)", p.blockedInJIT.Load())
	}
	if sigBlocked(rt) != 0 {
		t.Error("SIGRTMIN still blocked after the callback returned")
	}
}

func TestQueryInterface(t *testing.T) {
	captureLog(t)
	obj, hr := load(t, &counting{}, 11)
	if hr != S_OK {
		t.Fatal(hr)
	}
	defer testRelease(obj)
	n := 0
	for i := 0; ; i++ {
		iid, ok := testCallbackIID(i)
		if !ok {
			break
		}
		n++
		got, hr := testQI(obj, iid)
		if hr != S_OK || got != obj {
			t.Errorf("QI(ICorProfilerCallback%d) = %v, %p", i+1, hr, got)
			continue
		}
		testRelease(got)
	}
	if n != 11 {
		t.Errorf("%d callback IIDs, want 11", n)
	}
	unk := uuid.MustParse("00000000-0000-0000-C000-000000000046")
	if got, hr := testQI(obj, unk); hr != S_OK || got != obj {
		t.Errorf("QI(IUnknown) = %v", hr)
	} else {
		testRelease(got)
	}
	if got, hr := testQI(obj, uuid.MustParse("11111111-2222-3333-4444-555555555555")); hr != E_NOINTERFACE || got != nil {
		t.Errorf("QI(unknown IID) = %v, %p", hr, got)
	}
	if n := testAddRef(obj); n != 2 {
		t.Errorf("AddRef = %d, want 2", n)
	}
	if n := testRelease(obj); n != 1 {
		t.Errorf("Release = %d, want 1", n)
	}
}

func TestClassFactory(t *testing.T) {
	logs := captureLog(t)
	resetRegistration(t)
	clsid := uuid.MustParse(testCLSID)

	if _, hr := testCreate(clsid, 10, false); hr != CLASS_E_CLASSNOTAVAILABLE {
		t.Errorf("DllGetClassObject with nothing registered = %v", hr)
	}
	if !strings.Contains(logs.String(), "no profiler registered") {
		t.Errorf("missing registration not logged:\n%s", logs)
	}
	if err := Register(testCLSID, onlyBase{}); err != nil {
		t.Fatal(err)
	}
	other := uuid.MustParse("0BADC0DE-0000-4000-8000-000000000001")
	if _, hr := testCreate(other, 10, false); hr != CLASS_E_CLASSNOTAVAILABLE {
		t.Errorf("DllGetClassObject for another CLSID = %v", hr)
	}
	if !strings.Contains(logs.String(), "{0BADC0DE-0000-4000-8000-000000000001}") || !strings.Contains(logs.String(), "CORECLR_PROFILER") {
		t.Errorf("CLSID mismatch not explained:\n%s", logs)
	}
	if _, hr := testCreate(clsid, 10, true); hr != CLASS_E_NOAGGREGATION {
		t.Errorf("CreateInstance with an outer object = %v", hr)
	}
	// CreateInstance honours riid: IUnknown works, an unknown IID does not.
	obj, hr := testCreate(clsid, -1, false)
	if hr != S_OK {
		t.Fatalf("CreateInstance(IUnknown) = %v", hr)
	}
	testRelease(obj)
}

func TestDispatcherOfStaleHandle(t *testing.T) {
	if dispatcherOf(0) != nil || dispatcherOf(123456789) != nil {
		t.Fatal("dispatcherOf found a dispatcher behind a bogus handle")
	}
}

func TestSignalAudit(t *testing.T) {
	// Go's own test binary has its handlers on every signal. Swap a C
	// handler with SA_ONSTACK|SA_RESTART onto a real-time signal nobody
	// raises, audit it as the activation signal, and restore it.
	sig := sigRTMin() + 7
	const saRestart = 0x10000000
	if rc := testSwapHandler(sig, saOnStack()|saRestart); rc != 0 {
		t.Fatalf("sigaction: %d", rc)
	}
	defer testRestoreHandler(sig)
	other := sigRTMin() + 8
	otherBefore := sigFlags(other)

	recs := testAudit(sig)
	var rec *signalRecord
	for i := range recs {
		if recs[i].Sig == sig {
			rec = &recs[i]
		}
		if recs[i].Sig == other && recs[i].Action != 0 {
			t.Errorf("signal %d (not the activation signal) was changed: %+v", other, recs[i])
		}
	}
	if rec == nil {
		t.Fatalf("audit did not record signal %d: %+v", sig, recs)
	}
	if rec.Action != 1 || rec.Flags&saOnStack() == 0 || rec.NewFlags&saOnStack() != 0 {
		t.Fatalf("audit record %+v: want SA_ONSTACK cleared", *rec)
	}
	now := sigFlags(sig)
	if now&saOnStack() != 0 {
		t.Errorf("SA_ONSTACK still set: %s", saFlagsString(now))
	}
	if now&saRestart == 0 || now&0x4 == 0 {
		t.Errorf("other flags lost: %s", saFlagsString(now))
	}
	if sigFlags(other) != otherBefore {
		t.Errorf("flags of signal %d changed from %s to %s", other, saFlagsString(otherBefore), saFlagsString(sigFlags(other)))
	}

	// Logged at INFO as a restoration.
	logs := captureLog(t)
	logSignalAudit(recs, sig)
	if !strings.Contains(logs.String(), "gave a handler its flags back") {
		t.Errorf("restoration not logged:\n%s", logs)
	}

	// A second audit finds nothing to do.
	for _, r := range testAudit(sig) {
		if r.Sig == sig && r.Action != 0 {
			t.Errorf("second audit acted again: %+v", r)
		}
	}
}

func TestSaFlagsString(t *testing.T) {
	if got := saFlagsString(0x08000000 | 0x10000000 | 0x4); got != "SA_SIGINFO|SA_ONSTACK|SA_RESTART" {
		t.Errorf("got %s", got)
	}
	if got := saFlagsString(0); got != "0x0" {
		t.Errorf("got %s", got)
	}
	if got := signalName(36, 34); got != "SIGRTMIN+2(36)" {
		t.Errorf("got %s", got)
	}
}

type jitCounter struct {
	Base
	n atomic.Int64
}

func (c *jitCounter) JITCompilationStarted(FunctionID, bool) error { c.n.Add(1); return nil }

// BenchmarkCallbackIntoGo is the cost of one callback the Go profiler
// implements (JITCompilationStarted, counted): a cgo call from the test into
// the object's vtable, the generated C thunk, the signal guard, the Go
// export and the dispatcher, and back.
func BenchmarkCallbackIntoGo(b *testing.B) {
	p := &jitCounter{}
	obj, hr := load(b, p, 11)
	if hr != S_OK {
		b.Fatal(hr)
	}
	defer testRelease(obj)
	for b.Loop() {
		testJITStarted(obj, 1)
	}
	if p.n.Load() == 0 {
		b.Fatal("no callback reached Go")
	}
}
