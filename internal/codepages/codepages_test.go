//go:build linux

package codepages

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// mapFile maps a file of n pages, page i filled with byte i+1, privately
// and readable and writable, and reads every page so that all are resident.
func mapFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	page := os.Getpagesize()
	b := make([]byte, n*page)
	for i := range b {
		b[i] = byte(i/page + 1)
	}
	path := filepath.Join(t.TempDir(), "lib.so")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := syscall.Mmap(int(f.Fd()), 0, len(b), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(m) })
	sum := 0
	for i := 0; i < len(m); i += page {
		sum += int(m[i])
	}
	if sum != n*(n+1)/2 {
		t.Fatalf("mapped file reads %d, want %d", sum, n*(n+1)/2)
	}
	return path, m
}

// present reports, per page of m, whether pagemap says it is resident.
func present(t *testing.T, m []byte) []bool {
	t.Helper()
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&m[0]))
	n := uintptr(len(m)) / page
	f, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skipf("pagemap: %v", err)
	}
	defer f.Close()
	buf := make([]byte, n*8)
	if _, err := f.ReadAt(buf, int64(start/page*8)); err != nil {
		t.Fatal(err)
	}
	out := make([]bool, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(buf[i*8:])&pmPresent != 0
	}
	return out
}

// A private read-only mapping of a file: every page that holds the file's
// bytes is dropped and comes back with them; the page written before the
// mapping was made read-only (as the dynamic loader does with relocated
// data) is kept, with what was written.
func TestReleaseKeepsWrittenPages(t *testing.T) {
	const n, written = 16, 5
	page := os.Getpagesize()
	path, m := mapFile(t, n)
	m[written*page+7] = 0xEE
	if err := syscall.Mprotect(m, syscall.PROT_READ); err != nil {
		t.Fatal(err)
	}
	for i, p := range present(t, m) {
		if !p {
			t.Fatalf("page %d not resident before Release", i)
		}
	}
	r, err := Release(uintptr(unsafe.Pointer(&m[0])))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.Path != path || r.Mappings != 1 {
		t.Errorf("Release looked at %d mappings of %q, want 1 of %q", r.Mappings, r.Path, path)
	}
	if r.Released != int64((n-1)*page) || r.Kept != int64(page) || r.Resident != int64(n*page) {
		t.Errorf("released %d, kept %d of %d resident bytes; want %d, %d of %d", r.Released, r.Kept, r.Resident, (n-1)*page, page, n*page)
	}
	for i, p := range present(t, m) {
		if p != (i == written) {
			t.Errorf("page %d resident=%v after Release", i, p)
		}
	}
	for i := 0; i < n; i++ {
		want := byte(i + 1)
		if got := m[i*page]; got != want {
			t.Errorf("page %d reads %d after Release, want %d", i, got, want)
		}
	}
	if got := m[written*page+7]; got != 0xEE {
		t.Errorf("the written byte reads %#x after Release, want 0xee", got)
	}
}

// A mapping that is still writable is never touched: a write could make a
// page anonymous between reading pagemap and dropping it.
func TestReleaseSkipsWritableMappings(t *testing.T) {
	_, m := mapFile(t, 4)
	_, err := Release(uintptr(unsafe.Pointer(&m[0])))
	if err == nil || !strings.Contains(err.Error(), "no read-only mapping") {
		t.Errorf("Release of a writable mapping: %v, want the no read-only mapping error", err)
	}
	for i, p := range present(t, m) {
		if !p {
			t.Errorf("page %d of a writable mapping was dropped", i)
		}
	}
}

// The test binary's own code: pages are given back, and the code runs on.
func TestReleaseOwnCode(t *testing.T) {
	r, err := Release(reflect.ValueOf(TestReleaseOwnCode).Pointer())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.Released <= 0 || r.Mappings < 1 {
		t.Errorf("released %d bytes of %d mappings of the test binary", r.Released, r.Mappings)
	}
	if _, err := Release(reflect.ValueOf(TestReleaseOwnCode).Pointer()); err != nil {
		t.Errorf("a second Release, with the code faulted back in: %v", err)
	}
}

// An address in no file's mapping (the heap) is an error.
func TestReleaseNotAFile(t *testing.T) {
	x := new([64]byte)
	if _, err := Release(uintptr(unsafe.Pointer(x))); err == nil {
		t.Error("Release of a heap address: no error")
	}
}
