package profiler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/clrprof/clrprof/internal/chain"
	"github.com/google/uuid"
)

// The events a notification profiler may ask for
// (COR_PRF_ALLOWABLE_NOTIFICATION_PROFILER and
// COR_PRF_HIGH_ALLOWABLE_NOTIFICATION_PROFILER): the runtime answers
// E_INVALIDARG to a notification profiler's SetEventMask with any other flag.
const (
	NotificationAllowed Monitor = MonitorFunctionUnloads | MonitorClassLoads | MonitorModuleLoads |
		MonitorAssemblyLoads | MonitorAppDomainLoads | MonitorJITCompilation | MonitorExceptions |
		MonitorObjectAllocated | MonitorThreads | MonitorCodeTransitions | MonitorCCW | MonitorSuspends |
		MonitorCacheSearches | DisableInlining | DisableOptimizations | EnableObjectAllocated |
		MonitorCLRExceptions | EnableStackSnapshot | UseProfileImages | DisableAllNGenImages
	NotificationAllowedHigh HighMonitor = HighInMemorySymbolsUpdated | HighDynamicFunctionUnloads |
		HighDisableTieredCompilation | HighBasicGC | HighGCMovedObjects | HighLargeObjectAllocated | HighEventPipe
)

// ErrNotificationOnly matches (errors.Is) the error of an Info method that a
// notification profiler may not call: a *NotificationError.
var ErrNotificationOnly = errors.New("not allowed for a notification profiler")

// NotificationError is the error of an Info method refused because the
// profiler was loaded as a notification profiler (see "Notification
// profilers" in the package documentation). It matches ErrNotificationOnly
// and unwraps to E_INVALIDARG, what the runtime itself would answer (for
// the event mask) without saying why.
type NotificationError struct {
	// Op is the refused method.
	Op string
	// Flags and High are the refused event flags (SetEventMask,
	// SetEventMask2), zero for other methods.
	Flags Monitor
	High  HighMonitor
}

// Error says what was refused (the operation, and the event flags a
// notification profiler may not ask for) and why.
func (e *NotificationError) Error() string {
	what := e.Op
	if e.Flags != 0 || e.High != 0 {
		var fs []string
		if e.Flags != 0 {
			fs = append(fs, e.Flags.String())
		}
		if e.High != 0 {
			fs = append(fs, e.High.String())
		}
		what = fmt.Sprintf("%s(%s)", e.Op, strings.Join(fs, ", "))
	}
	return "clrprof: " + what + ": this profiler was loaded as a notification profiler (LoadAsNotificationOnly), " +
		"which may not rewrite IL, set enter/leave hooks, ReJIT, or ask for events outside NotificationAllowed; " +
		"load it as the main profiler (CORECLR_PROFILER) instead, or chain the other profiler from it (WithChain)"
}

// Is reports whether target is ErrNotificationOnly, so that
// errors.Is(err, ErrNotificationOnly) finds every such refusal.
func (e *NotificationError) Is(target error) bool { return target == ErrNotificationOnly }

// Unwrap gives the HRESULT the runtime itself would have answered,
// E_INVALIDARG.
func (e *NotificationError) Unwrap() error { return E_INVALIDARG }

// NotificationOnly reports whether the profiler object this Info belongs to
// was loaded as a notification profiler.
func (x *Info) NotificationOnly() bool {
	if x == nil {
		return false
	}
	return x.state.notif.Load()
}

// checkNotificationMask refuses event flags a notification profiler may not
// ask for.
func (x *Info) checkNotificationMask(op string, low Monitor, high HighMonitor) error {
	if !x.NotificationOnly() {
		return nil
	}
	if bad, badHigh := low&^NotificationAllowed, high&^NotificationAllowedHigh; bad != 0 || badHigh != 0 {
		return &NotificationError{Op: op, Flags: bad, High: badHigh}
	}
	return nil
}

// checkNotification refuses a method a notification profiler may not call.
func (x *Info) checkNotification(op string) error {
	if x.NotificationOnly() {
		return &NotificationError{Op: op}
	}
	return nil
}

// notificationHook answers LoadAsNotificationOnly for a dispatcher: the
// user's answer if the profiler implements it, else the SDK's (see
// defaultNotificationOnly), and records it.
type notificationHook struct {
	Callback11
	d    *dispatcher
	user bool
}

func (h notificationHook) LoadAsNotificationOnly() (bool, error) {
	var only bool
	var err error
	why := "the profiler's LoadAsNotificationOnly"
	if h.user {
		only, err = h.Callback11.LoadAsNotificationOnly()
	} else {
		only, why = defaultNotificationOnly(h.d.reg.clsid)
	}
	if err == nil {
		h.d.notificationOnly.Store(only)
		logger().Info("LoadAsNotificationOnly", "notificationOnly", only, "why", why)
	}
	return only, err
}

// mainAnswered counts the LoadAsNotificationOnly answers that took the main
// profiler's slot.
var mainAnswered atomic.Int32

// defaultNotificationOnly is the SDK's answer to LoadAsNotificationOnly for
// a profiler that does not implement it. The runtime asks every profiler it
// loads, the main one (CORECLR_PROFILER) first, then each entry of
// CORECLR_NOTIFICATION_PROFILERS; only a true answer puts the profiler in a
// notification slot, and a second profiler answering false is refused
// (there is one main profiler). So: true when notification profilers are
// enabled and the list names this library with this CLSID, except for the
// first object when the main profiler is this library too.
func defaultNotificationOnly(clsid uuid.UUID) (bool, string) {
	self := chain.SelfPath()
	if coreclrEnv("ENABLE_NOTIFICATION_PROFILERS") != "1" {
		return false, "notification profilers are not enabled (CORECLR_ENABLE_NOTIFICATION_PROFILERS)"
	}
	listed := false
	for _, e := range strings.Split(coreclrEnv("NOTIFICATION_PROFILERS"), ";") {
		path, id, ok := strings.Cut(e, "=")
		if !ok {
			continue
		}
		u, err := parseCLSID(strings.TrimSpace(id))
		if err == nil && u == clsid && sameFile(strings.TrimSpace(path), self) {
			listed = true
		}
	}
	if !listed {
		return false, "CORECLR_NOTIFICATION_PROFILERS does not name this library with its CLSID"
	}
	mainIsSelf := false
	if u, err := parseCLSID(coreclrEnv("PROFILER")); err == nil && u == clsid && coreclrEnv("ENABLE_PROFILING") == "1" {
		p := coreclrEnv("PROFILER_PATH_64")
		if p == "" {
			p = coreclrEnv("PROFILER_PATH")
		}
		mainIsSelf = p == "" || sameFile(p, self)
	}
	if mainIsSelf && mainAnswered.Add(1) == 1 {
		return false, "the main profiler is this library too, and this is its first object"
	}
	return true, "CORECLR_NOTIFICATION_PROFILERS names this library"
}

// coreclrEnv reads DOTNET_name, else CORECLR_name.
func coreclrEnv(name string) string {
	if v := os.Getenv("DOTNET_" + name); v != "" {
		return v
	}
	return os.Getenv("CORECLR_" + name)
}

func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	if err1 == nil && err2 == nil {
		return os.SameFile(fa, fb)
	}
	return filepath.Clean(a) == filepath.Clean(b)
}
