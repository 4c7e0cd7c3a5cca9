// Package diag is a client of the .NET diagnostics IPC protocol, enough to
// attach a profiler to a running process (.NET Core 3.0 and later) or to
// choose the start-up profiler of a process paused at start-up (.NET 6 and
// later).
//
// A .NET runtime listens on a Unix domain socket named
// dotnet-diagnostic-{pid}-{key}-socket in its temporary directory ($TMPDIR,
// else /tmp), where key is the process's start time. [SocketPath] finds it.
// Every exchange is one message each way on a fresh connection; a message
// is a 20-byte header (the magic "DOTNET_IPC_V1\0", the total size as a
// little-endian uint16, a command set, a command id, two reserved zero
// bytes) and a payload. [Message], [ParseHeader], [ReadMessage] and
// [ParseResponse] encode and decode them.
//
// [Attach] sends the Profiler/AttachProfiler command: an attach timeout in
// milliseconds, the profiler's CLSID, the library's path (UTF-16) and client
// data for the profiler's InitializeForAttach ([AttachRequest]). The runtime
// loads the library, initializes the profiler, and answers with an HRESULT
// in a Server/OK message; a message it cannot handle gets a Server/Error
// message with an HRESULT.
//
// Errors are [*Error] values that match one of [ErrProcessNotFound],
// [ErrNotSupported] (for instance a .NET Core 2.x process, which has no
// diagnostics server: nothing is sent to it), [ErrTimeout] and [ErrRefused]
// with errors.Is, and carry the runtime's HRESULT, which compares with the
// profiler package's constants.
//
// A runtime of .NET 5 or later can also be started paused: with
// DOTNET_DiagnosticPorts=<path>,connect,suspend it connects to a reverse
// diagnostics port that a tool listens on ([ListenReverse],
// [ReverseListener.Env]), sends an advertise message (the magic
// "ADVR_V1\0", its instance cookie GUID, its pid as a uint64 and a reserved
// uint16: [ParseAdvertise]) and waits, before it loads a profiler or runs
// managed code. [ReverseListener.Accept] takes such a connection. Each
// connection carries one command, after which the runtime connects again.
// Profiler/StartupProfiler (.NET 6 and later; [StartupRequest]) names the
// profiler the runtime loads at start-up as if CORECLR_PROFILER and
// CORECLR_PROFILER_PATH named it; it can go over a reverse connection
// ([ReverseListener.SetStartupProfiler], which also rides out the moment
// after the runtime's first connection when it is not yet marked paused)
// or the ordinary socket
// ([SetStartupProfiler]), and only while the runtime is paused (else it
// answers E_INVALIDARG). Process/ResumeRuntime ([ReverseConn.ResumeRuntime])
// lets it go on. A profiler that cannot be loaded is not reported to the
// tool: the runtime loads it only after it resumed.
//
// The package needs no cgo (it builds with CGO_ENABLED=0; it shares the
// HRESULT type and names of package internal/com with the profiler
// package), and it never links package profiler or its cgo shim: a
// trigger program stays a plain Go program. Command clrattach is its
// command-line front end; AttachProfiler takes the CLSID as text.
package diag
