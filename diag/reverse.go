package diag

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/clrprof/clrprof/internal/guid"
	"github.com/google/uuid"
)

// Command ids of the start-up commands.
const (
	ProfilerStartup      = 0x02 // Profiler/StartupProfiler (.NET 6+): load a profiler when the paused runtime resumes
	ProcessResumeRuntime = 0x01 // Process/ResumeRuntime (.NET 5+): let a runtime paused at start-up go on
)

// AdvertiseMagic is the 8 bytes an advertise message starts with:
// "ADVR_V1" and a NUL. AdvertiseSize is the size of the whole message.
const (
	AdvertiseMagic = "ADVR_V1\x00"
	AdvertiseSize  = 34
)

// Advertise is what a runtime sends first on every connection it makes to
// a reverse diagnostics port: magic, its instance cookie (a GUID in the COM
// layout), its process id (uint64) and a reserved uint16, little-endian.
type Advertise struct {
	// Cookie is the runtime instance's random ID (the same for every
	// connection of one process).
	Cookie uuid.UUID
	// PID is the connecting process's ID.
	PID uint64
	// Reserved is sent as zero (the protocol reserves it); parsing keeps
	// whatever value came, without refusing it.
	Reserved uint16
}

// ParseAdvertise decodes an advertise message: b must be exactly
// AdvertiseSize bytes starting with AdvertiseMagic. A nonzero reserved
// field is kept, not refused.
func ParseAdvertise(b []byte) (Advertise, error) {
	if len(b) != AdvertiseSize {
		return Advertise{}, &FormatError{len(b), fmt.Sprintf("advertise message has %d bytes, want %d", len(b), AdvertiseSize)}
	}
	for i := 0; i < len(AdvertiseMagic); i++ {
		if b[i] != AdvertiseMagic[i] {
			return Advertise{}, &FormatError{i, fmt.Sprintf("bad advertise magic %q, want %q", b[:len(AdvertiseMagic)], AdvertiseMagic)}
		}
	}
	d := decoder{b: b, off: len(AdvertiseMagic)}
	a := Advertise{Cookie: d.guid("cookie")}
	a.PID = binary.LittleEndian.Uint64(b[24:])
	a.Reserved = binary.LittleEndian.Uint16(b[32:])
	return a, nil
}

// MarshalBinary encodes the advertise message (what a runtime sends; for
// tests and relays).
func (a Advertise) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, AdvertiseSize)
	b = append(b, AdvertiseMagic...)
	b = appendGUID(b, a.Cookie)
	b = binary.LittleEndian.AppendUint64(b, a.PID)
	return binary.LittleEndian.AppendUint16(b, a.Reserved), nil
}

// StartupRequest is the payload of the StartupProfiler command.
type StartupRequest struct {
	// CLSID is the class ID the profiler library registered.
	CLSID uuid.UUID
	// ProfilerPath is the profiler library, as the target process sees it.
	ProfilerPath string
}

// MarshalBinary encodes the payload: the CLSID (COM layout) and the path
// as a length-prefixed NUL-terminated UTF-16LE string.
func (r StartupRequest) MarshalBinary() ([]byte, error) {
	if err := checkPath(r.ProfilerPath); err != nil {
		return nil, err
	}
	path := utf16.Encode([]rune(r.ProfilerPath))
	b := make([]byte, 0, 16+4+2*(len(path)+1))
	b = appendGUID(b, r.CLSID)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(path)+1))
	for _, u := range path {
		b = binary.LittleEndian.AppendUint16(b, u)
	}
	return append(b, 0, 0), nil
}

// UnmarshalBinary decodes a StartupProfiler payload; the inverse of
// MarshalBinary.
func (r *StartupRequest) UnmarshalBinary(b []byte) error {
	d := decoder{b: b}
	clsid := d.guid("CLSID")
	path := d.str("profiler path")
	if d.err == nil && d.off != len(b) {
		d.fail(fmt.Sprintf("%d bytes after the profiler path", len(b)-d.off))
	}
	if d.err != nil {
		return d.err
	}
	*r = StartupRequest{CLSID: clsid, ProfilerPath: path}
	return nil
}

func checkPath(p string) error {
	if p == "" {
		return fmt.Errorf("diag: empty profiler path")
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("diag: profiler path %q contains a NUL", p)
	}
	return nil
}

// A ReverseListener is a reverse diagnostics port: a Unix socket that .NET
// runtimes (.NET 5 and later) connect to when started with
// DOTNET_DiagnosticPorts naming it ([ReverseListener.Env]). With the
// suspend mode the runtime pauses early in its start-up, before it loads a
// profiler, until a ResumeRuntime command arrives on one of its
// connections; meanwhile a StartupProfiler command can choose the
// profiler it loads.
//
// Each connection carries one command: after it, the runtime connects
// again (and advertises itself again), so a session is Accept, one
// command, Accept, one command, ...
type ReverseListener struct {
	ln   *net.UnixListener
	path string
}

// ListenReverse creates the Unix socket path and listens on it. The path
// may not contain ',' or ';' (they separate DOTNET_DiagnosticPorts's
// fields) and must be short enough for a socket address (about 107
// bytes). A relative path is made absolute.
func ListenReverse(path string) (*ReverseListener, error) {
	fail := func(detail string, err error) error {
		return &Error{Op: "listen reverse", Socket: path, Detail: detail, Err: err}
	}
	if strings.ContainsAny(path, ",;") {
		return nil, fail("the path may not contain ',' or ';', which DOTNET_DiagnosticPorts uses as separators", nil)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fail("", err)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: abs, Net: "unix"})
	if err != nil {
		return nil, fail("", err)
	}
	ln.SetUnlinkOnClose(true)
	return &ReverseListener{ln: ln, path: abs}, nil
}

// Path is the socket's absolute path.
func (l *ReverseListener) Path() string { return l.path }

// Env is the variable that makes a runtime connect to this port and pause
// at start-up until resumed: DOTNET_DiagnosticPorts=<path>,connect,suspend.
func (l *ReverseListener) Env() string {
	return "DOTNET_DiagnosticPorts=" + l.path + ",connect,suspend"
}

// Close stops listening and removes the socket file. Connections already
// accepted stay open.
func (l *ReverseListener) Close() error { return l.ln.Close() }

// Accept waits for a runtime to connect and reads its advertise message.
// The context bounds both; when it ends first the error matches
// ErrTimeout. A peer that sends something else is an error wrapping a
// *FormatError.
func (l *ReverseListener) Accept(ctx context.Context) (*ReverseConn, error) {
	fail := func(kind error, detail string, err error) error {
		return &Error{Op: "accept reverse", Socket: l.path, Kind: kind, Detail: detail, Err: err}
	}
	undo := interruptOnDone(ctx, l.ln.SetDeadline)
	c, err := l.ln.AcceptUnix()
	undo()
	if err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return nil, fail(ErrTimeout, "waiting for a runtime to connect", err)
		}
		return nil, fail(nil, "", err)
	}
	rc := &ReverseConn{conn: c, path: l.path}
	done := rc.bind(ctx)
	defer done()
	var b [AdvertiseSize]byte
	if n, err := readFull(c, b[:]); err != nil {
		c.Close()
		if ctx.Err() != nil || isTimeout(err) {
			return nil, fail(ErrTimeout, fmt.Sprintf("waiting for the advertise message (%d of %d bytes)", n, AdvertiseSize), err)
		}
		return nil, fail(nil, fmt.Sprintf("reading the advertise message (%d of %d bytes)", n, AdvertiseSize), err)
	}
	a, err := ParseAdvertise(b[:])
	if err != nil {
		c.Close()
		return nil, fail(nil, "the peer is not a .NET runtime advertising itself", err)
	}
	rc.Advertise = a
	rc.PID = int(a.PID)
	return rc, nil
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// A ReverseConn is one connection a runtime made to a ReverseListener,
// after its advertise message. It carries one command.
type ReverseConn struct {
	// PID is the runtime's process id (in its own pid namespace) and
	// Advertise its whole advertise message, with its instance cookie.
	PID       int
	Advertise Advertise

	conn net.Conn
	path string
	used bool
}

// bind makes the context's end interrupt blocked reads and writes; the
// returned function undoes it.
func (c *ReverseConn) bind(ctx context.Context) func() {
	return interruptOnDone(ctx, c.conn.SetDeadline)
}

// interruptOnDone sets the context's deadline with setDeadline, and a past
// deadline when the context ends, which interrupts blocked calls. The
// returned function clears the deadline once no such setting can still
// happen, so a later call starts afresh.
func interruptOnDone(ctx context.Context, setDeadline func(time.Time) error) func() {
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = setDeadline(time.Unix(1, 0))
		close(fired)
	})
	if dl, ok := ctx.Deadline(); ok {
		_ = setDeadline(dl)
	}
	return func() {
		if !stop() {
			<-fired
		}
		_ = setDeadline(time.Time{})
	}
}

// Close closes the connection; the runtime connects again.
func (c *ReverseConn) Close() error { return c.conn.Close() }

// ResumeRuntime sends Process/ResumeRuntime: a runtime paused at start-up
// by this port goes on (a runtime already running ignores it). It uses up
// the connection, which it closes.
func (c *ReverseConn) ResumeRuntime(ctx context.Context) error {
	_, err := c.command(ctx, "resume runtime", Message{CommandSet: CommandSetProcess, CommandID: ProcessResumeRuntime})
	return err
}

// SetStartupProfiler sends Profiler/StartupProfiler on this connection:
// the paused runtime will load the profiler req.ProfilerPath with class
// req.CLSID as if CORECLR_PROFILER and CORECLR_PROFILER_PATH named it,
// once resumed. It uses up the connection, which it closes; resume the
// runtime on the next one. Errors are as for [SetStartupProfiler]. On the
// runtime's first connection the runtime may not be marked paused yet and
// refuse with E_INVALIDARG; [ReverseListener.SetStartupProfiler] handles
// that.
func (c *ReverseConn) SetStartupProfiler(ctx context.Context, req StartupRequest) error {
	m, err := startupMessage(&req, c.PID)
	if err != nil {
		return &Error{Op: "set startup profiler", PID: c.PID, Socket: c.path, Err: err}
	}
	_, err = c.command(ctx, "set startup profiler", m)
	return err
}

// SetStartupProfiler sends Profiler/StartupProfiler to the runtime that
// made c and returns that runtime's next connection, on which to resume it
// (or send another command). Use it rather than
// [ReverseConn.SetStartupProfiler] right after the first Accept.
//
// The reason is a race in the runtime (.NET 6 to 8 at least): its
// diagnostics server thread connects to the reverse ports as soon as the
// server starts, while the start-up thread marks the runtime "paused" a
// moment later, when it reaches the pause (ds-server.c: the flag is set
// in ds_server_pause_for_diagnostics_monitor, the connection is made by
// the thread ds_server_init starts). A StartupProfiler that arrives in
// between is refused with E_INVALIDARG, just as after ResumeRuntime. A
// runtime on a suspending port cannot have been resumed before anyone sent
// ResumeRuntime, so this method takes E_INVALIDARG as "not paused yet":
// it accepts the same runtime's next connection (same instance cookie)
// and asks again, a few milliseconds apart, until the runtime accepts, it
// answers anything else, or ctx ends (then the error is the last
// refusal, which also matches ErrTimeout). Connections other runtimes make
// to the same listener meanwhile are closed; they connect again.
func (l *ReverseListener) SetStartupProfiler(ctx context.Context, c *ReverseConn, req StartupRequest) (*ReverseConn, error) {
	var refused error // the last "not paused yet"
	for {
		err := c.SetStartupProfiler(ctx, req)
		if err != nil && !(errors.Is(err, ErrRefused) && errors.Is(err, HRESULT(eInvalidArg))) {
			if refused != nil && errors.Is(err, ErrTimeout) {
				// ctx ended (its deadline, on the connection,
				// may pass a moment before ctx says so) while a
				// later attempt waited.
				return nil, &timeoutError{refused}
			}
			return nil, err
		}
		refused = err
		if err != nil {
			select {
			case <-ctx.Done():
				return nil, &timeoutError{err}
			case <-time.After(startupRetryDelay):
			}
		}
		next, aerr := l.acceptSame(ctx, c.Advertise.Cookie)
		if aerr != nil {
			if err != nil {
				return nil, &timeoutError{err}
			}
			return nil, aerr
		}
		if err == nil {
			return next, nil
		}
		c = next
	}
}

// startupRetryDelay separates StartupProfiler attempts while a runtime is
// not yet paused.
const startupRetryDelay = 5 * time.Millisecond

// eInvalidArg is E_INVALIDARG, the runtime's answer to StartupProfiler
// when it is not paused.
const eInvalidArg = -2147024809 // 0x80070057

// timeoutError is a refusal still standing when the context ended: it is
// the refusal and also matches ErrTimeout.
type timeoutError struct{ err error }

func (e *timeoutError) Error() string {
	return e.err.Error() + " (still refused when the deadline passed)"
}
func (e *timeoutError) Unwrap() []error { return []error{e.err, ErrTimeout} }

// acceptSame accepts the next connection of the runtime with the given
// instance cookie, closing other runtimes' connections.
func (l *ReverseListener) acceptSame(ctx context.Context, cookie uuid.UUID) (*ReverseConn, error) {
	for {
		c, err := l.Accept(ctx)
		if err != nil {
			return nil, err
		}
		if c.Advertise.Cookie == cookie {
			return c, nil
		}
		c.Close()
	}
}

// command sends m, reads the HRESULT answer and closes the connection.
func (c *ReverseConn) command(ctx context.Context, op string, m Message) (HRESULT, error) {
	fail := func(kind error, code HRESULT, detail string, err error) error {
		return &Error{Op: op, PID: c.PID, Socket: c.path, Kind: kind, Code: code, Detail: detail, Err: err}
	}
	if c.used {
		return 0, fail(nil, 0, "the connection already carried a command; accept the runtime's next connection", nil)
	}
	c.used = true
	defer c.conn.Close()
	done := c.bind(ctx)
	defer done()
	return exchange(ctx, c.conn, m, fail)
}

// exchange sends m on conn and interprets the HRESULT answer.
func exchange(ctx context.Context, conn net.Conn, m Message, fail func(kind error, code HRESULT, detail string, err error) error) (HRESULT, error) {
	b, err := m.Encode()
	if err != nil {
		return 0, fail(nil, 0, "", err)
	}
	if _, err := conn.Write(b); err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return 0, fail(ErrTimeout, 0, "sending the command", err)
		}
		return 0, fail(nil, 0, "sending the command", err)
	}
	ans, err := ReadMessage(conn)
	if err != nil {
		if ctx.Err() != nil || isTimeout(err) {
			return 0, fail(ErrTimeout, 0, "waiting for the runtime's answer", err)
		}
		return 0, fail(nil, 0, "reading the runtime's answer", err)
	}
	// ResumeRuntime's answer is documented without a payload; runtimes
	// send an HRESULT. Take both.
	if ans.CommandSet == CommandSetServer && ans.CommandID == ServerOK && len(ans.Payload) == 0 {
		return 0, nil
	}
	r, err := ParseResponse(ans)
	if err != nil {
		return 0, fail(nil, 0, "the runtime's answer", err)
	}
	if r.OK && !r.Code.Failed() {
		return r.Code, nil
	}
	if !r.OK && !r.Code.Failed() {
		return r.Code, fail(ErrRefused, r.Code, "the diagnostics server answered Error with a success code", nil)
	}
	switch name := r.Code.Name(); {
	case name == "CORDIAGIPC_E_UNKNOWN_COMMAND":
		return r.Code, fail(ErrNotSupported, r.Code, "the diagnostics server does not know the command (ResumeRuntime needs .NET 5, StartupProfiler .NET 6)", nil)
	case name == "E_INVALIDARG" && m.CommandSet == CommandSetProfiler && m.CommandID == ProfilerStartup:
		return r.Code, fail(ErrRefused, r.Code, "the runtime is not paused at start-up (a start-up profiler can only be set before ResumeRuntime)", nil)
	case strings.HasPrefix(name, "CORDIAGIPC_E_"):
		return r.Code, fail(ErrRefused, r.Code, "the diagnostics server rejected the message", nil)
	}
	return r.Code, fail(ErrRefused, r.Code, "", nil)
}

// startupMessage checks and encodes a StartupProfiler command: a relative
// path is made absolute, and a path that does not exist is an error unless
// the target lives in another mount namespace.
func startupMessage(req *StartupRequest, pid int) (Message, error) {
	if req.ProfilerPath != "" && !filepath.IsAbs(req.ProfilerPath) {
		abs, err := filepath.Abs(req.ProfilerPath)
		if err != nil {
			return Message{}, err
		}
		req.ProfilerPath = abs
	}
	if req.ProfilerPath != "" {
		if _, err := os.Stat(req.ProfilerPath); err != nil && (pid <= 0 || sameMountNamespace(pid)) {
			return Message{}, fmt.Errorf("profiler library: %w", err)
		}
	}
	payload, err := req.MarshalBinary()
	if err != nil {
		return Message{}, err
	}
	return Message{CommandSet: CommandSetProfiler, CommandID: ProfilerStartup, Payload: payload}, nil
}

// SetStartupProfiler sends Profiler/StartupProfiler (.NET 6 and later) to
// process pid through its ordinary diagnostics socket (as upstream's
// reverse start-up test does): the runtime, which must be paused at
// start-up by a suspending diagnostics port, will load the profiler
// req.ProfilerPath with class req.CLSID when resumed.
// Without a deadline in the context it waits at most 30 seconds.
//
// Errors are *Error values: ErrProcessNotFound or ErrNotSupported when
// there is no such process or socket, ErrTimeout, ErrNotSupported for a
// runtime older than .NET 6, and ErrRefused (with the
// runtime's HRESULT) when the runtime declines, for instance E_INVALIDARG
// when it is not paused at start-up (including the moment between its
// first connection to a reverse port and its start-up thread reaching the
// pause: see [ReverseListener.SetStartupProfiler]). The profiler itself is loaded only
// after ResumeRuntime: a library that cannot be loaded is not reported
// here.
func SetStartupProfiler(ctx context.Context, pid int, req StartupRequest) error {
	const op = "set startup profiler"
	sock, err := SocketPath(pid)
	if err != nil {
		var de *Error
		if errors.As(err, &de) {
			de.Op = op
			if why, old := tooOldForStartup(pid); old && de.Kind == ErrNotSupported {
				de.Detail = why
			}
		}
		return err
	}
	fail := func(kind error, code HRESULT, detail string, err error) error {
		return &Error{Op: op, PID: pid, Socket: sock, Kind: kind, Code: code, Detail: detail, Err: err}
	}
	m, err := startupMessage(&req, pid)
	if err != nil {
		return fail(nil, 0, "", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, answerGrace)
		defer cancel()
	}
	conn, err := dialSocket(ctx, sock, pid)
	if err != nil {
		if ctx.Err() != nil {
			return fail(ErrTimeout, 0, "connecting to the diagnostics socket", err)
		}
		if nobodyListens(err) {
			why, kind := noListener(pid, tooOldForStartup)
			return fail(kind, 0, why, err)
		}
		return fail(ErrNotSupported, 0, "connecting to the diagnostics socket", err)
	}
	defer conn.Close()
	rc := &ReverseConn{conn: conn}
	done := rc.bind(ctx)
	defer done()
	code, err := exchange(ctx, conn, m, fail)
	if err != nil && code.Failed() && !errors.Is(err, ErrNotSupported) {
		// An older runtime may not say it does not know the command
		// (.NET Core 3.1 answers CORDIAGIPC_E_BAD_ENCODING): say what the
		// target runs.
		if why, old := tooOldForStartup(pid); old {
			return fail(ErrNotSupported, code, why, nil)
		}
	}
	return err
}

// tooOldForStartup says whether process pid runs a runtime older than .NET
// 6, which has no StartupProfiler command, and says so.
func tooOldForStartup(pid int) (string, bool) {
	lib := coreclrOf(pid)
	version := filepath.Base(filepath.Dir(lib))
	if major, ok := leadingInt(version); ok && lib != "" && major < 6 {
		name := ".NET "
		if major < 5 {
			name = ".NET Core "
		}
		return fmt.Sprintf("it runs %s%s (%s), and the StartupProfiler command needs .NET 6 or later", name, version, lib), true
	}
	return "", false
}

// SetStartupProfilerCLSID is SetStartupProfiler with the CLSID as text
// (braces optional).
func SetStartupProfilerCLSID(ctx context.Context, pid int, clsid, path string) error {
	id, err := guid.Parse(clsid)
	if err != nil {
		return fmt.Errorf("diag: SetStartupProfiler: CLSID: %w", err)
	}
	return SetStartupProfiler(ctx, pid, StartupRequest{CLSID: id, ProfilerPath: path})
}
