package profiler

// ThreadRef names the runtime thread a batch of recorded events came from
// (the recorders of packages elt and alloc).
type ThreadRef struct {
	// OSThreadID is the thread's Linux thread ID (gettid).
	OSThreadID uint32
	// ManagedThreadID is the runtime's ThreadID of the thread, or 0 when
	// the runtime did not know the thread when it first recorded.
	ManagedThreadID ThreadID
}
