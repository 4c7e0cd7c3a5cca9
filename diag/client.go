package diag

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/internal/com"
	"github.com/clrprof/clrprof/internal/guid"
)

// HRESULT is a COM status code; it implements error, and is the same type
// as profiler.HRESULT, so the runtime's answers compare with the profiler
// package's constants (errors.Is(err, profiler.CORPROF_E_PROFILER_ALREADY_ACTIVE)).
type HRESULT = com.HRESULT

// The kinds of failure an [Error] matches with errors.Is.
var (
	// ErrProcessNotFound: there is no process with that pid.
	ErrProcessNotFound = errors.New("no such process")
	// ErrNotSupported: the process cannot take the command: no
	// diagnostics socket (a runtime older than .NET Core 3.0, not a .NET
	// process, diagnostics disabled), or a server that does not know the
	// command (StartupProfiler before .NET 6).
	ErrNotSupported = errors.New("not supported by the target")
	// ErrTimeout: the runtime did not answer in time, or gave up waiting
	// itself (CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC).
	ErrTimeout = errors.New("timed out")
	// ErrRefused: the runtime answered with a failure: a profiler is
	// already loaded, the library could not be loaded, the profiler is not
	// attachable, its InitializeForAttach failed, a start-up profiler was
	// sent to a runtime no longer paused, ...
	ErrRefused = errors.New("refused by the runtime")
)

// An Error describes a failed operation of this package.
type Error struct {
	Op     string  // "attach", "find socket", "set startup profiler", "accept reverse", ...
	PID    int     // target process, 0 if only a socket was given
	Socket string  // the socket used, if one was found
	Kind   error   // ErrProcessNotFound, ErrNotSupported, ErrTimeout, ErrRefused, or nil
	Code   HRESULT // the runtime's failure code, or 0
	Detail string  // an explanation for people
	Err    error   // the underlying error, or nil
}

// Error says which operation failed, on which process or socket, and why.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("diag: ")
	b.WriteString(e.Op)
	if e.PID != 0 {
		fmt.Fprintf(&b, " (pid %d)", e.PID)
	} else if e.Socket != "" {
		fmt.Fprintf(&b, " (%s)", e.Socket)
	}
	for _, part := range []string{kindString(e.Kind), codeString(e.Code), e.Detail, errString(e.Err)} {
		if part != "" {
			b.WriteString(": ")
			b.WriteString(part)
		}
	}
	return b.String()
}

func kindString(k error) string {
	if k == nil {
		return ""
	}
	return k.Error()
}

func codeString(c HRESULT) string {
	if c == 0 {
		return ""
	}
	return "runtime answered " + c.Error()
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Is reports whether target is the error's Kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Unwrap returns the runtime's HRESULT (if any) and the underlying error.
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Code != 0 {
		errs = append(errs, e.Code)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// DefaultAttachTimeout is the AttachRequest.Timeout used when it is zero.
const DefaultAttachTimeout = 10 * time.Second

// answerGrace is how long past the attach timeout the client waits for the
// runtime's answer when the context has no deadline.
const answerGrace = 30 * time.Second

// Attach asks the .NET runtime of process pid (.NET Core 3.0 or later) to
// load the profiler req.ProfilerPath with class req.CLSID and call its
// ICorProfilerCallback3::InitializeForAttach with req.ClientData. It
// returns nil once the runtime reports that the profiler is attached.
//
// A relative ProfilerPath is made absolute against this process's working
// directory; a path that does not exist is an error unless the target lives
// in another mount namespace (a container), where it is passed as is. A
// zero Timeout means DefaultAttachTimeout. The context bounds the whole
// exchange; without a deadline the client waits for the runtime's answer at
// most Timeout plus 30 seconds.
//
// Errors are *Error values matching ErrProcessNotFound, ErrNotSupported,
// ErrTimeout or ErrRefused; a refusal carries the runtime's HRESULT. If the
// context ends while the runtime is already attaching, the client stops
// waiting but the profiler may still end up attached.
func Attach(ctx context.Context, pid int, req AttachRequest) error {
	sock, err := SocketPath(pid)
	if err != nil {
		var de *Error
		if errors.As(err, &de) {
			de.Op = "attach"
		}
		return err
	}
	return attach(ctx, pid, sock, req)
}

// AttachSocket is Attach through the diagnostics socket at path.
func AttachSocket(ctx context.Context, path string, req AttachRequest) error {
	return attach(ctx, 0, path, req)
}

func attach(ctx context.Context, pid int, sock string, req AttachRequest) error {
	fail := func(kind error, code HRESULT, detail string, err error) error {
		return &Error{Op: "attach", PID: pid, Socket: sock, Kind: kind, Code: code, Detail: detail, Err: err}
	}
	if req.Timeout == 0 {
		req.Timeout = DefaultAttachTimeout
	}
	if req.ProfilerPath != "" && !filepath.IsAbs(req.ProfilerPath) {
		abs, err := filepath.Abs(req.ProfilerPath)
		if err != nil {
			return fail(nil, 0, "profiler path", err)
		}
		req.ProfilerPath = abs
	}
	if req.ProfilerPath != "" {
		if _, err := os.Stat(req.ProfilerPath); err != nil && (pid == 0 || sameMountNamespace(pid)) {
			return fail(nil, 0, "profiler library", err)
		}
	}
	payload, err := req.MarshalBinary()
	if err != nil {
		return fail(nil, 0, "", err)
	}
	msg, err := Message{CommandSet: CommandSetProfiler, CommandID: ProfilerAttach, Payload: payload}.Encode()
	if err != nil {
		return fail(nil, 0, fmt.Sprintf("client data of %d bytes is too large", len(req.ClientData)), err)
	}

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout+answerGrace)
		defer cancel()
	}
	conn, err := dialSocket(ctx, sock, pid)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fail(ErrTimeout, 0, "connecting to the diagnostics socket", err)
		case nobodyListens(err):
			why, kind := noListener(pid, func(pid int) (string, bool) { return tooOldForAttach(coreclrOf(pid)) })
			return fail(kind, 0, why, err)
		default:
			return fail(nil, 0, "connecting to the diagnostics socket", err)
		}
	}
	defer conn.Close()
	// Cancelling the context interrupts blocked reads and writes.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}

	if _, err := conn.Write(msg); err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return fail(ErrTimeout, 0, "sending the AttachProfiler command", err)
		}
		return fail(nil, 0, "sending the AttachProfiler command", err)
	}
	m, err := ReadMessage(conn)
	if err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return fail(ErrTimeout, 0, "waiting for the runtime's answer", err)
		}
		return fail(nil, 0, "reading the runtime's answer", err)
	}
	r, err := ParseResponse(m)
	if err != nil {
		return fail(nil, 0, "the runtime's answer", err)
	}
	// Runtimes report a failed attach either as an OK message carrying
	// the failure (as documented) or as an Error message (.NET Core 3.1,
	// .NET 8); both mean the same.
	if r.OK && !r.Code.Failed() {
		return nil
	}
	if !r.OK && !r.Code.Failed() {
		return fail(ErrRefused, r.Code, "the diagnostics server answered Error with a success code", nil)
	}
	switch name := r.Code.Name(); {
	case name == "CORDIAGIPC_E_UNKNOWN_COMMAND":
		return fail(ErrNotSupported, r.Code, "the diagnostics server does not know the AttachProfiler command", nil)
	case strings.HasPrefix(name, "CORDIAGIPC_E_"):
		return fail(ErrRefused, r.Code, "the diagnostics server rejected the message", nil)
	case name == "CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC":
		return fail(ErrTimeout, r.Code, "the runtime gave up waiting for a background GC to finish; try a longer attach timeout", nil)
	}
	return fail(ErrRefused, r.Code, refusalHint(r.Code), nil)
}

// refusalHint says what a failure code of AttachProfiler usually means.
func refusalHint(c HRESULT) string {
	switch c.Name() {
	case "CORPROF_E_PROFILER_ALREADY_ACTIVE":
		return "a profiler is already loaded in that process (one at a time; a detaching one counts until ProfilerDetachSucceeded)"
	case "CORPROF_E_PROFILER_NOT_ATTACHABLE":
		return "the profiler does not support attach (it does not implement InitializeForAttach)"
	case "CORPROF_E_PROFILER_CANCEL_ACTIVATION":
		return "the profiler declined to attach"
	case "CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER":
		return "the profiler asked for something an attached profiler may not do (an event mask flag?)"
	case "CLASS_E_CLASSNOTAVAILABLE":
		return "the library does not provide that CLSID"
	case "CORPROF_E_NOT_YET_AVAILABLE":
		return "the runtime is still starting (its GC heap is not ready, so the profiler could not set its event mask); try again in a moment"
	}
	return "the library could not be loaded, or its InitializeForAttach failed; the target's stderr or profiler log may say more"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// nobodyListens tells whether err, from connecting to a diagnostics
// socket, says that nobody listens there (refused, or the file is gone).
func nobodyListens(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist)
}

// noListener explains a socket of process pid (0: unknown) that nobody
// listens on: the process has ended, or the socket is a leftover of an
// earlier process with the same pid, and then tooOld says whether the
// target's runtime is too old for the command.
func noListener(pid int, tooOld func(pid int) (string, bool)) (why string, kind error) {
	why = "nobody listens on the diagnostics socket (a leftover of an ended process?)"
	if pid == 0 {
		return why, ErrNotSupported
	}
	if !processExists(pid) {
		return why, ErrProcessNotFound
	}
	if too, old := tooOld(pid); old {
		why += "; " + too
	}
	return why, ErrNotSupported
}

func processExists(pid int) bool {
	_, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(pid)))
	return err == nil
}

// sameMountNamespace reports whether pid sees the same file system as this
// process (true when it cannot tell).
func sameMountNamespace(pid int) bool {
	self, err1 := os.Readlink(filepath.Join(procRoot, "self", "ns", "mnt"))
	other, err2 := os.Readlink(filepath.Join(procRoot, strconv.Itoa(pid), "ns", "mnt"))
	return err1 != nil || err2 != nil || self == other
}

// AttachProfiler is Attach for the common case: the profiler's CLSID as
// text (braces optional, as profiler.Register takes it), its library path
// and the client data its InitializeForAttach receives, with the default
// attach timeout. This package is the trigger side: it does not link the
// profiler runtime (package profiler and its cgo shim).
func AttachProfiler(ctx context.Context, pid int, clsid, path string, clientData []byte) error {
	id, err := guid.Parse(clsid)
	if err != nil {
		return fmt.Errorf("diag: AttachProfiler: CLSID: %w", err)
	}
	return Attach(ctx, pid, AttachRequest{CLSID: id, ProfilerPath: path, ClientData: clientData})
}

// listenGrace is how long dialSocket keeps trying a socket that refuses
// connections while its process is alive: the runtime creates the socket
// file (bind) a moment before it listens, so a client that found the file
// right after the process started can be refused once (seen in
// TestMCSSoak's attach: the file 12 ms after start, ECONNREFUSED).
const listenGrace = 500 * time.Millisecond

// dialSocket connects to a diagnostics socket. A refused connection is
// tried again, every few milliseconds for at most listenGrace (and within
// ctx), while the process pid is alive; the last error is returned
// otherwise.
func dialSocket(ctx context.Context, sock string, pid int) (net.Conn, error) {
	var d net.Dialer
	deadline := time.Now().Add(listenGrace)
	for {
		conn, err := d.DialContext(ctx, "unix", sock)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || pid == 0 || !processExists(pid) || time.Now().After(deadline) {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(5 * time.Millisecond):
		}
	}
}
