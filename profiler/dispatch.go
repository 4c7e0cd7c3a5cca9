package profiler

import (
	"fmt"
	"os"
	"runtime/cgo"
	"runtime/debug"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/internal/sigguard"
)

// A dispatcher is the Go side of one profiler object handed to the runtime.
// The C object holds a cgo.Handle to it; the generated methods of objectHost
// (called by internal/comobj's exports) find it with dispatcherOf and call the user's callbacks through the embedded callbacks.
type dispatcher struct {
	callbacks
	reg  *registration
	impl Callback // the value this object dispatches to
	// live is set while the object counts in liveObjects.
	live atomic.Bool
	info *Info
	// done is set once Shutdown has run (or Initialize failed): callbacks
	// that still arrive are answered S_OK without reaching the user.
	done atomic.Bool
	// notificationOnly: LoadAsNotificationOnly answered true
	// (notification.go).
	notificationOnly atomic.Bool
}

func newDispatcher(r *registration) (*dispatcher, error) {
	impl, err := r.implFor()
	if err != nil {
		return nil, err
	}
	d := &dispatcher{reg: r, impl: impl}
	d.bind(impl)
	if d.cb1 != nil {
		d.cb1 = unloadHook{Callback: d.cb1, info: func() *Info { return d.info }}
	}
	if d.cb11 != nil {
		slot := slotOf("LoadAsNotificationOnly")
		d.cb11 = notificationHook{Callback11: d.cb11, d: d, user: slot >= 0 && r.implemented[slot]}
	}
	return d, nil
}

// retire takes the object out of liveObjects and reports whether it was
// the last live one.
func (d *dispatcher) retire() (last bool) {
	if d.live.CompareAndSwap(true, false) {
		return liveObjects.Add(-1) == 0
	}
	return liveObjects.Load() == 0
}

// dispatcherOf returns the live dispatcher behind handle h, or nil if h is
// not (or no longer) a dispatcher handle or the dispatcher is shut down.
func dispatcherOf(h uintptr) *dispatcher {
	d := lookupDispatcher(h)
	if d == nil || d.done.Load() {
		return nil
	}
	return d
}

// lookupDispatcher is dispatcherOf without the shutdown check. A deleted
// handle makes cgo.Handle.Value panic; handle values are never reused, so a
// stale one simply finds nothing.
func lookupDispatcher(h uintptr) (d *dispatcher) {
	if h == 0 {
		return nil
	}
	defer func() {
		if recover() != nil {
			d = nil
		}
	}()
	d, _ = cgo.Handle(h).Value().(*dispatcher)
	return d
}

// recoverTo is deferred by every generated callback method of objectHost: a panic in the
// user's callback is logged with its stack and turned into E_FAIL for the
// runtime instead of reaching C.
//
// runtime.Goexit cannot be stopped this way: Goexit is not a panic, it runs
// the deferred calls (so recover sees nil) and then the Go runtime aborts the
// process with "runtime.Goexit called in a thread that was not created by the
// Go runtime", because the goroutine belongs to a runtime thread that called
// into Go. See the package documentation.
func (d *dispatcher) recoverTo(method string, hr *int32) {
	if r := recover(); r != nil {
		*hr = int32(E_FAIL)
		reportPanic(method, r, debug.Stack())
	}
}

// reportPanic logs a recovered panic. A panic while logging (a broken
// handler, say) is swallowed: nothing may reach C.
func reportPanic(where string, r any, stack []byte) {
	defer func() { _ = recover() }()
	logger().Error("panic in "+where+"; recovered, returning E_FAIL to the runtime",
		"callback", where, "panic", fmt.Sprint(r), "stack", string(stack))
}

// callUser runs a user callback, turning a panic into E_FAIL.
func callUser(method string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			reportPanic(method, r, debug.Stack())
			err = E_FAIL
		}
	}()
	return fn()
}

// initialize handles ICorProfilerCallback::Initialize: it wraps the
// runtime's info object and calls the user's Initialize. An error makes the
// runtime drop the profiler; the dispatcher is then done.
func (d *dispatcher) initialize(unk unsafe.Pointer) error {
	return d.start("Initialize", unk, func(info *Info) error { return d.cb1.Initialize(info) })
}

// initializeForAttach handles ICorProfilerCallback3::InitializeForAttach.
// A profiler that does not implement InitializeForAttach refuses to attach
// (CORPROF_E_PROFILER_NOT_ATTACHABLE) rather than run uninitialised.
func (d *dispatcher) initializeForAttach(unk unsafe.Pointer, clientData []byte) error {
	slot := slotOf("InitializeForAttach")
	if d.cb3 == nil || slot < 0 || !d.reg.implemented[slot] {
		d.done.Store(true)
		logger().Warn("a runtime asked to attach this profiler, which does not implement InitializeForAttach; refusing")
		return CORPROF_E_PROFILER_NOT_ATTACHABLE
	}
	return d.start("InitializeForAttach", unk, func(info *Info) error { return d.cb3.InitializeForAttach(info, clientData) })
}

func (d *dispatcher) start(method string, unk unsafe.Pointer, call func(*Info) error) error {
	if err := environmentError(); err != nil {
		d.done.Store(true)
		logger().Error(method+": declining to profile this process; the application runs without the profiler", "err", err)
		return E_FAIL
	}
	info, err := newInfo(unk)
	if err != nil {
		d.done.Store(true)
		logger().Error(method+": the runtime offers no ICorProfilerInfo; profiler disabled", "err", err)
		return err
	}
	d.info = info
	if d.notificationOnly.Load() {
		info.state.notif.Store(true)
	}
	logger().Info(method, "clsid", guidString(d.reg.clsid), "type", fmt.Sprintf("%T", d.impl), "infoVersion", info.Version())
	for _, v := range []string{"CLRPROF_SIGNAL_GUARD", "CLRPROF_SIGNAL_AUDIT", "CLRPROF_SEGV_PRIVATE_STACK", "CLRPROF_BINDM_HOOK"} {
		if diagnostics && os.Getenv(v) == "0" {
			logger().Warn(v + "=0: a signal-safety measure is off (a diagnostic setting; the host may crash under GC suspension)")
		}
	}
	if sigguard.BindmMissing() {
		logger().Warn("this build's Go runtime has no _cgo_bindm hook (Go 1.21 to 1.26 have it): a thread's first callback runs Go with the runtime's activation signal (SIGRTMIN) unblocked, which can corrupt memory under GC suspension; see internal/sigguard/bindm.go")
	}
	d.live.Store(true)
	liveObjects.Add(1)
	if err := callUser(method, func() error { return call(info) }); err != nil {
		d.done.Store(true)
		d.retire()
		logger().Warn(method+" returned an error; the runtime will not use this profiler", "err", err)
		return err
	}
	return nil
}

// shutdown handles ICorProfilerCallback::Shutdown: the user's Shutdown runs,
// then (even if it panicked) the dispatcher is done and every callback slot
// is answered in C from now on.
func (d *dispatcher) shutdown() error {
	defer d.stop()
	err := callUser("Shutdown", d.cb1.Shutdown)
	d.quiesce()
	return err
}

// quiesce clears every event the runtime lets a profiler turn off, once
// the user's Shutdown has returned: the runtime tears its profiler
// interface down right after Shutdown while other threads may still be
// raising callbacks, and .NET Core 2.0 then calls through the callback
// pointer it has just cleared (a NULL dereference in
// EEToProfInterfaceImpl::ExceptionSearchCatcherFound and friends, seen in
// TestShutdownRace's cores; .NET Core 2.1 too, more rarely). With the
// events off, the runtime's threads check the mask and stop calling. A
// thread the scheduler stops between its check and its call for longer than
// quiesceDrain can still hit the runtime's bug; the SDK cannot close that.
func (d *dispatcher) quiesce() {
	if d.info == nil {
		return
	}
	if partiesQuiesce(d.info) {
		// Several parties share the runtime's mask (a chained profiler,
		// Compose): each party's mutable events are cleared.
		if d.info.Version() < quiesceDrainBelow {
			d.quiesceWait()
		}
		return
	}
	m, err := d.info.GetEventMask()
	if err != nil || m&^MonitorImmutable == 0 {
		return
	}
	if err := d.info.SetEventMask(m & MonitorImmutable); err != nil {
		logger().Debug("shutdown: could not clear the event mask", "err", err)
		return
	}
	// A thread that checked the mask just before it changed is about to
	// call; let it, while the interface is still there. Only the runtimes
	// with the race pay for the wait (every process exit would otherwise be
	// quiesceDrain longer: seen as +20 ms of wall time on every runtime in
	// the benchmarks' start-up rows), and only while another thread could
	// be in the window (quiesceWait).
	if d.info.Version() < quiesceDrainBelow {
		d.quiesceWait()
	}
}

func (d *dispatcher) quiesceWait() {
	waited, busy := quiesceWait()
	logger().Debug("shutdown: waited for the runtime's threads to leave its callback window", "waited", waited, "max", quiesceDrain, "busy", busy)
}

// quiesceDrain is how long Shutdown waits after turning the events off, on
// runtimes whose ICorProfilerInfo version is below quiesceDrainBelow: the
// .NET Core 2.x ones (2.0 has ICorProfilerInfo8, 2.1 ICorProfilerInfo9;
// .NET Core 3.0 brought ICorProfilerInfo10, and the race was never seen on
// 3.1 or .NET 8).
const (
	quiesceDrain      = 20 * time.Millisecond
	quiesceDrainBelow = 10
)

// detachSucceeded handles ICorProfilerCallback3::ProfilerDetachSucceeded:
// the user's callback runs if implemented, then the dispatcher is done and
// releases the runtime's info interfaces, which it must not touch any more.
// The user's Info answers every later call with an error. Unlike Shutdown,
// the callback table stays as it is: the profiler may be attached again,
// and the new object must reach Go.
func (d *dispatcher) detachSucceeded() error {
	defer func() {
		d.done.Store(true)
		d.retire()
		if d.info != nil {
			dropImports(d.info)
			dropCanon(d.info)
			d.info.release()
		}
	}()
	slot := slotOf("ProfilerDetachSucceeded")
	if d.cb3 == nil || slot < 0 || !d.reg.implemented[slot] {
		return nil
	}
	return callUser("ProfilerDetachSucceeded", d.cb3.ProfilerDetachSucceeded)
}

func (d *dispatcher) stop() {
	d.done.Store(true)
	dropImports(d.info)
	dropCanon(d.info)
	if !d.retire() {
		// Other profiler objects of this library (notification
		// profilers, RegisterFactory) still receive callbacks.
		logger().Info("shut down one profiler object; others are live", "live", liveObjects.Load())
		return
	}
	for slot := range callbackMethods {
		setImpl(slot, false)
	}
	st := sigguard.SegvCounts()
	attrs := []any{"sigsegvOnPrivateStack", st.Private, "sigsegvReturned", st.Returned,
		"sigsegvOnAltStack", st.Alt, "sigsegvReasserted", st.Reasserts, "activationReblocked", sigguard.BindmReblocks()}
	if diagnostics {
		n := sigguard.GuardLapses()
		attrs = append(attrs, "guardLapses", n)
		if n > 0 {
			// Whatever the log level: the test harness fails a run that
			// prints this (internal/harness, Result.MustSucceed).
			fmt.Fprintf(os.Stderr, "clrprof-testhooks: guard lapses=%d (guarded calls into Go that ended with SIGRTMIN unblocked)\n", n)
		}
	}
	logger().Info("shut down", attrs...)
}
