package diag

import (
	"context"
	"encoding/binary"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/com"
)

// These tests talk to a stand-in diagnostics server on a real Unix socket;
// the integration tests (attach_integration_test.go) talk to real runtimes.

// server listens on a fresh socket and handles one connection with fn.
func server(t *testing.T, fn func(c net.Conn)) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "diagt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "dotnet-diagnostic-1-1-socket")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fn(c)
	}()
	return path
}

// answer reads a command and replies with a server message.
func answer(id uint8, code int32) func(net.Conn) {
	return func(c net.Conn) {
		if _, err := ReadMessage(c); err != nil {
			return
		}
		reply(c, id, code)
	}
}

// reply sends a server message whose payload is code.
func reply(c net.Conn, id uint8, code int32) {
	p := binary.LittleEndian.AppendUint32(nil, uint32(code))
	b, _ := Message{CommandSet: CommandSetServer, CommandID: id, Payload: p}.Encode()
	c.Write(b)
}

func lib(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "libprof.so")
	if err := os.WriteFile(p, []byte("not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestAttachSocketSendsTheCommand(t *testing.T) {
	l := lib(t)
	got := make(chan Message, 1)
	sock := server(t, func(c net.Conn) {
		m, err := ReadMessage(c)
		if err != nil {
			t.Error(err)
			return
		}
		got <- m
		reply(c, ServerOK, 0)
	})
	req := AttachRequest{CLSID: testCLSID, ProfilerPath: l, ClientData: []byte{0, 1, 2}}
	if err := AttachSocket(ctxFor(t, 10*time.Second), sock, req); err != nil {
		t.Fatal(err)
	}
	m := <-got
	if m.CommandSet != CommandSetProfiler || m.CommandID != ProfilerAttach {
		t.Fatalf("command %#x/%#x", m.CommandSet, m.CommandID)
	}
	var r AttachRequest
	if err := r.UnmarshalBinary(m.Payload); err != nil {
		t.Fatal(err)
	}
	if r.Timeout != DefaultAttachTimeout || r.CLSID != testCLSID || r.ProfilerPath != l || string(r.ClientData) != "\x00\x01\x02" {
		t.Fatalf("sent %+v", r)
	}
}

func TestAttachSocketRelativePath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "libx.so"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	got := make(chan string, 1)
	sock := server(t, func(c net.Conn) {
		m, _ := ReadMessage(c)
		var r AttachRequest
		_ = r.UnmarshalBinary(m.Payload)
		got <- r.ProfilerPath
		reply(c, ServerOK, 0)
	})
	if err := AttachSocket(ctxFor(t, 10*time.Second), sock, AttachRequest{CLSID: testCLSID, ProfilerPath: "libx.so"}); err != nil {
		t.Fatal(err)
	}
	if p := <-got; p != filepath.Join(dir, "libx.so") {
		t.Errorf("sent path %q", p)
	}
}

func TestAttachSocketAnswers(t *testing.T) {
	l := lib(t)
	name := func(n string) int32 {
		for _, c := range []int32{-2146233494, -2146233479, -2146233467, -2146233468, -2147024891} {
			if com.HRESULT(c).Name() == n {
				return c
			}
		}
		t.Fatalf("no code %s", n)
		return 0
	}
	for _, tc := range []struct {
		id   uint8
		code string
		kind error
		text string
	}{
		{ServerOK, "CORPROF_E_PROFILER_ALREADY_ACTIVE", ErrRefused, "a profiler is already loaded"},
		{ServerError, "CORPROF_E_PROFILER_ALREADY_ACTIVE", ErrRefused, "a profiler is already loaded"},
		{ServerOK, "CORPROF_E_TIMEOUT_WAITING_FOR_CONCURRENT_GC", ErrTimeout, "background GC"},
		{ServerError, "CORDIAGIPC_E_UNKNOWN_COMMAND", ErrNotSupported, "does not know the AttachProfiler command"},
		{ServerError, "CORDIAGIPC_E_BAD_ENCODING", ErrRefused, "rejected the message"},
		{ServerError, "E_ACCESSDENIED", ErrRefused, "InitializeForAttach failed"},
	} {
		sock := server(t, answer(tc.id, name(tc.code)))
		err := AttachSocket(ctxFor(t, 10*time.Second), sock, AttachRequest{CLSID: testCLSID, ProfilerPath: l})
		code := com.HRESULT(name(tc.code))
		if !errors.Is(err, tc.kind) || !errors.Is(err, code) || !strings.Contains(err.Error(), tc.text) || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("%#x %s: %v, want %v and %q", tc.id, tc.code, err, tc.kind, tc.text)
		}
		var de *Error
		if !errors.As(err, &de) || de.Code != code || de.Socket != sock || de.Op != "attach" {
			t.Errorf("%s: %#v", tc.code, de)
		}
	}
}

func TestAttachSocketFailures(t *testing.T) {
	l := lib(t)
	req := AttachRequest{CLSID: testCLSID, ProfilerPath: l}

	// A server that never answers: the context's deadline ends the wait.
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	sock := server(t, func(c net.Conn) { <-hold })
	start := time.Now()
	err := AttachSocket(ctxFor(t, 300*time.Millisecond), sock, req)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "waiting for the runtime's answer") {
		t.Errorf("silent server: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("timed out only after %v", d)
	}

	// Cancelling the context interrupts the wait too.
	sock = server(t, func(c net.Conn) { <-hold })
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	if err := AttachSocket(ctx, sock, req); !errors.Is(err, ErrTimeout) {
		t.Errorf("cancelled: %v", err)
	}

	// A server that hangs up without answering.
	sock = server(t, func(c net.Conn) { ReadMessage(c) })
	err = AttachSocket(ctxFor(t, 10*time.Second), sock, req)
	if err == nil || errors.Is(err, ErrTimeout) || errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "reading the runtime's answer") {
		t.Errorf("hang-up: %v", err)
	}

	// Garbage instead of an answer.
	sock = server(t, func(c net.Conn) {
		ReadMessage(c)
		c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	})
	err = AttachSocket(ctxFor(t, 10*time.Second), sock, req)
	var fe *FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "bad magic") {
		t.Errorf("garbage: %v", err)
	}

	// A leftover socket nobody listens on.
	dir := t.TempDir()
	stale := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	err = AttachSocket(ctxFor(t, 10*time.Second), stale, req)
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "nobody listens") {
		t.Errorf("stale socket: %v", err)
	}

	// Problems found before connecting.
	for _, tc := range []struct {
		req  AttachRequest
		want string
	}{
		{AttachRequest{CLSID: testCLSID, ProfilerPath: filepath.Join(dir, "missing.so")}, "no such file"},
		{AttachRequest{CLSID: testCLSID, ProfilerPath: l, ClientData: make([]byte, 70000)}, "client data of 70000 bytes is too large"},
		{AttachRequest{CLSID: testCLSID}, "empty profiler path"},
	} {
		err := AttachSocket(ctxFor(t, 10*time.Second), stale, tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.req.ProfilerPath, err, tc.want)
		}
	}
	err = AttachSocket(ctxFor(t, 10*time.Second), stale, AttachRequest{CLSID: testCLSID, ProfilerPath: filepath.Join(dir, "missing.so")})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing library: %v, want fs.ErrNotExist", err)
	}
}

func TestAttachProfilerArguments(t *testing.T) {
	err := AttachProfiler(context.Background(), 1, "not-a-clsid", "/x.so", nil)
	if err == nil || !strings.Contains(err.Error(), `invalid GUID "not-a-clsid"`) {
		t.Errorf("bad CLSID: %v", err)
	}
	err = AttachProfiler(context.Background(), 1<<30, "{9F1C2B7A-4E3D-4A6B-8C5D-1E2F3A4B5C6D}", "/x.so", nil)
	if !errors.Is(err, ErrProcessNotFound) {
		t.Errorf("missing process: %v", err)
	}
}

// A refusal's message says what the code usually means; an attach that came
// too early says to try again.
func TestRefusalHint(t *testing.T) {
	for code, want := range map[HRESULT]string{
		HRESULT(-2146233509): "try again",               // CORPROF_E_NOT_YET_AVAILABLE
		HRESULT(-2146233494): "already loaded",          // CORPROF_E_PROFILER_ALREADY_ACTIVE
		HRESULT(-2147467259): "could not be loaded, or", // E_FAIL
	} {
		if got := refusalHint(code); !strings.Contains(got, want) {
			t.Errorf("refusalHint(%v) = %q, want it to contain %q", code, got, want)
		}
	}
}
