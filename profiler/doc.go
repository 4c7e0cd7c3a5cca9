// Package profiler writes .NET CoreCLR profilers in Go.
//
// A profiler is a Go main package built as a C shared library. CoreCLR
// loads it at startup when the environment asks for it, and calls it back
// through the ICorProfilerCallback interfaces; the profiler queries and
// steers the runtime through ICorProfilerInfo. This package is the whole
// COM layer: the user's package never imports "C".
//
// # Writing a profiler
//
// Embed [Base] (every callback, answering S_OK), override the callbacks you
// need, and register the type from an init function:
//
//	package main
//
//	import "github.com/clrprof/clrprof/profiler"
//
//	type prof struct {
//		profiler.Base
//		info *profiler.Info
//	}
//
//	func (p *prof) Initialize(info *profiler.Info) error {
//		p.info = info
//		return info.SetEventMask(profiler.MonitorJITCompilation)
//	}
//
//	func (p *prof) JITCompilationStarted(id profiler.FunctionID, safeToBlock bool) error {
//		// ...
//		return nil
//	}
//
//	func init() {
//		profiler.Register("{5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73}", &prof{})
//	}
//
//	func main() {}
//
// The interfaces [Callback], [Callback2] ... [Callback11] mirror
// ICorProfilerCallback .. ICorProfilerCallback11; a type gets the methods of
// all of them from Base. Method names are the runtime's, parameters are Go
// types (IDs, bool, string, slices).
//
// Only callbacks that the type really implements reach Go. [Register]
// looks at the type once: a method promoted from the embedded Base is
// answered S_OK by the C shim without entering Go at all; a method declared
// on the type (value or pointer receiver), or promoted from any other
// embedded type, is delivered. Initialize and Shutdown are always
// delivered. If a method has the right name but the wrong signature, the
// type no longer satisfies that CallbackN interface, none of its callbacks
// (nor those of later versions) are delivered, and Register logs a warning
// naming the method. Catch that at build time with an interface assertion
// beside the type, and in a unit test with [CheckCallbacks]:
//
//	var _ profiler.Callback11 = (*prof)(nil)
//
// A callback that answers with a result names it: JITInlining returns
// (shouldInline bool, err error), false refusing that inlining;
// JITCachedFunctionSearchStarted returns useCachedFunction, false making
// the JIT compile the method instead of using its precompiled code;
// LoadAsNotificationOnly returns notificationOnly. Each callback's doc says
// when the runtime calls it, which event mask flag asks for it and which
// runtime brings its interface.
//
// The runtime creates a profiler object each time it loads the library (at
// start-up, once per entry of the .NET 5+ notification profiler list, once
// per attach); all of them dispatch to the value given to Register, each
// with its own Info. [RegisterFactory] gives each object a value of its
// own. A value implementing [Releaser] learns when the runtime has released
// its object (after a detach, and on some runtimes at the end of the
// process). Several profilers share a process through [Compose], a chained
// native profiler ([WithChain]) or the notification slots of .NET 7+: see
// "Sharing the process with another profiler".
//
// A callback returns an error: nil is S_OK for the runtime, an [HRESULT]
// anywhere in the error's chain (errors.As) is returned as is, and any other
// error is E_FAIL. Returning an error from Initialize makes the runtime run
// the application without the profiler. Info methods return HRESULT errors,
// which compare with errors.Is (errors.Is(err, profiler.CORPROF_E_...)); a
// method of an ICorProfilerInfoN newer than the runtime's fails with an
// error matching [ErrNotAvailable] (and E_NOINTERFACE). [Info.Version] is
// the highest ICorProfilerInfoN the runtime implements.
//
// # Info methods: Go types in and out
//
// Every exported method of [Info] (and of the other wrappers) takes and
// returns Go types: out-parameters are results (several of them in a
// Result struct), buffers are strings and slices, an S_FALSE that means
// "no" is a bool before the error ([Info.IsArrayClass]), flags are their
// named types, handles are named values ([ObjectHandle] from
// [Info.CreateHandle]) and addresses in the process are [Address]. When the
// runtime answers CORPROF_E_DATAINCOMPLETE ("part of this is not known
// yet", as for a module's assembly inside ModuleLoadStarted), the outputs it
// did fill are returned together with that error; [Info.ModuleInfoOf] asks
// for chosen outputs only. The raw COM calls whose parameters are C
// pointers (callbacks, client data, caller-filled arrays) are not exported;
// the SDK builds the idiomatic methods ([Info.StackTrace], [Info.EnableELT],
// [Info.SetILFunctionBody], [Info.RequestRevert], ...) on them. The one
// escape hatch is each wrapper's Raw method: the COM interface pointer, for
// C code of your own.
//
// # Names
//
// Go names follow the runtime's with its prefixes dropped and words in Go
// case: COR_PRF_MONITOR_JIT_COMPILATION is MonitorJITCompilation,
// COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED is HighLargeObjectAllocated
// (high flags are High + what they turn on), COR_PRF_ALL is
// MonitorAllFlags (every flag SetEventMask accepts; MonitorAll is
// COR_PRF_MONITOR_ALL, the callbacks only), ICorProfilerInfo10 is Info
// (version 10's methods), ICorProfilerCallback4 is Callback4. The doc of
// every generated constant, type, method and field names the runtime's
// identifier, so `go doc -all profiler | grep COR_PRF_HIGH_MONITOR_` finds
// the Go name of a runtime name; names that changed keep compiling as
// Deprecated aliases (MonitorMonitorAll, MonitorAppdomainLoads).
//
// The runtime's enumerators ([ModuleEnum], [ThreadEnum], [FunctionEnum],
// [ObjectEnum], [MethodEnum]) are Go iterators through All, or slices
// through Collect; metadata's enumerations are slices (metadata.Import2's
// TypeDefs, Methods, Fields, ...).
//
// [Info.FunctionName], [Info.FunctionNameParts], [Info.ClassName] and
// [Info.FunctionFullName] format names from IDs: "Namespace.Outer+Inner<int>.Method<string>".
// While the event mask has MonitorModuleLoads they share one metadata
// reader per module (dropped when the module unloads); with the Register
// option WithSharedGenericNames and while the mask has MonitorClassLoads,
// shared generic code is named by the canonical
// instantiation it is (Pair<int,System.__Canon>.Show), as it is on .NET 10+
// without them (the runtime reports it), otherwise by the
// class's formal parameters (Pair<A,B>.Show): [Info.FunctionName] says
// exactly what each case gives. [MetaDataDispenser] opens the metadata of
// any assembly file through the runtime's own dispenser.
//
// # Building and running
//
//	go build -buildmode=c-shared -o libprof.so .
//
//	CORECLR_ENABLE_PROFILING=1 \
//	CORECLR_PROFILER={5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73} \
//	CORECLR_PROFILER_PATH=$PWD/libprof.so \
//	dotnet app.dll
//
// (.NET 5 and later also accept the DOTNET_ prefix.) CORECLR_PROFILER must
// name the CLSID given to Register; when it does not, the library logs a
// warning with both values and the runtime runs without a profiler. The
// library exports DllGetClassObject and DllCanUnloadNow, and is never
// unloaded. Linux x64 with glibc only.
//
// # Logging
//
// The package logs with log/slog, never on the application's stdout. By
// default records go to stderr, prefixed "clrprof: ", at level WARN. The
// environment changes that:
//
//	CLRPROF_LOG_LEVEL  debug, info, warn (default), error or off
//	CLRPROF_LOG_FILE   append to this file instead of stderr
//
// A bad value is reported in a warning and the default used. [WithLogger]
// replaces all of this with the caller's logger; [Logger] returns the
// logger in use, for a profiler's own records. At DEBUG the library logs
// its load, the callbacks the type implements and what the signal audit
// (below) saw; at INFO, Initialize with the runtime's ICorProfilerInfo
// version and any change made to signal handlers.
//
// # Safety rules
//
// The profiler runs inside someone else's process; the SDK keeps a failing
// profiler from taking the application down where it can:
//
//   - A panic in a callback is recovered, logged with its stack, and the
//     runtime sees E_FAIL (in Initialize: the profiler is not used). Panics
//     in goroutines the profiler starts itself are not recovered by anyone
//     and end the process, as in any Go program: recover in them.
//   - runtime.Goexit (and so testing's FailNow, or log.Fatal's cousins that
//     exit the goroutine) inside a callback cannot be recovered: the callback
//     runs on a runtime thread that called into Go, and the Go runtime aborts
//     the whole process ("runtime.Goexit called in a thread that was not
//     created by the Go runtime"). Never call it from a callback. os.Exit and
//     log.Fatal end the application too.
//   - Register, and every entry point the runtime calls, never panic and
//     never call os.Exit.
//   - Package initialisation does nothing but Register: no goroutines, no
//     I/O. The Go runtime starts while the runtime is loading the library.
//   - After Shutdown, callbacks that still arrive are answered S_OK in C and
//     never reach the profiler. Do not use the Info after Shutdown returns.
//   - Some callbacks (allocations, exceptions, GC, thread suspension) run
//     while the runtime cannot collect garbage: keep them short, never block
//     on a lock that a goroutine holds while it calls into the runtime.
//   - Copy data that the runtime passes in callbacks before keeping it; the
//     SDK's conversions already copy strings and slices.
//
// # Environment
//
// When the library is loaded, before its Go runtime starts, it checks the
// process: a C library other than glibc (Go's c-shared mode needs glibc), or
// another Go runtime already loaded (another Go shared library; two Go
// runtimes in one process are unsupported), makes Initialize fail with a
// logged error, so the runtime runs the application without the profiler.
//
// The application's GOGC, GOMEMLIMIT, GOMAXPROCS and GOTRACEBACK are meant
// for someone else: Register puts the profiler's Go runtime back to Go's
// defaults (logged at INFO), unless it is given [WithGoEnvironment]. GODEBUG
// is read when the Go runtime starts and cannot be undone; it is reported in
// a warning.
//
// # Hot paths: enter/leave hooks, allocations, stacks
//
// Events that come by the million, in cooperative mode, never enter Go one
// at a time: the SDK records them in C into per-thread buffers (no lock,
// no system call, no Go transition per event) and a goroutine of the SDK
// drains them every few milliseconds and hands the profiler batches.
//
//   - [Info.EnableELT]: the fast-path enter/leave/tailcall hooks
//     (SetEnterLeaveFunctionHooks3) are assembly stubs that preserve every
//     register; batches of (function, kind, time) per thread; an optional
//     filter (function ID mapper) chooses the hooked functions; unwinds by
//     exceptions can be recorded too. The buffers are bounded (1 MiB per
//     thread, 64 MiB in all by default); a thread whose buffer is full
//     waits for the drain (which a half-full buffer wakes) rather than
//     drop, and what is dropped or lost anyway is counted, reported in
//     [ELTStats] and logged. [Info.EnableCallCounts] keeps per-function
//     call counts and inclusive times, and a shadow stack per thread, in C,
//     without an event per call (nothing to drain or drop): read them with
//     [CallCounter.Snapshot] and [CallCounter.Stacks].
//     [Info.EnableELTWithInfo] is the WithInfo path: a synchronous Go
//     callback per call with the arguments and return value
//     ([ELTCall.Args], [ELTCall.Return]).
//   - [Info.EnableAllocationRecording]: ObjectAllocated answered in C
//     (class and size of every allocation, Poisson-sampled stacks), with
//     the same bounded buffers and back-pressure.
//   - [Info.StackTrace] and [Info.WalkStack]: DoStackSnapshot of the
//     current thread (from a callback), or of any thread while the runtime
//     is suspended; [Info.SnapshotAllThreads] suspends, walks every managed
//     thread and resumes (ICorProfilerInfo10: .NET Core 3.0 and later), and
//     [Info.Snapshot] also says what that cost the application (a
//     [Snapshot]'s Suspending and Held) apart from the time it waited for a
//     garbage collection's suspension to end (Waited);
//     [Info.SnapshotThreads] walks only the threads a function picks
//     while the runtime is suspended (a CPU sampler: those that ran).
//
// What the runtimes here do: .NET Core 2.0 on Linux accepts the ELT hooks
// but never calls them; .NET Core 2.1 calls them, but its argument ranges
// (WithInfo) do not hold the arguments (return values are right); 2.x has
// no SuspendRuntime, so only current-thread snapshots. On Unix x64 the JIT
// passes the enter hook its function ID in %r14, not %rdi. Buffers that
// fill faster than they drain drop events and say how many (Dropped).
// sample/cpuprof, sample/allocprof and sample/calltrace are complete
// profilers built on these.
//
// # Runtime events in process (EventPipe)
//
// On .NET 5 and later (ICorProfilerInfo12, ICorProfilerCallback10) a
// profiler reads the runtime's own events, and those of any EventSource,
// without a tracing tool: [Info.EventPipeStartSession] with typed
// [EventPipeProviderSettings] (name, keywords, level, filter arguments),
// HighEventPipe in the event mask, and the profiler's
// EventPipeEventDelivered receives each event on the thread that raised
// it, synchronously, with its metadata and payload (valid during the call).
// Package clrevents parses the metadata, reads self-describing payloads,
// and decodes the runtime's GC, contention, exception, thread pool and
// allocation tick events into Go structs by version. A profiler also writes
// events of its own: [Info.EventPipeCreateProvider] (or, on .NET 8,
// [Info.EventPipeCreateProvider2] with a Go callback told when sessions
// enable or disable it), [Info.EventPipeDefineEvent] with an [EventPipeEventDefinition],
// [Info.EventPipeWriteEvent] with a payload built by clrevents.Payload.
// Before .NET 5 these methods fail with ErrNotAvailable.
//
// The runtime's allocation ticks (GCAllocationTick, about every 100 KB
// allocated with the GC keyword at Verbose level) come by the thousands a
// second on allocation-heavy code; [Info.SampleAllocationTicks] keeps one
// every N bytes on average, deciding in C inside the runtime's callback,
// so the others never enter Go; a kept tick says in
// [AllocationTickSampler.KeptBytes] how many bytes it stands for. On .NET
// 10+ the runtime's randomized allocation sampling (AllocationSampled,
// clrevents.KeywordAllocationSampling at Informational; no ticks while it
// is on) is the better source: the same sampler keeps each of its events
// with probability [AllocationTickSampler.SampledKeep], and
// clrevents.AllocationEstimate weighs the kept ones.
//
// What .NET 8.0.4 does here: events reach EventPipeEventDelivered without
// stack frames (none of the runtime's or the profiler's own events,
// defined with a stack or not, came with any in the tests). That is the
// runtime's design: it walks an event's stack when it copies the event
// into a session buffer, and a profiler's session has no buffer (the event
// goes straight to the callback with only a stack its writer supplied).
// The metadata of the runtime's own events describes no fields either
// (their layouts are clrevents'). A profiler that wants the stack of an
// event takes it itself: [Info.StackTrace](0, n) from
// EventPipeEventDelivered is the raising thread's (sample/contprof does
// this for lock contention).
//
// # Sharing the process with another profiler
//
// The runtime loads one main profiler per process. Four arrangements let
// more than one run:
//
// Several Go profilers in one library. [Compose] takes profiler values (a
// continuous profiler and a tracer, say) and returns a [Composite] that
// Register takes like any other. Each member gets an [Info] of its own: its
// SetEventMask sets its own mask, the runtime runs with the union, and the
// member receives only the callbacks it implements and its own mask asks
// for. Callbacks go to the members in order; a bool answer is the AND of
// the members' (a JITInlining "no" from either wins); a member's error or
// panic never keeps the others from being called; a member whose
// Initialize fails is dropped and the others run. See [Composite] for every
// rule (IL rewrites, enter/leave hooks, the function ID mapper).
//
// A native profiler chained behind a Go one. Every profiler built with this
// package loads a second, native (C or C++) profiler library when
// CLRPROF_CHAIN_PATH and CLRPROF_CHAIN_CLSID name it (or [WithChain] does),
// on every runtime, 2.x and 3.1 included:
//
//	CORECLR_PROFILER={Go profiler's CLSID} CORECLR_PROFILER_PATH=libgoprof.so \
//	CLRPROF_CHAIN_PATH=/opt/vendor/libvendor.so CLRPROF_CHAIN_CLSID={vendor's CLSID} \
//	dotnet app.dll
//
// The SDK loads it through its DllGetClassObject when the runtime creates
// the Go profiler's object, and forwards every callback to it (the chained
// profiler first, then the Go profiler) as long as it implements the
// callback's ICorProfilerCallbackN and its event mask asks for it. It gets
// the runtime's ICorProfilerInfo through a wrapper: QueryInterface answers
// every ICorProfilerInfoN the runtime has (and no other), every method goes
// straight to the runtime except these, which the SDK answers:
//
//   - SetEventMask and SetEventMask2 set the chained profiler's own mask;
//     the runtime gets the union of the chained profiler's and the Go
//     profiler's, so neither can switch the other's events off.
//     GetEventMask and GetEventMask2 answer the caller's own mask. (The Go
//     profiler's Info goes through the same kind of wrapper.)
//   - SetEnterLeaveFunctionHooks, ...2, ...3, ...3WithInfo and
//     SetFunctionIDMapper, ...2: the runtime has one set of each per
//     process. The first party to set them owns them; the other's call
//     fails with CORPROF_E_PROFILER_ALREADY_ACTIVE and a logged error.
//
// A callback only the chained profiler asks for (its event mask has the
// callback's bit and no other party's has) goes to it straight: the
// object's vtable slot points at a three-instruction trampoline that
// swaps in the chained profiler's object and jumps to its method, so the
// runtime gets the chained profiler's HRESULT, as if it were alone, and
// the call costs about what a call to it alone does
// (BenchmarkChainObjectAllocated). The slots are re-pointed whenever a
// party's mask changes. A callback both ask for goes through the fan-out:
// the chained profiler first, then the Go profiler, a few nanoseconds
// more (about 5 ns here). What a chained profiler pays beyond its own
// work is then mostly fixed, per process: the Go runtime's start-up, and on
// .NET Core 2.x a wait in Shutdown while another thread is running (after
// turning the events off, the SDK lets callbacks the runtime had already
// decided to make finish while the profiler is still there: the 2.x
// runtimes call through the callback pointer they clear after Shutdown;
// up to 20 ms, none when every other thread is asleep).
//
// Answers: JITInlining and JITCachedFunctionSearchStarted ask both, and a
// "no" from either wins; for a callback both ask for, the runtime sees
// the Go profiler's HRESULT;
// GetReJITParameters goes to both with the same function control (the Go
// profiler's body, set last, wins);
// LoadAsNotificationOnly is the Go profiler's alone. If the chained
// profiler's Initialize fails the Go profiler runs alone, and the other
// way round. A profiler that attaches (InitializeForAttach) does not
// chain. [Chained] reports what was loaded. A chained library that is a Go
// library is refused (see below); signal handlers the chained profiler
// installs are its own, except that the SDK keeps its SIGSEGV router on top
// (see Signals).
//
// Notification profilers (.NET 7 and later; .NET 5 and 6 have the slots
// too). The runtime loads every entry of CORECLR_NOTIFICATION_PROFILERS
// ("path={CLSID};...", with CORECLR_ENABLE_NOTIFICATION_PROFILERS=1) beside
// the main profiler, and asks each LoadAsNotificationOnly first. A Go
// profiler that does not implement LoadAsNotificationOnly gets the SDK's
// answer: true when that list names this library with this CLSID (except
// for the first object when the main profiler is this library too), false
// otherwise. [Info.NotificationOnly] says how the object was loaded. A
// notification profiler may not rewrite IL, set enter/leave hooks, ReJIT,
// or ask for events outside [NotificationAllowed] and
// [NotificationAllowedHigh]; the SDK refuses those calls (SetEventMask,
// SetEventMask2, EnableELT, EnableELTWithInfo, SetILFunctionBody) with a
// [NotificationError], matching [ErrNotificationOnly], instead of the
// runtime's bare E_INVALIDARG. A Go profiler runs as the main profiler with
// native notification profilers beside it, or as a notification profiler
// beside a native main one.
//
// Two Go libraries: no. Each Go shared library carries its own Go runtime
// (scheduler, heap, signal handlers, the threads it starts); two in one
// process take each other's signals and are unsupported by Go. The library
// that loads second finds the first one's Go runtime when it is loaded
// (before its own Go runtime starts), and declines in Initialize: the
// application runs with the first profiler only, and the second logs which
// library, and which clrprof profiler (its CLSID and type), holds the
// process, and how to run both instead: build them into one library with
// [Compose], or run a native profiler beside the Go one with
// CLRPROF_CHAIN_PATH. The second library's Go runtime has started by then
// (the dynamic loader runs it) and stays idle. A chained library that is a
// Go library is not loaded at all (the SDK sees Go's build information in
// the file).
//
// # Signals
//
// A Go runtime loaded into a CoreCLR process changes CoreCLR's signal
// handling, and the library undoes what breaks it. Before the Go runtime
// starts (a C constructor that runs ahead of it), the library takes a
// snapshot of the process's signal handlers. The first time the runtime asks
// for the class factory, it audits them against that snapshot:
//
//   - Every handler the Go runtime found installed got SA_ONSTACK added;
//     the audit clears it again (handler, mask and other flags unchanged).
//     For CoreCLR's GC-suspension activation signal (SIGRTMIN) this keeps
//     the handler off the thread's small alternate signal stack.
//   - SIGFPE and SIGBUS, which the Go runtime took over and would forward
//     to CoreCLR from its alternate stack with nearly every signal blocked,
//     go back to CoreCLR's handlers. (Go code never raises SIGFPE: integer
//     division checks its divisor.)
//   - SIGSEGV, which Go needs for its own nil-pointer panics, gets a small
//     router: a fault in this library's code goes to Go's handler, any
//     other (a managed NullReferenceException) straight to CoreCLR's, with
//     CoreCLR's signal mask. Through Go's handler, CoreCLR would unwind out
//     of a handler that had blocked every signal, leaving them blocked, and
//     the thread's next DivideByZeroException would kill the process.
//     The router also runs CoreCLR's handler on a stack of the thread's
//     own (mapped at the thread's first call into Go, 128 KiB, unmapped
//     when the thread exits) with a copy of the kernel's signal frame.
//     CoreCLR's handler keeps live frames on the alternate signal stack
//     while it dispatches the exception on the thread's stack; the Go
//     runtime shares that alternate stack, and its own signals (SIGURG,
//     sent to preempt a goroutine running in a callback) would land on top
//     of those frames. A handler installed over the router later (.NET
//     Core 2.0's JIT brings one) is moved under it.
//
// While a runtime thread runs Go code in a callback, the activation signal is
// blocked on that thread, so it is delivered only after the callback returns,
// on the thread's own stack. That includes a thread's first callback, in
// which the Go runtime, binding the thread to one of its Ms, unblocks signal
// 34 (glibc's SIGRTMIN), which Go never lets a thread block: the library
// blocks it again in the runtime's hook for that moment (_cgo_bindm, Go
// 1.21 and later), before any Go code runs on the callback's goroutine.
//
// At Shutdown, with CLRPROF_LOG_LEVEL=info, the library logs what the
// router did (faults handed to the runtime on the private stack and on the
// alternate stack) and how many threads' first callbacks had the
// activation signal blocked again.
//
// CLRPROF_SIGNAL_AUDIT=0, CLRPROF_SIGNAL_GUARD=0,
// CLRPROF_SEGV_PRIVATE_STACK=0 and CLRPROF_BINDM_HOOK=0 turn the audit, the
// blocking, the private stack and the re-blocking after a thread's first
// call into Go off; they exist to show what these measures prevent (the stress
// tests) and what they cost (the benchmarks), never for production: they
// are compiled only into builds with the tag clrprof_testhooks (with the
// SDK's C test hooks), and a profiler built without it ignores them.
package profiler
