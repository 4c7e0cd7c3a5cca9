package diag

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
)

// These tests play the runtime's side of a reverse diagnostics port with
// a stand-in; reverse_integration_test.go uses a real runtime.

func TestAdvertiseEncoding(t *testing.T) {
	a := Advertise{Cookie: uuid.MustParse("01020304-0506-0708-090a-0b0c0d0e0f10"), PID: 0x1122334455667788, Reserved: 0xabcd}
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("ADVR_V1\x00" +
		"\x04\x03\x02\x01\x06\x05\x08\x07\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10" +
		"\x88\x77\x66\x55\x44\x33\x22\x11" +
		"\xcd\xab")
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded\n%x, want\n%x", b, want)
	}
	got, err := ParseAdvertise(want)
	if err != nil || got != a {
		t.Fatalf("ParseAdvertise = %+v, %v; want %+v", got, err, a)
	}
	for _, bad := range [][]byte{want[:33], append(append([]byte(nil), want...), 0), []byte("ADVR_V2\x00" + string(want[8:]))} {
		var fe *FormatError
		if _, err := ParseAdvertise(bad); !errors.As(err, &fe) {
			t.Errorf("ParseAdvertise(%x) = %v, want a FormatError", bad, err)
		}
	}
}

func TestStartupRequestEncoding(t *testing.T) {
	r := StartupRequest{CLSID: testCLSID, ProfilerPath: "/p"}
	b, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// CLSID 9F1C2B7A-4E3D-4A6B-8C5D-1E2F3A4B5C6D in COM layout, then 3
	// UTF-16 code units: '/', 'p', NUL.
	want := []byte("\x7a\x2b\x1c\x9f\x3d\x4e\x6b\x4a\x8c\x5d\x1e\x2f\x3a\x4b\x5c\x6d" +
		"\x03\x00\x00\x00/\x00p\x00\x00\x00")
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded\n%x, want\n%x", b, want)
	}
	var r2 StartupRequest
	if err := r2.UnmarshalBinary(b); err != nil || r2 != r {
		t.Fatalf("UnmarshalBinary = %+v, %v", r2, err)
	}
	if err := r2.UnmarshalBinary(append(b, 0)); err == nil {
		t.Error("trailing byte accepted")
	}
	for _, p := range []string{"", "a\x00b"} {
		if _, err := (StartupRequest{CLSID: testCLSID, ProfilerPath: p}).MarshalBinary(); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
}

func reverseListener(t *testing.T) *ReverseListener {
	t.Helper()
	dir, err := os.MkdirTemp("", "diagr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := ListenReverse(filepath.Join(dir, "port"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// fakeRuntime connects to path, advertises pid, and hands the connection
// to fn.
func fakeRuntime(t *testing.T, path string, pid uint64, fn func(c net.Conn)) {
	go func() {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		b, _ := Advertise{Cookie: testCLSID, PID: pid}.MarshalBinary()
		if _, err := c.Write(b); err != nil {
			return
		}
		fn(c)
	}()
}

func TestReverseSession(t *testing.T) {
	l := reverseListener(t)
	if want := "DOTNET_DiagnosticPorts=" + l.Path() + ",connect,suspend"; l.Env() != want {
		t.Errorf("Env() = %q, want %q", l.Env(), want)
	}
	lib := filepath.Join(t.TempDir(), "libp.so")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan Message, 2)
	serve := func(answerPayload []byte) func(net.Conn) {
		return func(c net.Conn) {
			m, err := ReadMessage(c)
			if err != nil {
				t.Error(err)
				return
			}
			got <- m
			b, _ := Message{CommandSet: CommandSetServer, CommandID: ServerOK, Payload: answerPayload}.Encode()
			c.Write(b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	fakeRuntime(t, l.Path(), 4242, serve([]byte{0, 0, 0, 0}))
	c, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.PID != 4242 || c.Advertise.Cookie != testCLSID {
		t.Errorf("advertise: pid %d cookie %v", c.PID, c.Advertise.Cookie)
	}
	if err := c.SetStartupProfiler(ctx, StartupRequest{CLSID: testCLSID, ProfilerPath: lib}); err != nil {
		t.Fatal(err)
	}
	m := <-got
	var r StartupRequest
	if m.CommandSet != CommandSetProfiler || m.CommandID != ProfilerStartup || r.UnmarshalBinary(m.Payload) != nil || r.ProfilerPath != lib || r.CLSID != testCLSID {
		t.Errorf("StartupProfiler sent as %+v (%+v)", m, r)
	}
	if err := c.ResumeRuntime(ctx); err == nil || !strings.Contains(err.Error(), "already carried") {
		t.Errorf("second command on one connection: %v", err)
	}

	// The answer to ResumeRuntime without a payload (as documented).
	fakeRuntime(t, l.Path(), 4242, serve(nil))
	c, err = l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResumeRuntime(ctx); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m.CommandSet != CommandSetProcess || m.CommandID != ProcessResumeRuntime || len(m.Payload) != 0 {
		t.Errorf("ResumeRuntime sent as %+v", m)
	}
}

func TestReverseErrors(t *testing.T) {
	if _, err := ListenReverse("/tmp/a,b"); err == nil {
		t.Error("a path with a comma accepted")
	}
	l := reverseListener(t)

	// Accept gives up with the context.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err := l.Accept(ctx)
	cancel()
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("Accept with nobody connecting: %v, want ErrTimeout", err)
	}
	// ... and leaves no deadline behind for an Accept without one.
	nodl, cancelNodl := context.WithCancel(context.Background())
	fakeRuntime(t, l.Path(), 9, func(c net.Conn) { ReadMessage(c) })
	if c, err := l.Accept(nodl); err != nil || c.PID != 9 {
		t.Errorf("Accept after a timed-out Accept: %v", err)
	} else {
		c.Close()
	}
	cancelNodl()

	// A peer that is not a runtime.
	go func() {
		c, err := net.Dial("unix", l.Path())
		if err == nil {
			c.Write([]byte(strings.Repeat("x", AdvertiseSize)))
			c.Close()
		}
	}()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var fe *FormatError
	if _, err := l.Accept(ctx); !errors.As(err, &fe) {
		t.Errorf("Accept of a non-runtime: %v, want a FormatError", err)
	}

	// A runtime that is not paused refuses StartupProfiler with
	// E_INVALIDARG; an old one does not know the command.
	lib := filepath.Join(t.TempDir(), "libp.so")
	os.WriteFile(lib, nil, 0o644)
	for _, tc := range []struct {
		code int32
		kind error
	}{{-2147024809, ErrRefused}, {-2146233467, ErrNotSupported}} {
		fakeRuntime(t, l.Path(), 7, func(c net.Conn) {
			ReadMessage(c)
			p := binary.LittleEndian.AppendUint32(nil, uint32(tc.code))
			b, _ := Message{CommandSet: CommandSetServer, CommandID: ServerError, Payload: p}.Encode()
			c.Write(b)
		})
		c, err := l.Accept(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = c.SetStartupProfiler(ctx, StartupRequest{CLSID: testCLSID, ProfilerPath: lib})
		if !errors.Is(err, tc.kind) || !errors.Is(err, HRESULT(tc.code)) {
			t.Errorf("answer %#x: %v, want %v carrying the code", uint32(tc.code), err, tc.kind)
		}
	}

	// A runtime that disappears before answering.
	fakeRuntime(t, l.Path(), 7, func(c net.Conn) { ReadMessage(c) })
	c, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResumeRuntime(ctx); err == nil {
		t.Error("ResumeRuntime with no answer succeeded")
	}

	// A library that does not exist is refused before anything is sent.
	if err := SetStartupProfiler(ctx, os.Getpid(), StartupRequest{CLSID: testCLSID, ProfilerPath: "/nonexistent/lib.so"}); err == nil {
		t.Error("SetStartupProfiler to a process without a socket succeeded")
	}
}

// A runtime's first connection can come before its start-up thread marks
// it paused; StartupProfiler is then refused with E_INVALIDARG.
// ReverseListener.SetStartupProfiler asks again on the same runtime's next
// connections, skips other runtimes', and returns the connection after
// the one that accepted.
func TestReverseStartupNotYetPaused(t *testing.T) {
	l := reverseListener(t)
	lib := filepath.Join(t.TempDir(), "libp.so")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	answer := func(c net.Conn, code int32) error {
		if _, err := ReadMessage(c); err != nil {
			return err
		}
		m := Message{CommandSet: CommandSetServer, CommandID: ServerOK, Payload: []byte{0, 0, 0, 0}}
		if code != 0 {
			m = Message{CommandSet: CommandSetServer, CommandID: ServerError, Payload: binary.LittleEndian.AppendUint32(nil, uint32(code))}
		}
		b, _ := m.Encode()
		_, err := c.Write(b)
		return err
	}
	other := uuid.MustParse("0f0e0d0c-0b0a-0908-0706-050403020100")
	// connect makes one connection as the runtime with the given cookie
	// and answers its command with code.
	connect := func(l *ReverseListener, cookie uuid.UUID, code int32) error {
		c, err := net.Dial("unix", l.Path())
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := Advertise{Cookie: cookie, PID: 99}.MarshalBinary()
		if _, err := c.Write(b); err != nil {
			return err
		}
		return answer(c, code)
	}
	const refusals = 3
	done := make(chan error, 1)
	go func() {
		// The runtime: three refusals, a stranger's connection in the
		// middle (closed by the listener unanswered), acceptance, then a
		// last connection that carries the test's ResumeRuntime.
		for i := 0; i < refusals; i++ {
			if err := connect(l, testCLSID, -2147024809); err != nil {
				done <- err
				return
			}
			if i == 1 {
				// The listener closes a stranger's connection unanswered.
				if err := connect(l, other, -2147024809); err == nil {
					done <- errors.New("a stranger's connection got a command")
					return
				}
			}
		}
		if err := connect(l, testCLSID, 0); err != nil {
			done <- err
			return
		}
		done <- connect(l, testCLSID, 0)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next, err := l.SetStartupProfiler(ctx, c, StartupRequest{CLSID: testCLSID, ProfilerPath: lib})
	if err != nil {
		t.Fatalf("SetStartupProfiler: %v", err)
	}
	if next.Advertise.Cookie != testCLSID {
		t.Errorf("next connection from %v, want the runtime's own", next.Advertise.Cookie)
	}
	if err := next.ResumeRuntime(ctx); err != nil {
		t.Fatalf("ResumeRuntime on the returned connection: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("stand-in runtime: %v", err)
	}

	// A runtime that keeps refusing (it was resumed by someone else):
	// the refusal is returned when the context ends, matching both
	// ErrRefused and ErrTimeout.
	l2 := reverseListener(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if connect(l2, testCLSID, -2147024809) != nil {
				return
			}
		}
	}()
	defer wg.Wait()
	defer close(stop)
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	c, err = l2.Accept(short)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l2.SetStartupProfiler(short, c, StartupRequest{CLSID: testCLSID, ProfilerPath: lib})
	if !errors.Is(err, ErrRefused) || !errors.Is(err, ErrTimeout) || !errors.Is(err, HRESULT(-2147024809)) {
		t.Errorf("a runtime that never pauses: %v, want ErrRefused and ErrTimeout with E_INVALIDARG", err)
	}

	// Any other answer is returned at once.
	l3 := reverseListener(t)
	go connect(l3, testCLSID, -2146233467)
	c, err = l3.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l3.SetStartupProfiler(ctx, c, StartupRequest{CLSID: testCLSID, ProfilerPath: lib}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("unknown command: %v, want ErrNotSupported", err)
	}
}

// TestReverseStartupRefusedThenSilent: the context ends while the runtime,
// which refused once (not paused yet), has not answered the next attempt.
// The error is still that refusal, matching ErrTimeout too (seen in CI under
// load: the deadline passed during an attempt, and the refusals before it
// were lost).
func TestReverseStartupRefusedThenSilent(t *testing.T) {
	l := reverseListener(t)
	lib := filepath.Join(t.TempDir(), "libp.so")
	if err := os.WriteFile(lib, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	conn := func(answer bool) {
		c, err := net.Dial("unix", l.Path())
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := Advertise{Cookie: testCLSID, PID: 99}.MarshalBinary()
		if _, err := c.Write(b); err != nil {
			return
		}
		if _, err := ReadMessage(c); err != nil {
			return
		}
		if !answer {
			<-release // the command arrived; no answer
			return
		}
		m := Message{CommandSet: CommandSetServer, CommandID: ServerError, Payload: binary.LittleEndian.AppendUint32(nil, uint32(eInvalidArgU))}
		b, _ = m.Encode()
		c.Write(b)
	}
	go func() {
		conn(true)
		conn(false)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := l.Accept(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.SetStartupProfiler(ctx, c, StartupRequest{CLSID: testCLSID, ProfilerPath: lib})
	if !errors.Is(err, ErrRefused) || !errors.Is(err, ErrTimeout) || !errors.Is(err, HRESULT(eInvalidArg)) {
		t.Errorf("refused, then no answer until the deadline: %v, want ErrRefused and ErrTimeout with E_INVALIDARG", err)
	}
}

const eInvalidArgU = 0x80070057
