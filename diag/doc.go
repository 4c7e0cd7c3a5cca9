// Package diag is a client of the .NET diagnostics IPC protocol, enough to
// attach a profiler to a running process (.NET Core 3.0 and later).
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
// The package needs no cgo (it builds with CGO_ENABLED=0; it shares the
// HRESULT type and names of package internal/com with the profiler
// package), and it never links package profiler or its cgo shim: a
// trigger program stays a plain Go program. Command clrattach is its
// command-line front end; AttachProfiler takes the CLSID as text.
package diag
