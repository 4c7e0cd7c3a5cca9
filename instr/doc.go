// Package instr instruments .NET methods with managed code: it wraps each
// method a target names so that an integration runs when the method is
// entered and when it exits, normally or by an exception. It is the
// auto-instrumentation APM tracers are built on, as a capability of the
// SDK: the profiler author writes the targets and the integration, instr
// does the IL.
//
// Targets are written ASSEMBLY!TYPE::METHOD (package
// [github.com/clrprof/clrprof/instr/target], pure Go). An [Integration] is
// two public static methods of a helper assembly, Begin and End; a [Rule]
// applies one to targets, or, with [GoHooks], calls Go functions of the
// profiler instead. Create an [Instrumenter] with [New] in Initialize, add
// [Instrumenter.EventMask] to the event mask and forward the callbacks it
// has methods for (ExampleNew, ExampleGoHooks). Methods are wrapped at
// their first JIT compilation or through ReJIT ([Config].ReJIT,
// [Instrumenter.AddRule], [Instrumenter.InstrumentLoaded]); [Delivery]
// puts the helper assembly into an application that never references it;
// [Instrumenter.Report] names every matched method that could not be
// wrapped, with the reason. A target declared to return Task, Task<T>,
// ValueTask or ValueTask<T> (classic async methods among them) ends when
// its task completes, with the task's result or exception, unless its
// rule says [Rule].EndAtReturn; a runtime-async method ends at its body's
// completion. Go hooks can read members of arguments and of results
// ([GoHooks].Members: a property path such as "RequestUri.AbsoluteUri"
// or "Method.Method", resolved where each type is defined and read by IL
// the SDK generates, a getter that throws giving a null value, never an
// exception in the app; [CurrentActivity] reads the caller's ambient
// Activity, which follows it across awaits: ExampleCurrentActivity), and
// synchronous hooks can act on arguments
// ([GoHooks].Actions, [Call.Act]: call a method taking strings, such as
// Headers.TryAddWithoutValidation for a traceparent, before the body
// runs; an action that throws is counted by [GoActionErrors], never seen
// by the app; ExampleAction), and at the method's return on its
// arguments or the value it returned ([Action].AtExit, [Return.Act];
// ExampleReturn_Act).
//
// Read more in docs/instrumentation.md of the repository: the integration's
// arguments, the wrapped IL, what cannot be instrumented, async methods,
// delivery after an attach, Go hooks and what each costs.
package instr
