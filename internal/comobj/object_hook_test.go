//go:build clrprof_testhooks

package comobj

import (
	"testing"
	"unsafe"

	"github.com/clrprof/clrprof/internal/sigguard"
	"github.com/google/uuid"
)

var testCLSID = uuid.MustParse("0B5A41D3-5E59-4F55-9A51-2C3E4D5F6A7B")

// recordingHost answers this package's exports as package profiler's
// dispatcher would, recording what reached it.
type recordingHost struct {
	nopCallbacks
	handle   uintptr
	jits     [][3]uintptr // handle, function ID, fIsSafeToBlock
	blocked  int          // SIGRTMIN blocked during the last JIT callback
	released []uintptr
}

func (r *recordingHost) MatchCLSID(c uuid.UUID, given bool) bool { return given && c == testCLSID }
func (r *recordingHost) NewObject() uintptr                      { return r.handle }
func (r *recordingHost) ObjectReleased(h uintptr)                { r.released = append(r.released, h) }
func (r *recordingHost) SignalAudit(unsafe.Pointer, int, int)    {}
func (r *recordingHost) JITCompilationStarted(h uintptr, fid uintptr, safe int32) int32 {
	r.jits = append(r.jits, [3]uintptr{h, fid, uintptr(safe)})
	r.blocked = sigguard.SigBlocked(sigguard.SigRTMin())
	return 0x1234 // a success HRESULT the C passes on as it is
}

func setHost(t *testing.T, h Host) {
	t.Helper()
	SetHost(h)
	SetImpl(slotJITCompilationStarted, false)
	t.Cleanup(func() {
		SetHost(noHost{})
		SetImpl(slotJITCompilationStarted, false)
	})
}

const (
	classNotAvailable = int32(-0x7ffbfeef) // CLASS_E_CLASSNOTAVAILABLE 0x80040111
	noAggregation     = int32(-0x7ffbfef0) // CLASS_E_NOAGGREGATION 0x80040110
)

// Without a host (a binary without package profiler), the library offers
// no class.
func TestNoHost(t *testing.T) {
	setHost(t, noHost{})
	if obj, hr := TestCreate(testCLSID, 10, false); hr != classNotAvailable || obj != nil {
		t.Fatalf("TestCreate without a host = %p, %#x; want nil, CLASS_E_CLASSNOTAVAILABLE", obj, uint32(hr))
	}
}

// A callback reaches the host only when its slot is marked implemented,
// with the object's handle and the runtime's arguments, under the signal
// guard; its HRESULT goes back to the runtime; the last Release hands the
// handle back.
func TestObjectCallsHost(t *testing.T) {
	r := &recordingHost{handle: 42}
	setHost(t, r)
	if _, hr := TestCreate(uuid.New(), 10, false); hr != classNotAvailable {
		t.Errorf("TestCreate for another class = %#x, want CLASS_E_CLASSNOTAVAILABLE", uint32(hr))
	}
	if _, hr := TestCreate(testCLSID, 10, true); hr != noAggregation {
		t.Errorf("TestCreate with an outer object = %#x, want CLASS_E_NOAGGREGATION", uint32(hr))
	}
	obj, hr := TestCreate(testCLSID, 10, false)
	if hr != 0 || obj == nil {
		t.Fatalf("TestCreate = %p, %#x", obj, uint32(hr))
	}
	if h := TestHandle(obj); h != 42 {
		t.Errorf("object handle %d, want 42", h)
	}
	if hr := TestJITStarted(obj, 7); hr != 0 || len(r.jits) != 0 {
		t.Errorf("unimplemented callback: hr %#x, %d calls reached Go; want S_OK, none", uint32(hr), len(r.jits))
	}
	SetImpl(slotJITCompilationStarted, true)
	if !Impl(slotJITCompilationStarted) {
		t.Error("Impl after SetImpl(true) is false")
	}
	if hr := TestJITStarted(obj, 7); hr != 0x1234 {
		t.Errorf("implemented callback: hr %#x, want the host's 0x1234", uint32(hr))
	}
	if len(r.jits) != 1 || r.jits[0] != [3]uintptr{42, 7, 1} {
		t.Errorf("host saw %v, want one call (handle 42, function 7, safe to block 1)", r.jits)
	}
	if r.blocked != 1 {
		t.Errorf("SIGRTMIN blocked in the callback: %d, want 1 (the guard)", r.blocked)
	}
	if n := TestRelease(obj); n != 0 {
		t.Errorf("last Release = %d", n)
	}
	if len(r.released) != 1 || r.released[0] != 42 {
		t.Errorf("released %v, want [42]", r.released)
	}
}
