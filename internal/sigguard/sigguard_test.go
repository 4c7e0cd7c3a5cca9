package sigguard

import (
	"syscall"
	"testing"
)

// The checks made before the Go runtime started see this test binary: glibc
// (Go's cgo on linux/amd64 here), and no other shared object carrying a Go
// runtime (the main program, the only Go here, is not counted).
func TestEnvironment(t *testing.T) {
	if !Glibc() {
		t.Errorf("Glibc() = false; this test binary runs on glibc")
	}
	if other := OtherGoRuntime(); other != "" {
		t.Errorf("OtherGoRuntime() = %q, want none", other)
	}
}

// This package's init replaced the Go runtime's _cgo_bindm (Go 1.21 and
// later have it).
func TestBindmHookInstalled(t *testing.T) {
	if BindmMissing() {
		t.Fatal("BindmMissing() = true: the Go runtime's _cgo_bindm hook was not found")
	}
}

// The constants come from the C library.
func TestSignalConstants(t *testing.T) {
	if got := SAOnStack(); got != 0x08000000 {
		t.Errorf("SAOnStack() = %#x, want 0x08000000 (linux)", got)
	}
	if got := SigRTMin(); got < 32 || got >= 64 || got == int(syscall.SIGSEGV) {
		t.Errorf("SigRTMin() = %d, want a real-time signal (glibc: 34)", got)
	}
}
