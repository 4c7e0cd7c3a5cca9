package profiler

// Releaser is implemented by a profiler that wants to know when the runtime
// has let go of it: after a detach (once ProfilerDetachSucceeded has run)
// the runtime releases its last reference to the profiler object, and the
// SDK then calls Released, once per object, on the runtime thread that
// released it. At the end of the process some runtimes release the profiler
// after Shutdown and others never do (observed: .NET Core 3.1 does, 2.x and
// .NET 8 do not), so do not rely on Released for work that must happen at
// shutdown: do that in Shutdown.
//
// Released is the Go form of what a C++ profiler does in its destructor.
// No callback arrives after it and the object's Info is no longer valid:
// do not call into the runtime from Released (the runtime may be shutting
// down, or the profiler detached). The library stays loaded, so Released
// may print, log, signal goroutines or record state for a later attach.
type Releaser interface {
	Released()
}

// notifyReleased calls the profiler's Released, if it has one, once the
// runtime released the object behind d.
func notifyReleased(d *dispatcher) {
	if d == nil {
		return
	}
	r, ok := d.impl.(Releaser)
	if !ok {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			logger().Error("Released panicked", "panic", p)
		}
	}()
	r.Released()
}
