// Package diag is a client of the .NET diagnostics IPC protocol, enough to
// attach a profiler to a running process (.NET Core 3.0 and later) or to
// choose the start-up profiler of a process paused at start-up (.NET 6 and
// later).
//
// [Attach] sends Profiler/AttachProfiler to a process by pid
// (ExampleAttach); [ListenReverse] waits for runtimes started with
// DOTNET_DiagnosticPorts and [ReverseListener.SetStartupProfiler] names
// their start-up profiler (ExampleListenReverse). Errors match
// [ErrProcessNotFound], [ErrNotSupported], [ErrTimeout] or [ErrRefused]
// with errors.Is. The package needs no cgo and never links package
// profiler. Command clrattach is its command-line front end.
//
// Read more in docs/packages.md of the repository (the wire format, the
// reverse port).
package diag
