package profiler

import (
	"fmt"
	"reflect"
	"sync/atomic"
)

// Several profiler objects in one process
//
// The runtime creates one profiler object each time it loads the library:
// at start-up (CORECLR_PROFILER), once per entry of the notification
// profiler list (.NET 5 and later: CORECLR_ENABLE_NOTIFICATION_PROFILERS=1
// and CORECLR_NOTIFICATION_PROFILERS="path={CLSID};path={CLSID};..."), and
// once per attach. The library itself, and the Go runtime in it, is loaded
// once whatever the number of objects: each object gets its own Info and
// its own callbacks, but they all reach the value given to Register.
// RegisterFactory gives each object a value of its own instead.
//
// Two different Go profiler libraries in one process are two Go runtimes,
// which Go does not support in one process: load one Go library, as many
// times as needed, and any number of non-Go profilers next to it.

// RegisterFactory is Register for a profiler whose objects each need their
// own state: newImpl is called once at once (that value serves the first
// profiler object the runtime creates, and tells which callbacks the type
// implements), then once for every further object. Every value must have
// the same dynamic type. Like Register, call it once, from an init function.
func RegisterFactory(clsid string, newImpl func() Callback, opts ...Option) error {
	if newImpl == nil {
		return fmt.Errorf("clrprof: RegisterFactory: newImpl is nil")
	}
	return register("RegisterFactory", clsid, newImpl(), newImpl, opts)
}

// implFor returns the value the next profiler object dispatches to, or an
// error if a factory returned a value of another type.
func (r *registration) implFor() (impl Callback, err error) {
	if r.newImpl == nil || r.firstUsed.CompareAndSwap(false, true) {
		return r.impl, nil
	}
	defer func() {
		if p := recover(); p != nil {
			impl, err = nil, fmt.Errorf("clrprof: the RegisterFactory function panicked: %v", p)
		}
	}()
	impl = r.newImpl()
	if err := checkImpl("RegisterFactory", impl); err != nil {
		return nil, err
	}
	if t := reflect.TypeOf(impl); t != r.implType {
		return nil, fmt.Errorf("clrprof: RegisterFactory: the function returned a %v after a %v; every value must have one type", t, r.implType)
	}
	return impl, nil
}

// liveObjects counts the profiler objects that were initialised and have
// neither shut down nor detached: the callback table is switched off only
// when the last one is done.
var liveObjects atomic.Int64
